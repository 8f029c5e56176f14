import { toHex } from '@tensormine/protocol';
import { routeHandlers } from '../http/handlers.js';
import { COUNTERS } from './metrics.js';
import type { HexchainService } from './types.js';

/** GET /health, GET /status, GET /network/peers. */
export function nodeHandlers(deps: { softwareVersion: string; hexchain: HexchainService }) {
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
      const c = await ctx.storage.read(async (tx) => ({
        issued: await tx.counters.get(COUNTERS.challengesIssued),
        valid: await tx.counters.get(COUNTERS.proofsValid),
        rejected: await tx.counters.get(COUNTERS.proofsRejected),
        blocks: await tx.counters.get(COUNTERS.blocksAccepted),
        blocksRejected: await tx.counters.get(COUNTERS.blocksRejected),
      }));
      const hex = deps.hexchain.info();
      return {
        node_id: ctx.nodeId,
        version: ctx.config.hexchain ? '4.1' : '4.0',
        uptime_s: Math.floor((ctx.now() - ctx.startedAt) / 1000),
        difficulty: ctx.runtime.difficulty,
        max_tensor_dim: ctx.runtime.maxTensorDim,
        peer_network_mode: 'local_only' as const,
        pool_strategy: ctx.runtime.poolStrategy,
        stats: {
          total_challenges_issued: c.issued,
          total_proofs_valid: c.valid,
          total_proofs_rejected: c.rejected,
          total_blocks_accepted: c.blocks,
        },
        engine: {
          tasks_processed: c.valid + c.rejected + c.blocks + c.blocksRejected,
          successful: c.valid + c.blocks,
          failed: c.rejected + c.blocksRejected,
        },
        network: { peers: [], total_nodes: 1, synced: true },
        hexchain: {
          enabled: ctx.config.hexchain,
          difficulty: ctx.config.hexchain ? Number(hex.difficulty) : 0,
          occupied: hex.occupied,
        },
      };
    },

    async getPeers() {
      return { peers: [], total_nodes: 1, synced: true, mode: 'local_only' as const };
    },
  });
}
