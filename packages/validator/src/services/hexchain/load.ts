import { nowSeconds, type ValidatorContext } from '../../context.js';
import { LiveDifficulty } from './difficulty.js';
import { LatticeState, parseSnapshot } from './lattice-state.js';

/** Meta key of the genesis time t[0] in Unix ms: the first start of this database. */
export const HEX_GENESIS_TIME_META_KEY = 'hexchain.genesis_time_ms';

/** A node writes a snapshot of its lattice state every this many blocks (and keeps SNAPSHOTS_KEPT). */
export const SNAPSHOT_EVERY = 1_000;
export const SNAPSHOTS_KEPT = 2;

/**
 * Blocks read per query while replaying the blocks above the snapshot: small pages, so that the
 * records read stay a small, short-lived part of the heap (the RSS after start).
 */
const REPLAY_BATCH = 1_000;

/** The hexchain as the storage holds it at start. */
export interface LoadedHexchain {
  /** The lattice state at the committed head, and the open challenges. */
  readonly state: LatticeState;
  readonly difficulty: LiveDifficulty;
  /** t[0], the window start of the first retarget (written at the first start). */
  readonly genesisTimeMs: bigint;
  /** The height of the snapshot the start continued from (0: none, every block replayed). */
  readonly snapshotHeight: number;
}

/**
 * Start-up: the newest snapshot of the lattice state (lattice_snapshots), the blocks above it
 * up to the committed head replayed, the open challenges and the live difficulty; writes the
 * genesis time at the first start of a database. The cost does not grow with the blocks: at
 * most SNAPSHOT_EVERY blocks are replayed (all of them once, on a database without a snapshot).
 */
export async function loadHexchain(ctx: ValidatorContext): Promise<LoadedHexchain> {
  const { head, stored, genesisTimeMs, openExpiries } = await ctx.storage.transaction(async (tx) => {
    let genesis = await tx.meta.get(HEX_GENESIS_TIME_META_KEY);
    if (genesis === undefined) {
      genesis = String(ctx.now());
      await tx.meta.set(HEX_GENESIS_TIME_META_KEY, genesis);
    }
    const head = await tx.blocks.head();
    return {
      head,
      stored: await tx.blocks.latestSnapshot(head.height),
      genesisTimeMs: BigInt(genesis),
      openExpiries: await tx.hexChallenges.openExpiries(nowSeconds(ctx)),
    };
  });
  let state: LatticeState;
  try {
    state = new LatticeState(stored === undefined ? undefined : parseSnapshot(stored.height, stored.state));
  } catch (error) {
    ctx.log.warn({ err: error }, 'hexchain: the lattice snapshot is unusable; replaying every block');
    state = new LatticeState();
  }
  const snapshotHeight = state.appliedHeight;
  // Up to the head read above: the difficulty below is the head's, and the blocks committed
  // since are applied by the catch-up, in the chain's order with the difficulty writes.
  while (state.appliedHeight < head.height) {
    const after = state.appliedHeight;
    const blocks = await ctx.storage.read((tx) => tx.blocks.list(after, REPLAY_BATCH));
    for (const block of blocks) if (block.height <= head.height) state.add(block);
    if (blocks.length < REPLAY_BATCH) break;
  }
  const difficulty = new LiveDifficulty(ctx.config.hexDifficulty, state, head);
  for (const expiresAt of openExpiries) state.addOpenChallenge(expiresAt);
  return { state, difficulty, genesisTimeMs, snapshotHeight };
}
