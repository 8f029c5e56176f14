/**
 * Variable share difficulty (docs/protocol.md section 4.14): each member's share difficulty
 * moves toward one share every `targetIntervalMs`, so that a slow board and a fast desktop
 * both send shares at a steady pace. Integer arithmetic only.
 */

/** The share interval a pool aims at by default: one share every 10 s per member. */
export const SHARE_INTERVAL_MS_DEFAULT = 10_000n;

/** A member's difficulty is re-evaluated after this many accepted shares... */
export const VARDIFF_RETARGET_SHARES = 8;

/** ...or once this many share intervals have passed since the last change, whichever is first. */
export const VARDIFF_RETARGET_INTERVALS = 4n;

/** One step changes the difficulty by at most this factor, up or down. */
export const VARDIFF_MAX_STEP = 4n;

export interface VardiffInput {
  /** The member's current share difficulty. */
  readonly difficulty: bigint;
  /** Accepted shares since the last change. */
  readonly shares: number;
  /** Milliseconds since the last change. */
  readonly elapsedMs: bigint;
  readonly targetIntervalMs: bigint;
  /** Bounds (see shareDifficultyBounds). */
  readonly min: bigint;
  readonly max: bigint;
}

/** Whether a vardiff step is due: enough shares, or enough time. */
export function vardiffDue(input: Pick<VardiffInput, 'shares' | 'elapsedMs' | 'targetIntervalMs'>): boolean {
  return (
    input.shares >= VARDIFF_RETARGET_SHARES ||
    input.elapsedMs >= input.targetIntervalMs * VARDIFF_RETARGET_INTERVALS
  );
}

/**
 * One vardiff step:
 *
 *     next = floor(old * shares * interval / max(elapsed, 1))     (shares >= 1)
 *     next = floor(old / 4)                                        (no share at all)
 *     next = clamp(next, floor(old / 4), old * 4), then clamp(next, min, max)
 *
 * Shares come at rate hashrate / difficulty, so `old * shares / elapsed` estimates the
 * member's hash rate and multiplying by the interval gives the difficulty of one share per
 * interval.
 */
export function vardiffStep(input: VardiffInput): bigint {
  const { difficulty: old, shares, targetIntervalMs, min, max } = input;
  const elapsed = input.elapsedMs < 1n ? 1n : input.elapsedMs;
  let next = shares <= 0 ? old / VARDIFF_MAX_STEP : (old * BigInt(shares) * targetIntervalMs) / elapsed;
  const low = old / VARDIFF_MAX_STEP;
  const high = old * VARDIFF_MAX_STEP;
  if (next < low) next = low;
  if (next > high) next = high;
  if (next < min) next = min;
  if (next > max) next = max;
  return next;
}
