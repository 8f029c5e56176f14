import { MIN_HEX_DIFFICULTY, targetFromDifficulty } from '../hexchain/target.js';

/**
 * Pool shares (docs/protocol.md section 4.13). A share is a block header of a pool member whose
 * pow hash meets the member's share target, an easier target than the block's. Its weight in
 * the PPLNS window is its share difficulty: the expected number of hashes behind it.
 */

/** The smallest share difficulty: the smallest hexchain difficulty, 16. */
export const MIN_SHARE_DIFFICULTY = MIN_HEX_DIFFICULTY;

/**
 * The hash rate a new member is assumed to have, by its registered device type, to choose its
 * first share difficulty (then vardiff takes over): the low end of each kind, in hexchain
 * hashes per second (docs/benchmarks.md: one thread of the miner's JavaScript kernel runs about
 * 2 M/s, its WebAssembly kernel 5 to 16 M/s; an ESP8266 about 40 k/s). Starting low costs a
 * burst of easy shares that vardiff raises within one step (x4 per step, a step every 8
 * shares); starting high costs waiting for the first share, four intervals per /4 step.
 */
export const NOMINAL_HASH_RATES: Readonly<Record<string, bigint>> = {
  native: 2_000_000n,
  esp32: 150_000n,
  esp8266: 40_000n,
};

/** The assumed hash rate of a device type not in NOMINAL_HASH_RATES (the slowest listed). */
export const NOMINAL_HASH_RATE_FALLBACK = 40_000n;

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

/**
 * The share difficulty a new member starts with: one share per interval at the nominal hash
 * rate of its device type, floor(rate x intervalMs / 1000), inside [16, D].
 */
export function initialShareDifficulty(
  deviceType: string | undefined,
  intervalMs: bigint,
  blockDifficulty: bigint,
): bigint {
  const rate =
    (deviceType === undefined ? undefined : NOMINAL_HASH_RATES[deviceType]) ?? NOMINAL_HASH_RATE_FALLBACK;
  return clampShareDifficulty((rate * intervalMs) / 1000n, blockDifficulty);
}

/** The share target: floor((2^256 - 1) / share difficulty), like a block target. */
export function shareTargetFromDifficulty(shareDifficulty: bigint): bigint {
  return targetFromDifficulty(shareDifficulty);
}
