import {
  difficultyAfterBlock,
  parseHexDifficulty,
  RETARGET_WINDOW_BLOCKS,
  shouldRetarget,
} from '@tensormine/protocol';
import type { StorageTx } from '../../store/types.js';
import type { LatticeState } from './lattice-state.js';

/** Meta key of the live difficulty (decimal). Absent until a retarget or an admin change. */
export const HEX_DIFFICULTY_META_KEY = 'hexchain.difficulty';

/**
 * Counter numbering the difficulty writes (retargets, admin changes), across every node sharing
 * the database: a node applies a difficulty read or committed only if its number is newer than
 * the one it holds, so that it follows the commit order whatever order it learns them in.
 */
export const HEX_DIFFICULTY_WRITES_COUNTER = 'hexchain_difficulty_writes';

/**
 * The difficulty this node holds in memory, and the number of the write it came from.
 * Difficulty writes (retargets, admin changes) are numbered inside their transaction by a
 * shared counter, so that the in-memory value follows the commit order across nodes.
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
    stored: string | undefined,
    storedSeq: number,
  ) {
    this.#value = this.fromStored(stored);
    this.#appliedSeq = storedSeq;
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

  /** The difficulty a stored meta value stands for (the configured one when absent). */
  fromStored(value: string | undefined): bigint {
    return value === undefined ? this.configured : parseStoredDifficulty(value);
  }

  /** The difficulty committed as seen from `tx`. */
  async committedIn(tx: StorageTx): Promise<bigint> {
    return this.fromStored(await tx.meta.get(HEX_DIFFICULTY_META_KEY));
  }
}

/** Numbers a difficulty write inside its transaction (see HEX_DIFFICULTY_WRITES_COUNTER). */
export async function numberDifficultyWrite(tx: StorageTx): Promise<number> {
  await tx.counters.add(HEX_DIFFICULTY_WRITES_COUNTER, 1);
  return tx.counters.get(HEX_DIFFICULTY_WRITES_COUNTER);
}

/** What the retarget rule did at an accepted block's height. */
export interface RetargetOutcome {
  /** The difficulty before the block. */
  readonly old: bigint;
  /** The difficulty after it (old unless the height retargets). */
  readonly next: bigint;
  /** The number of the difficulty write (0: the height does not retarget, nothing written). */
  readonly seq: number;
}

/**
 * The retarget rule (protocol 4.6) at the height of a block just inserted, in the block's own
 * transaction so that a crash cannot keep the block and lose the new difficulty.
 */
export async function retargetIn(
  tx: StorageTx,
  live: LiveDifficulty,
  at: {
    readonly height: number;
    readonly blockTimeMs: number;
    /** t[0]: the window start of the first retarget. */
    readonly genesisTimeMs: bigint;
    readonly intervalMs: bigint;
  },
): Promise<RetargetOutcome> {
  const old = await live.committedIn(tx);
  if (!shouldRetarget(at.height, RETARGET_WINDOW_BLOCKS)) return { old, next: old, seq: 0 };
  const start = at.height - RETARGET_WINDOW_BLOCKS;
  const startBlock = start === 0 ? undefined : await tx.blocks.byHeight(start);
  if (start !== 0 && startBlock === undefined) {
    throw new Error(`hexchain: block at height ${start} is missing; cannot retarget`);
  }
  const next = difficultyAfterBlock({
    difficulty: old,
    height: at.height,
    blockTimeMs: BigInt(at.blockTimeMs),
    windowStartTimeMs: startBlock === undefined ? at.genesisTimeMs : BigInt(startBlock.timestampMs),
    windowBlocks: RETARGET_WINDOW_BLOCKS,
    intervalMs: at.intervalMs,
  });
  await tx.meta.set(HEX_DIFFICULTY_META_KEY, next.toString());
  return { old, next, seq: await numberDifficultyWrite(tx) };
}

function parseStoredDifficulty(value: string): bigint {
  if (!/^[0-9]{1,16}$/.test(value)) {
    throw new Error(
      `hexchain: stored ${HEX_DIFFICULTY_META_KEY} is not a decimal integer: ${JSON.stringify(value)}`,
    );
  }
  return parseHexDifficulty(BigInt(value));
}
