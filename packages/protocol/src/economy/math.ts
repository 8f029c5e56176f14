import { ProtocolError } from '../errors.js';

/**
 * Integer arithmetic of the economy: every money rule divides with one of these, so that the
 * direction of each rounding is named where it happens. Inputs are non-negative bigints.
 */

/** `floor(a * b / d)`: rounds toward zero (for non-negative inputs). */
export function mulDivFloor(a: bigint, b: bigint, d: bigint): bigint {
  checkOperands(a, b, d);
  return (a * b) / d;
}

/** `ceil(a * b / d)`: rounds away from zero (for non-negative inputs). */
export function mulDivCeil(a: bigint, b: bigint, d: bigint): bigint {
  checkOperands(a, b, d);
  const product = a * b;
  const q = product / d;
  return q * d === product ? q : q + 1n;
}

/** 10^n as a bigint. */
export function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** The smaller of two bigints. */
export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function checkOperands(a: bigint, b: bigint, d: bigint): void {
  if (a < 0n || b < 0n || d <= 0n) {
    throw new ProtocolError(
      'invalid_amount',
      `mulDiv: expected non-negative operands and a positive divisor, got ${a} * ${b} / ${d}`,
    );
  }
}

/**
 * A non-negative fixed-point ratio `numerator / denominator` as a number with at most 9
 * significant fraction digits, for display only (price, slippage): never used to move money.
 */
export function ratioToNumber(numerator: bigint, denominator: bigint): number {
  if (denominator <= 0n) return 0;
  const scaled = (numerator * 1_000_000_000n) / denominator;
  return Number(scaled) / 1e9;
}
