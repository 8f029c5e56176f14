import { describe } from './bytes.js';
import { ProtocolError } from './errors.js';
import { tokenDecimals } from './tokens.js';

/**
 * Token amounts and prices. Inside, a value is a `bigint` count of minor units; on the wire it is
 * a decimal string in the grammar `^(0|[1-9][0-9]*)(\.[0-9]+)?$` with at most `decimals` fraction
 * digits. There is no floating point anywhere in this file: parsing and formatting are string and
 * bigint operations, so every implementation gets the same integer from the same string.
 */

/** The largest amount in minor units: 2^64 - 1, so that every amount fits a u64 in any language. */
export const MAX_AMOUNT = 0xffff_ffff_ffff_ffffn;

/** Fraction digits of a price (fixed point, 18 decimals: the price `"1.5"` is 1.5 * 10^18). */
export const PRICE_DECIMALS = 18;

/** The largest value {@link parseDecimal} accepts by default, and the largest price: 2^128 - 1 (a u128). */
export const MAX_DECIMAL = (1n << 128n) - 1n;

/** The largest `decimals` any function here accepts. */
export const MAX_DECIMALS = 36;

/** The denominator of basis points: 10 000 bps = 100 %. */
export const BPS_DENOMINATOR = 10_000n;

const DECIMAL_RE = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/** A token symbol (whose decimals come from the registry) or a number of decimals. */
export type TokenOrDecimals = string | number;

/**
 * Why a decimal string was rejected, in `ProtocolError.details.reason` of an `invalid_amount`:
 * `syntax` (not the grammar), `negative` (a `-` where no sign is allowed), `negative_zero` (`-0`),
 * `too_many_decimals` (more fraction digits than the token has), `too_large` (above the maximum).
 */
export type DecimalRejection = 'syntax' | 'negative' | 'negative_zero' | 'too_many_decimals' | 'too_large';

/** Options of {@link parseDecimal}. */
export interface ParseDecimalOptions {
  /** Largest accepted absolute value, in minor units. Default {@link MAX_DECIMAL}. */
  readonly max?: bigint;
  /** Accept a leading `-` (never on zero). Default false. */
  readonly signed?: boolean;
  /** The field name that starts error messages. Default `"value"`. */
  readonly what?: string;
}

/**
 * Parses a decimal string into an integer count of `10^-decimals` units: `parseDecimal("12.5", 6)`
 * is `12_500_000n`. The one parser behind amounts and prices.
 *
 * Accepted: `^(0|[1-9][0-9]*)(\.[0-9]+)?$`, optionally preceded by `-` when `signed` (but not
 * `-0`, `-0.0`, ...), with at most `decimals` fraction digits (trailing zeros count: `"1.50"` has 2),
 * and an absolute value of at most `max` units. No exponent, no spaces, no `+`, no leading zeros
 * except a lone `0`, no bare or trailing `.`.
 * @throws ProtocolError `invalid_amount` with a message that says what was expected and what arrived.
 */
export function parseDecimal(text: string, decimals: number, options: ParseDecimalOptions = {}): bigint {
  checkDecimals(decimals);
  const { max = MAX_DECIMAL, signed = false, what = 'value' } = options;
  const fail: (reason: DecimalRejection, message: string) => never = (reason, message) => {
    throw new ProtocolError('invalid_amount', `${what}: ${message}`, { reason, decimals });
  };
  if (typeof text !== 'string') fail('syntax', `expected ${shape(decimals, signed)}, got ${describe(text)}`);

  const negative = text.startsWith('-');
  const match = DECIMAL_RE.exec(negative ? text.slice(1) : text);
  if (match === null) fail('syntax', `expected ${shape(decimals, signed)}, got ${describe(text)}`);
  if (negative && !signed) fail('negative', `expected a non-negative value, got ${describe(text)}`);

  const whole = match[1]!;
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) {
    fail('too_many_decimals', `expected ${places(decimals)}, got ${fraction.length} in ${describe(text)}`);
  }
  const tooLarge: () => never = () =>
    fail(
      'too_large',
      `expected ${signed ? 'an absolute value of ' : ''}at most ${formatDecimal(max, decimals)}, got ${describe(text)}`,
    );
  // A whole part with more digits than the limit's is above it; checked before BigInt() so that a
  // megabyte of digits costs a length comparison, not a quadratic conversion.
  if (whole.length > (max / 10n ** BigInt(decimals)).toString().length) tooLarge();
  const value = BigInt(whole + fraction.padEnd(decimals, '0'));
  if (value > max) tooLarge();
  if (negative && value === 0n) fail('negative_zero', `expected no sign on zero, got ${describe(text)}`);
  return negative ? -value : value;
}

/**
 * The canonical decimal string of `value` units of `10^-decimals`: no trailing zeros in the
 * fraction, no trailing `.`, `"0"` for zero, a leading `-` for negative values.
 * `formatDecimal(12_500_000n, 6)` is `"12.5"`.
 */
export function formatDecimal(value: bigint, decimals: number): string {
  checkDecimals(decimals);
  if (typeof value !== 'bigint') {
    throw new ProtocolError('invalid_amount', `value: expected a bigint, got ${describe(value)}`);
  }
  const sign = value < 0n ? '-' : '';
  const digits = (value < 0n ? -value : value).toString();
  if (decimals === 0) return sign + digits;
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, -decimals);
  const fraction = padded.slice(-decimals).replace(/0+$/, '');
  return fraction === '' ? sign + whole : `${sign}${whole}.${fraction}`;
}

