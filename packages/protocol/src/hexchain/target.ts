import { describe, fromHex, toHex } from '../bytes.js';
import { ProtocolError } from '../errors.js';

/**
 * Hexchain difficulty D is the expected number of hashes per block, an integer in
 * [MIN_HEX_DIFFICULTY, MAX_HEX_DIFFICULTY]: a bigint inside the library, a JSON number on the
 * wire. The proof-of-work target is floor((2^256 - 1) / D); a hash is valid when, read as a
 * big-endian 256-bit integer, it is <= the target.
 */

/** The smallest difficulty, 16: no target accepts every hash. */
export const MIN_HEX_DIFFICULTY = 16n;

/** The largest difficulty, 2^53 - 1, so that D is exact as a JSON number. */
export const MAX_HEX_DIFFICULTY = 2n ** 53n - 1n;

const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * Checks and converts a difficulty from its wire form (a JSON number) or a bigint.
 * @throws ProtocolError `invalid_difficulty`
 */
export function parseHexDifficulty(value: unknown): bigint {
  const d =
    typeof value === 'bigint'
      ? value
      : typeof value === 'number' && Number.isSafeInteger(value)
        ? BigInt(value)
        : undefined;
  if (d === undefined || d < MIN_HEX_DIFFICULTY || d > MAX_HEX_DIFFICULTY) {
    throw new ProtocolError(
      'invalid_difficulty',
      `difficulty: expected an integer in [${MIN_HEX_DIFFICULTY}, ${MAX_HEX_DIFFICULTY}], got ${describe(value)}`,
    );
  }
  return d;
}

/**
 * The target of difficulty D: floor((2^256 - 1) / D).
 * @throws ProtocolError `invalid_difficulty` when D is outside [16, 2^53 - 1].
 */
export function targetFromDifficulty(difficulty: bigint): bigint {
  return MAX_UINT256 / parseHexDifficulty(difficulty);
}

/** The largest valid target, that of difficulty 16. */
export const MAX_HEX_TARGET: bigint = targetFromDifficulty(MIN_HEX_DIFFICULTY);

/** The smallest valid target, that of difficulty 2^53 - 1. */
export const MIN_HEX_TARGET: bigint = targetFromDifficulty(MAX_HEX_DIFFICULTY);

/**
 * Checks that `target` is the target of some difficulty in range, i.e. lies in
 * [MIN_HEX_TARGET, MAX_HEX_TARGET].
 * @throws ProtocolError `invalid_target`
 */
export function assertTarget(target: bigint): void {
  if (typeof target !== 'bigint' || target < MIN_HEX_TARGET || target > MAX_HEX_TARGET) {
    throw new ProtocolError(
      'invalid_target',
      `target: expected an integer in [floor((2^256 - 1) / (2^53 - 1)), floor((2^256 - 1) / 16)], got ${typeof target === 'bigint' ? `0x${target.toString(16)}` : describe(target)}`,
    );
  }
}

/** The target as 32 bytes, big-endian (the form hashed into the challenge hash). */
export function targetToBytes(target: bigint): Uint8Array {
  assertTarget(target);
  return fromHex(target.toString(16).padStart(64, '0'));
}

/** The target's wire form: 64 lowercase hex digits, big-endian. */
export function targetToHex(target: bigint): string {
  return toHex(targetToBytes(target));
}

/**
 * Parses a target from its wire form (64 hex digits, big-endian).
 * @throws ProtocolError `invalid_hex` for a wrong length, `invalid_target` for a target outside
 *   the range of difficulties (for example one that would accept every hash).
 */
export function targetFromHex(hex: string): bigint {
  const target = BigInt(`0x${toHex(fromHex(hex, 32, 'target'))}`);
  assertTarget(target);
  return target;
}

/**
 * The bytes of the targets compared against lately (never handed out: nobody can change them).
 * A grinder compares every hash against the same one or two targets (its share and block
 * targets); converting the target each time cost more than the comparison.
 */
const recentTargets = new Map<bigint, Uint8Array>();
const RECENT_TARGETS = 16;

function targetBytesOf(target: bigint): Uint8Array {
  let bytes = recentTargets.get(target);
  if (bytes === undefined) {
    bytes = targetToBytes(target); // checks the range: only valid targets are kept
    if (recentTargets.size >= RECENT_TARGETS) recentTargets.clear();
    recentTargets.set(target, bytes);
  }
  return bytes;
}

/**
 * True when `hash`, read as a big-endian 256-bit integer, is <= `target`.
 * @throws ProtocolError `validation_failed` when the hash is not 32 bytes, `invalid_target` for a
 *   target out of range.
 */
export function hashMeetsTarget(hash: Uint8Array, target: bigint): boolean {
  if (hash.length !== 32) {
    throw new ProtocolError('validation_failed', `hash: expected 32 bytes, got ${hash.length}`);
  }
  const t = targetBytesOf(target);
  for (let i = 0; i < 32; i++) {
    if (hash[i] !== t[i]) return hash[i]! < t[i]!;
  }
  return true;
}

/**
 * The expected number of hashes to find a block at difficulty D: D. (Exactly
 * 2^256 / (target + 1), which differs from D by less than 2^-200 of D.)
 */
export function expectedHashes(difficulty: bigint): bigint {
  return parseHexDifficulty(difficulty);
}
