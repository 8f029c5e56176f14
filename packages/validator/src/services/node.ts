import { toHex } from '@tensormine/protocol';
import { routeHandlers } from '../http/handlers.js';
import type { Cluster } from './cluster.js';
import type { HexchainService } from './types.js';

/** GET /health, GET /status, GET /network/peers. */
export function nodeHandlers(deps: { softwareVersion: string; hexchain: HexchainService; cluster: Cluster }) {
  return routeHandlers({
    async getHealth(_request, ctx) {
      return {
        status: 'ok' as const,
        service: 'tensormine-validator',
        version: ctx.config.hexchain ? '4.1' : '4.0',
        protocols: ctx.config.hexchain ? ['4.0', '4.1'] : ['4.0'],
        software_version: deps.softwareVersion,
        node_id: ctx.nodeId,
        node_pubkey: toHex(ctx.identity.publicKey),
        uptime_s: Math.floor((ctx.now() - ctx.startedAt) / 1000),
      };
    },

    async getStatus(_request, ctx) {
      const c = await ctx.metrics.snapshot();
      const net = await deps.cluster.view();
      const hex = deps.hexchain.info();
      return {
        node_id: ctx.nodeId,
        version: ctx.config.hexchain ? '4.1' : '4.0',
        uptime_s: Math.floor((ctx.now() - ctx.startedAt) / 1000),
        difficulty: ctx.runtime.difficulty,
        max_tensor_dim: ctx.runtime.maxTensorDim,
        peer_network_mode: net.mode,
        pool_strategy: ctx.runtime.poolStrategy,
        stats: {
          total_challenges_issued: c.challengesIssued,
          total_proofs_valid: c.proofsValid,
          total_proofs_rejected: c.proofsRejected,
          total_blocks_accepted: c.blocksAccepted,
        },
        engine: {
          tasks_processed: c.proofsValid + c.proofsRejected + c.blocksAccepted + c.blocksRejected,
          successful: c.proofsValid + c.blocksAccepted,
          failed: c.proofsRejected + c.blocksRejected,
        },
        network: { peers: net.peers, total_nodes: net.total_nodes, synced: net.synced },
        hexchain: {
          enabled: ctx.config.hexchain,
          difficulty: ctx.config.hexchain ? Number(hex.difficulty) : 0,
          occupied: hex.occupied,
        },
      };
    },

    async getPeers(_request, ctx) {
      const net = await deps.cluster.view();
      return {
        peers: net.peers,
        total_nodes: net.total_nodes,
        synced: net.synced,
        mode: net.mode,
        node_id: ctx.nodeId,
      };
    },
  });
}
