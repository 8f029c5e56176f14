import { BPS_DENOMINATOR } from '../amount.js';
import { ProtocolError } from '../errors.js';
import { minBig, mulDivCeil, mulDivFloor } from './math.js';

/**
 * Staking rules. A position locks PTM principal for 0 (flexible), 7 or 30 days at the annual
 * yield rate of its lock, fixed at creation.
 *
 * Yield: simple interest per second, never compounded.
 *   accrued(t) = floor(principal * rateBps * (t - createdAt) / (10 000 * 31 536 000))
 * is what the position has earned since it was opened; it is computed from createdAt each time
 * (not added up claim by claim), so rounding down never compounds: each claim pays
 * accrued(now) - yieldPaid, and the fraction of a minor unit rounded off is paid by a later
 * claim once it adds up to a unit. Yield is paid from the funded reserve (`@reserve`): a claim
 * pays min(due, reserve balance); when the reserve is empty nothing is paid and `yield_earned`
 * shows 0 (yield stops; what the reserve could not pay stays due and is paid if the reserve is
 * funded again, e.g. by early-unstake penalties).
 *
 * Early unstake (before lockExpiry): penalty = ceil(principal * penaltyBps / 10 000) (rounded
 * up: toward the house), kept in the reserve. At or after lockExpiry: no penalty.
 */

/** Seconds in a year for yield: 365 days. */
export const SECONDS_PER_YEAR = 31_536_000n;
/** Seconds in a day. */
export const SECONDS_PER_DAY = 86_400;

export interface LockTerms {
  /** Lock period in days. */
  readonly days: 0 | 7 | 30;
  /** Annual yield rate in basis points (APR; 1 200 = 12 %). */
  readonly yieldBps: bigint;
  /** Penalty on the principal for unstaking before lock expiry, in basis points. */
  readonly penaltyBps: bigint;
}

/** The published terms of each lock period. */
export const LOCK_TERMS: Readonly<Record<0 | 7 | 30, LockTerms>> = Object.freeze({
  0: Object.freeze({ days: 0, yieldBps: 300n, penaltyBps: 0n }),
  7: Object.freeze({ days: 7, yieldBps: 600n, penaltyBps: 100n }),
  30: Object.freeze({ days: 30, yieldBps: 1_200n, penaltyBps: 300n }),
} as const);

/**
 * The terms of a lock period.
 * @throws ProtocolError `validation_failed` for a period that is not 0, 7 or 30.
 */
export function lockTerms(days: number): LockTerms {
  if (days === 0 || days === 7 || days === 30) return LOCK_TERMS[days];
  throw new ProtocolError('validation_failed', `lock_period_days: expected 0, 7 or 30, got ${String(days)}`);
}

/** When a lock of `days` days starting at `createdAt` (Unix seconds) ends. */
export function lockExpiry(createdAt: number, days: number): number {
  return createdAt + lockTerms(days).days * SECONDS_PER_DAY;
}

/** A yield rate in basis points as the fraction served on the wire (1 200 bps = 0.12). */
export function bpsToFraction(bps: bigint): number {
  return Number(bps) / 10_000;
}

/**
 * Yield earned by `principal` at `rateBps` from `createdAt` to `now` (Unix seconds), rounded
 * down. A clock before createdAt earns nothing.
 */
export function accruedYield(principal: bigint, rateBps: bigint, createdAt: number, now: number): bigint {
  const elapsed = BigInt(Math.max(0, now - createdAt));
  return mulDivFloor(principal * rateBps, elapsed, BPS_DENOMINATOR * SECONDS_PER_YEAR);
}

/** Yield due now: accrued minus already paid (never negative). */
export function yieldDue(
  position: {
    readonly principal: bigint;
    readonly rateBps: bigint;
    readonly createdAt: number;
    readonly yieldPaid: bigint;
  },
  now: number,
): bigint {
  const due =
    accruedYield(position.principal, position.rateBps, position.createdAt, now) - position.yieldPaid;
  return due > 0n ? due : 0n;
}

/** What a claim pays: the yield due, capped by the reserve balance. */
export function yieldPayable(due: bigint, reserve: bigint): bigint {
  return minBig(due, reserve > 0n ? reserve : 0n);
}

/** The early-unstake penalty on `principal` (0 at or after `lockExpiry`), rounded up. */
export function unstakePenalty(
  principal: bigint,
  penaltyBps: bigint,
  lockExpiryAt: number,
  now: number,
): bigint {
  if (now >= lockExpiryAt) return 0n;
  return mulDivCeil(principal, penaltyBps, BPS_DENOMINATOR);
}
