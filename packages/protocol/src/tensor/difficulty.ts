import { describe } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { MML_ONE_Q16 } from './mml.js';

/**
 * How v4.0 difficulty sets the thresholds. Difficulty is an integer level in [1, 24].
 *
 *   path_distance_max(d) = 32 - d
 *   mml_threshold_q16(d) = 65536                       for d <= 8  (the gate never binds)
 *                          65536 - 2048 * (d - 8)       for d > 8   (ratio 1 - (d - 8) / 32)
 *
 * path_signature is 64 bits of a hash, so its distance to the target is Binomial(64, 1/2):
 *   p_path(d) = sum_{k=0}^{D} C(64, k) / 2^64
 * and a nonce passes the path test with exactly that probability. The expected number of
 * nonce iterations is 1 / (p_path(d) * q_mml(d)), where q_mml(d), the share of results whose
 * description length is under the threshold, is exactly 1 for d <= 8 and measured for higher
 * levels (docs/protocol.md lists it per device type).
 */
export const MIN_DIFFICULTY = 1;
export const MAX_DIFFICULTY = 24;
export const PATH_BITS = 64;
/** Levels up to this one have a non-binding MML gate (threshold 1.0). */
export const MML_FREE_LEVELS = 8;

export interface DifficultyParams {
  readonly difficulty: number;
  readonly pathDistanceMax: number;
  readonly mmlThresholdQ16: number;
  /** Numerator and denominator of p_path: passing = sum C(64, k<=D), total = 2^64. */
  readonly pathPassing: bigint;
  readonly pathTotal: bigint;
  /** ceil(2^64 / passing): the expected iterations when the MML gate does not bind. */
  readonly expectedPathIterations: number;
}

export function assertDifficulty(difficulty: unknown): asserts difficulty is number {
  if (
    typeof difficulty !== 'number' ||
    !Number.isInteger(difficulty) ||
    difficulty < MIN_DIFFICULTY ||
    difficulty > MAX_DIFFICULTY
  ) {
    throw new ProtocolError(
      'validation_failed',
      `difficulty: expected an integer in [${MIN_DIFFICULTY}, ${MAX_DIFFICULTY}], got ${describe(difficulty)}`,
    );
  }
}

export function difficultyParams(difficulty: number): DifficultyParams {
  assertDifficulty(difficulty);
  const pathDistanceMax = 32 - difficulty;
  const mmlThresholdQ16 =
    difficulty <= MML_FREE_LEVELS ? MML_ONE_Q16 : MML_ONE_Q16 - 2048 * (difficulty - MML_FREE_LEVELS);
  const pathPassing = binomialTail(PATH_BITS, pathDistanceMax);
  const pathTotal = 1n << BigInt(PATH_BITS);
  return {
    difficulty,
    pathDistanceMax,
    mmlThresholdQ16,
    pathPassing,
    pathTotal,
    expectedPathIterations: Number((pathTotal + pathPassing - 1n) / pathPassing),
  };
}

/** sum_{k=0}^{maxK} C(n, k), exactly. */
export function binomialTail(n: number, maxK: number): bigint {
  let total = 0n;
  let c = 1n;
  for (let k = 0; k <= maxK; k++) {
    total += c;
    c = (c * BigInt(n - k)) / BigInt(k + 1);
  }
  return total;
}

/**
 * q_mml(d) in thousandths for d = 9..24 (index d - 9), by tensor side N: the share of honest
 * results whose MML score passes the gate, measured with `scripts/mml-pass-rates.ts`
 * (docs/protocol.md 3.5). Up to level 8 the gate does not bind (1000 exactly).
 */
const MML_PASS_PERMILLE: Readonly<Record<16 | 32 | 64, readonly number[]>> = {
  64: [796, 777, 754, 733, 711, 689, 672, 652, 634, 618, 603, 585, 567, 550, 531, 512],
  32: [703, 677, 645, 616, 589, 567, 542, 516, 495, 470, 451, 428, 408, 383, 360, 333],
  16: [653, 620, 595, 563, 535, 501, 469, 442, 413, 388, 361, 335, 313, 287, 264, 249],
};

/**
 * q_mml(d) in thousandths for a tensor side N: the measured column of the largest measured
 * side at or below N (16 for smaller sides), 1000 up to level 8.
 */
export function mmlPassPermille(difficulty: number, dim: number): number {
  assertDifficulty(difficulty);
  if (difficulty <= MML_FREE_LEVELS) return 1000;
  const column = dim >= 64 ? 64 : dim >= 32 ? 32 : 16;
  return MML_PASS_PERMILLE[column][difficulty - MML_FREE_LEVELS - 1]!;
}

/** Multiply-accumulates of one nonce iteration: N^3 (matmul) or F * 9 * N^2 (conv). */
export function macsPerIteration(task: { operation: string; dim: number; filters: number }): number {
  const n = task.dim;
  return task.operation === 'conv' ? task.filters * 9 * n * n : n * n * n;
}

/**
 * The expected work of a challenge, in multiply-accumulates, as an exact fraction:
 *   E(d)   = 2^64 / passing(d) * 1000 / q_mml_permille(d, N)      expected iterations
 *   work   = macsPerIteration * E(d) = numerator / denominator
 * Rewards are proportional to it (docs/validator.md), so no device type, operation or level
 * pays more per multiply-accumulate than another.
 */
export function expectedWorkMacs(task: {
  operation: string;
  dim: number;
  filters: number;
  difficulty: number;
}): { readonly numerator: bigint; readonly denominator: bigint } {
  const p = difficultyParams(task.difficulty);
  return {
    numerator: BigInt(macsPerIteration(task)) * p.pathTotal * 1000n,
    denominator: p.pathPassing * BigInt(mmlPassPermille(task.difficulty, task.dim)),
  };
}