/**
 * Parses a token amount (non-negative, at most {@link MAX_AMOUNT} minor units) from its wire form.
 * `parseAmount("12.5", "USDC")` is `12_500_000n`.
 * @param tokenOrDecimals a token symbol from the registry, or a number of decimals.
 * @param what the field name that starts error messages, default `"amount"`.
 * @throws ProtocolError `invalid_amount`, or `unknown_token` for a symbol not in the registry.
 */
export function parseAmount(text: string, tokenOrDecimals: TokenOrDecimals, what = 'amount'): bigint {
  return parseDecimal(text, resolveDecimals(tokenOrDecimals), { max: MAX_AMOUNT, what });
}

/**
 * Parses a signed amount (a ledger delta): like {@link parseAmount} but a leading `-` is allowed,
 * except on zero. The absolute value is at most {@link MAX_AMOUNT}.
 * @throws ProtocolError `invalid_amount`, or `unknown_token`.
 */
export function parseSignedAmount(text: string, tokenOrDecimals: TokenOrDecimals, what = 'amount'): bigint {
  return parseDecimal(text, resolveDecimals(tokenOrDecimals), { max: MAX_AMOUNT, signed: true, what });
}

/**
 * The canonical wire form of an amount of `minor` units: `formatAmount(12_500_000n, "USDC")` is `"12.5"`.
 * @throws ProtocolError `invalid_amount` when `minor` is not a bigint in [0, {@link MAX_AMOUNT}].
 */
export function formatAmount(minor: bigint, tokenOrDecimals: TokenOrDecimals): string {
  checkRange(minor, 0n, MAX_AMOUNT, 'amount: expected a bigint in [0, 2^64 - 1] minor units');
  return formatDecimal(minor, resolveDecimals(tokenOrDecimals));
}

/**
 * The canonical wire form of a signed amount (a ledger delta): `"-0.25"`, `"3"`.
 * @throws ProtocolError `invalid_amount` when `minor` is not a bigint in [-(2^64 - 1), 2^64 - 1].
 */
export function formatSignedAmount(minor: bigint, tokenOrDecimals: TokenOrDecimals): string {
  checkRange(
    minor,
    -MAX_AMOUNT,
    MAX_AMOUNT,
    'amount: expected a bigint in [-(2^64 - 1), 2^64 - 1] minor units',
  );
  return formatDecimal(minor, resolveDecimals(tokenOrDecimals));
}

/**
 * Parses a price: a non-negative decimal string with at most {@link PRICE_DECIMALS} (18) fraction
 * digits, as an integer count of 10^-18 units, at most {@link MAX_DECIMAL}.
 * @throws ProtocolError `invalid_amount`.
 */
export function parsePrice(text: string, what = 'price'): bigint {
  return parseDecimal(text, PRICE_DECIMALS, { what });
}

/**
 * The canonical wire form of a price given in 10^-18 units.
 * @throws ProtocolError `invalid_amount` when `value` is not a bigint in [0, {@link MAX_DECIMAL}].
 */
export function formatPrice(value: bigint): string {
  checkRange(value, 0n, MAX_DECIMAL, 'price: expected a bigint in [0, 2^128 - 1] units of 10^-18');
  return formatDecimal(value, PRICE_DECIMALS);
}

/**
 * `floor(a * b / c)` in exact integer arithmetic (rounding toward negative infinity, also for
 * negative products). The building block of pro-rata shares, yields and prices.
 * @throws RangeError when `c` is not positive.
 */
export function mulDiv(a: bigint, b: bigint, c: bigint): bigint {
  if (c <= 0n) throw new RangeError(`mulDiv: expected a positive divisor, got ${describe(c)}`);
  const product = a * b;
  const quotient = product / c;
  return product % c !== 0n && product < 0n ? quotient - 1n : quotient;
}

/**
 * `floor(amount * bps / 10 000)`: the part of `amount` given by a rate in basis points
 * (`applyBps(1_000n, 250)` is `25n`: 2.5 % of 1000). Rates above 10 000 bps (100 %) are allowed.
 * @throws RangeError when `bps` is not a non-negative integer.
 */
export function applyBps(amount: bigint, bps: number | bigint): bigint {
  if (typeof bps === 'number' ? !Number.isSafeInteger(bps) || bps < 0 : bps < 0n) {
    throw new RangeError(`bps: expected a non-negative integer, got ${describe(bps)}`);
  }
  return mulDiv(amount, BigInt(bps), BPS_DENOMINATOR);
}

function resolveDecimals(tokenOrDecimals: TokenOrDecimals): number {
  if (typeof tokenOrDecimals === 'number') return checkDecimals(tokenOrDecimals);
  return tokenDecimals(tokenOrDecimals);
}

function checkDecimals(decimals: number): number {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new ProtocolError(
      'invalid_integer',
      `decimals: expected an integer in [0, ${MAX_DECIMALS}], got ${describe(decimals)}`,
    );
  }
  return decimals;
}

function checkRange(value: bigint, min: bigint, max: bigint, expected: string): void {
  if (typeof value !== 'bigint' || value < min || value > max) {
    throw new ProtocolError('invalid_amount', `${expected}, got ${describe(value)}`);
  }
}

/** `a decimal string such as "12.5" with at most 9 decimal places` */
function shape(decimals: number, signed: boolean): string {
  const example = `${signed ? '-' : ''}12${decimals > 0 ? '.5' : ''}`;
  return `a decimal string such as "${example}" with ${places(decimals)}`;
}

function places(decimals: number): string {
  if (decimals === 0) return 'no decimal places';
  return decimals === 1 ? 'at most 1 decimal place' : `at most ${decimals} decimal places`;
}
