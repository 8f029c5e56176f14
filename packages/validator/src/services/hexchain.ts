import { SseHub, type SseHubOptions } from '@tensormine/protocol';
import type { ValidatorContext } from '../context.js';
import { challengeHandlers } from './hexchain/challenges.js';
import { eventEpoch, eventHandlers } from './hexchain/events.js';
import { loadHexchain, SNAPSHOT_EVERY } from './hexchain/load.js';
import { latticeReadHandlers } from './hexchain/reads.js';
import { submitHandlers } from './hexchain/submit.js';
import { ClusterSync } from './hexchain/sync.js';
import type { HexchainHooks, HexchainService } from './types.js';

export { HEX_GENESIS_TIME_META_KEY } from './hexchain/load.js';
export { LATTICE_DEFAULT_LIMIT } from './hexchain/reads.js';
export { HEX_BLOCK_REWARD, HEX_REWARD_TOKEN } from './hexchain/submit.js';
export { HEXCHAIN_CHANNEL } from './hexchain/sync.js';

/**
 * The v4.1 hexchain service (docs/protocol.md section 4, docs/validator.md "The v4.1 hexchain endpoints"):
 * issues lattice challenges, verifies and stores blocks (the first valid block at a coordinate
 * wins), retargets the difficulty every RETARGET_WINDOW_BLOCKS blocks and serves the lattice.
 *
 * The storage is the source of truth; the in-memory `LatticeState` mirrors the committed blocks
 * and open challenges and changes only after a transaction has committed: the status and the
 * lattice reads are served from it. Accepted blocks, retargets and difficulty changes are
 * published, after their commit, on the `events` hub (GET /api/hexchain/events).
 *
 * Its parts, one job each, in hexchain/: load.ts (start-up), difficulty.ts (the live
 * difficulty and the retarget rule), sync.ts (following the other nodes of a cluster, admin
 * difficulty changes), challenges.ts, submit.ts (acceptance), reads.ts (status, lattice,
 * block), events.ts (the event stream), lattice-state.ts and wire.ts.
 */

/** What createHexchainService takes beside the context. */
export interface HexchainServiceOptions {
  /** GET /api/hexchain/events: replay ring, heartbeat and per-reader buffer (tests shorten them). */
  readonly events?: SseHubOptions;
  /** A lattice snapshot every this many blocks applied (default SNAPSHOT_EVERY). */
  readonly snapshotEvery?: number;
  /**
   * Lets the pool (services/pool/) add share terms to a member's challenge and pay a member's
   * block by PPLNS, each inside the transaction of the challenge or the block.
   */
  readonly hooks?: HexchainHooks;
  /**
   * Several nodes share the database: the open-challenge count of the status comes from the
   * database (cached 1 s) instead of this node's own challenges.
   */
  readonly cluster?: boolean;
}

/** Creates the hexchain service: loads the stored blocks into a lattice and the live difficulty. */
export async function createHexchainService(
  ctx: ValidatorContext,
  options: HexchainServiceOptions = {},
): Promise<HexchainService> {
  const hooks = options.hooks ?? {};
  const cluster = options.cluster === true;
  const { state, difficulty, genesisTimeMs, snapshotHeight } = await loadHexchain(ctx);
  // Event ids continue the chain's version, the same on every node (hexchain/events.ts).
  const events = new SseHub({
    ...options.events,
    epoch: eventEpoch(genesisTimeMs),
    startSeq: state.appliedHeight + difficulty.appliedSeq,
  });
  const sync = new ClusterSync(ctx, state, difficulty, events, {
    snapshotHeight,
    snapshotEvery: options.snapshotEvery ?? SNAPSHOT_EVERY,
  });

  const handlers = {
    ...challengeHandlers({ ctx, state, difficulty, sync, hooks, cluster }),
    ...submitHandlers({ ctx, state, difficulty, sync, hooks, genesisTimeMs, cluster }),
    ...latticeReadHandlers({ ctx, state, difficulty, cluster }),
    ...eventHandlers(events, () => sync.catchUp()),
  };
  const stopListening = await sync.listen();

  return {
    handlers,
    events,
    info: () => ({ difficulty: difficulty.value, occupied: state.lattice.size }),
    async isOccupied(coord) {
      const known = state.occupancy(coord);
      if (known !== 'unknown') return known === 'occupied';
      return (await ctx.storage.read((tx) => tx.blocks.get(coord))) !== undefined;
    },
    setDifficulty: (value) => sync.setDifficulty(value),
    catchUp: () => sync.catchUp(),
    appliedHeight: () => state.appliedHeight,
    async close() {
      events.close();
      await stopListening();
    },
  };
}
