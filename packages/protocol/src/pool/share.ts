import { MIN_HEX_DIFFICULTY, targetFromDifficulty } from '../hexchain/target.js';

/**
 * Pool shares (docs/protocol.md section 4.13). A share is a block header of a pool member whose
 * pow hash meets the member's share target, an easier target than the block's. Its weight in
 * the PPLNS window is its share difficulty: the expected number of hashes behind it.
 */

/** The smallest share difficulty: the smallest hexchain difficulty, 16. */
export const MIN_SHARE_DIFFICULTY = MIN_HEX_DIFFICULTY;

/** A new member's first share difficulty is the block difficulty divided by this (then vardiff). */
export const INITIAL_SHARE_DIVISOR = 256n;

/**
 * The bounds of a member's share difficulty under block difficulty D: [16, D]. A share
 * difficulty above D would make shares rarer than blocks; a block is always a share.
 */
export function shareDifficultyBounds(blockDifficulty: bigint): { min: bigint; max: bigint } {
  const max = blockDifficulty < MIN_SHARE_DIFFICULTY ? MIN_SHARE_DIFFICULTY : blockDifficulty;
  return { min: MIN_SHARE_DIFFICULTY, max };
}

/** `value` clamped to the share difficulty bounds of block difficulty D. */
export function clampShareDifficulty(value: bigint, blockDifficulty: bigint): bigint {
  const { min, max } = shareDifficultyBounds(blockDifficulty);
  return value < min ? min : value > max ? max : value;
}

/** The share difficulty a member starts with: D / 256, inside the bounds. */
export function initialShareDifficulty(blockDifficulty: bigint): bigint {
  return clampShareDifficulty(blockDifficulty / INITIAL_SHARE_DIVISOR, blockDifficulty);
}

/** The share target: floor((2^256 - 1) / share difficulty), like a block target. */
export function shareTargetFromDifficulty(shareDifficulty: bigint): bigint {
  return targetFromDifficulty(shareDifficulty);
}
