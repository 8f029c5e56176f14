import { describe } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { MAX_HEX_DIFFICULTY, MIN_HEX_DIFFICULTY, parseHexDifficulty } from './target.js';

/** The difficulty is retargeted after every RETARGET_WINDOW_BLOCKS blocks. */
export const RETARGET_WINDOW_BLOCKS = 12;

/** The documented default block interval the retarget steers toward: 10 s. */
export const BLOCK_INTERVAL_MS_DEFAULT = 10_000n;

/**
 * The difficulty after a retarget window:
 * expected = windowBlocks * intervalMs; actual = max(actualSpanMs, 1);
 * next = floor(old * expected / actual), clamped to [max(floor(old / 4), 16), old * 4], then to
 * [MIN_HEX_DIFFICULTY, MAX_HEX_DIFFICULTY]. Blocks that came faster than the interval raise the
 * difficulty, slower ones lower it, by at most a factor of 4 per window. Integer arithmetic only.
 * @param actualSpanMs acceptance time of the window's last block minus that of the block
 *   `windowBlocks` earlier (genesis counts as block 0); 0 or negative counts as 1.
 * @throws ProtocolError `invalid_difficulty` for an old difficulty out of range, `validation_failed`
 *   for a window that is not a positive integer or an interval that is not positive.
 */
export function retarget(
  oldDifficulty: bigint,
  actualSpanMs: bigint,
  windowBlocks: number,
  intervalMs: bigint,
): bigint {
  const old = parseHexDifficulty(oldDifficulty);
  if (!Number.isSafeInteger(windowBlocks) || windowBlocks < 1) {
    throw new ProtocolError(
      'validation_failed',
      `window: expected a positive integer number of blocks, got ${describe(windowBlocks)}`,
    );
  }
  if (typeof intervalMs !== 'bigint' || intervalMs < 1n) {
    throw new ProtocolError(
      'validation_failed',
      `interval: expected a positive bigint of milliseconds, got ${describe(intervalMs)}`,
    );
  }
  if (typeof actualSpanMs !== 'bigint') {
    throw new ProtocolError(
      'validation_failed',
      `actual span: expected a bigint of milliseconds, got ${describe(actualSpanMs)}`,
    );
  }
  const expected = BigInt(windowBlocks) * intervalMs;
  const actual = actualSpanMs > 1n ? actualSpanMs : 1n;
  let next = (old * expected) / actual;
  const lower = old / 4n > MIN_HEX_DIFFICULTY ? old / 4n : MIN_HEX_DIFFICULTY;
  const upper = old * 4n;
  if (next < lower) next = lower;
  if (next > upper) next = upper;
  if (next < MIN_HEX_DIFFICULTY) next = MIN_HEX_DIFFICULTY;
  if (next > MAX_HEX_DIFFICULTY) next = MAX_HEX_DIFFICULTY;
  return next;
}

/**
 * True when the difficulty is retargeted after the block at `height` (the number of non-genesis
 * blocks once it is accepted): height is a positive multiple of the window.
 */
export function shouldRetarget(height: number, windowBlocks: number = RETARGET_WINDOW_BLOCKS): boolean {
  return Number.isSafeInteger(height) && height > 0 && height % windowBlocks === 0;
}

/** Input of `difficultyAfterBlock`. Times are acceptance times in milliseconds. */
export interface DifficultyAfterBlockInput {
  /** The difficulty in force when the block was accepted. */
  readonly difficulty: bigint;
  /** The height once the block is accepted (number of non-genesis blocks). */
  readonly height: number;
  /** Acceptance time of this block (block `height`). */
  readonly blockTimeMs: bigint;
  /** Acceptance time of block `height - windowBlocks`; for block 0 the genesis time. Read only when retargeting. */
  readonly windowStartTimeMs: bigint;
  readonly windowBlocks?: number;
  readonly intervalMs?: bigint;
}

/**
 * The difficulty for challenges issued after a block is accepted: `retarget(...)` when
 * `shouldRetarget(height)`, otherwise unchanged. Challenges already issued keep their target.
 */
export function difficultyAfterBlock(input: DifficultyAfterBlockInput): bigint {
  const windowBlocks = input.windowBlocks ?? RETARGET_WINDOW_BLOCKS;
  if (!shouldRetarget(input.height, windowBlocks)) return parseHexDifficulty(input.difficulty);
  return retarget(
    input.difficulty,
    input.blockTimeMs - input.windowStartTimeMs,
    windowBlocks,
    input.intervalMs ?? BLOCK_INTERVAL_MS_DEFAULT,
  );
}
