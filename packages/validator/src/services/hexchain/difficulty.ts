import {
  difficultyAfterBlock,
  parseHexDifficulty,
  RETARGET_WINDOW_BLOCKS,
  shouldRetarget,
} from '@tensormine/protocol';
import type { ChainHead, DifficultyWrite, StorageTx } from '../../store/types.js';
import type { LatticeState } from './lattice-state.js';

/**
 * The difficulty this node holds in memory, and the number of the write it came from.
 * Difficulty writes (retargets, admin changes) are numbered in the chain head inside their
 * transaction (`ChainHead.difficultySeq`), so that the in-memory value follows the commit order
 * across nodes.
 */
export class LiveDifficulty {
  #value: bigint;
  #appliedSeq: number;

  /**
   * @param configured the difficulty of the configuration, live until the first stored write
   * @param state its version is bumped on every change, as the status shows the difficulty
   */
  constructor(
    readonly configured: bigint,
    private readonly state: LatticeState,
    head: ChainHead,
  ) {
    this.#value = this.of(head);
    this.#appliedSeq = head.difficultySeq;
  }

  get value(): bigint {
    return this.#value;
  }

  /** Applies a numbered difficulty; true when it was newer than the one held. */
  apply(seq: number, value: bigint): boolean {
    if (seq <= this.#appliedSeq) return false;
    this.#appliedSeq = seq;
    const changed = value !== this.#value;
    this.#value = value;
    this.state.version++;
    return changed;
  }

  /** The number of the write the value held came from. */
  get appliedSeq(): number {
    return this.#appliedSeq;
  }

  /** The live difficulty of a chain head (the configured one until the first write). */
  of(head: ChainHead): bigint {
    return head.difficulty === null ? this.configured : parseHexDifficulty(head.difficulty);
  }
}

/** What the retarget rule did at an accepted block's height. */
export interface RetargetOutcome {
  /** The difficulty before the block. */
  readonly old: bigint;
  /** The difficulty after it (old unless the height retargets). */
  readonly next: bigint;
  /** The write, when the height retargets (its number is ChainHead.difficultySeq after it). */
  readonly write: DifficultyWrite | undefined;
}

/**
 * The retarget rule (protocol 4.6) at the height of a block just appended, in the block's own
 * transaction (which holds the chain head) so that a crash cannot keep the block and lose the
 * new difficulty.
 */
export async function retargetIn(
  tx: StorageTx,
  live: LiveDifficulty,
  at: {
    /** The head after the block (its height is the block's). */
    readonly head: ChainHead;
    readonly blockTimeMs: number;
    /** t[0]: the window start of the first retarget. */
    readonly genesisTimeMs: bigint;
    readonly intervalMs: bigint;
  },
): Promise<RetargetOutcome> {
  const old = live.of(at.head);
  const height = at.head.height;
  if (!shouldRetarget(height, RETARGET_WINDOW_BLOCKS)) return { old, next: old, write: undefined };
  const start = height - RETARGET_WINDOW_BLOCKS;
  const startBlock = start === 0 ? undefined : await tx.blocks.byHeight(start);
  if (start !== 0 && startBlock === undefined) {
    throw new Error(`hexchain: block at height ${start} is missing; cannot retarget`);
  }
  const next = retargetValue(old, {
    height,
    blockTimeMs: at.blockTimeMs,
    windowStartTimeMs: startBlock === undefined ? at.genesisTimeMs : BigInt(startBlock.timestampMs),
    intervalMs: at.intervalMs,
  });
  const { previous, head } = await tx.blocks.setDifficulty(next, { kind: 'retarget', atMs: at.blockTimeMs });
  return {
    old,
    next,
    write: { seq: head.difficultySeq, height, kind: 'retarget', previous, value: next, atMs: at.blockTimeMs },
  };
}

/** The difficulty after the block at a retarget height (protocol 4.6). */
function retargetValue(
  old: bigint,
  at: {
    readonly height: number;
    readonly blockTimeMs: number;
    readonly windowStartTimeMs: bigint;
    readonly intervalMs: bigint;
  },
): bigint {
  return difficultyAfterBlock({
    difficulty: old,
    height: at.height,
    blockTimeMs: BigInt(at.blockTimeMs),
    windowStartTimeMs: at.windowStartTimeMs,
    windowBlocks: RETARGET_WINDOW_BLOCKS,
    intervalMs: at.intervalMs,
  });
}

/** The next retarget height above a height, and the height its window starts at. */
export function nextRetarget(height: number): { readonly height: number; readonly windowStart: number } {
  const next = (Math.floor(height / RETARGET_WINDOW_BLOCKS) + 1) * RETARGET_WINDOW_BLOCKS;
  return { height: next, windowStart: next - RETARGET_WINDOW_BLOCKS };
}

/**
 * The retarget write a block makes should it land on `at.height` (a retarget height) with the
 * committed `head`'s difficulty and write count still the live ones (`blocks.appendLast`
 * checks them): computed before the block's transaction takes the head.
 */
export function plannedRetarget(
  live: LiveDifficulty,
  head: ChainHead,
  at: {
    readonly height: number;
    readonly blockTimeMs: number;
    readonly windowStartTimeMs: bigint;
    readonly intervalMs: bigint;
  },
): DifficultyWrite {
  return {
    seq: head.difficultySeq + 1,
    height: at.height,
    kind: 'retarget',
    previous: head.difficulty,
    value: retargetValue(live.of(head), at),
    atMs: at.blockTimeMs,
  };
}
