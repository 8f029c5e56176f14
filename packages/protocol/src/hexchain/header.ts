import { describe, i32le, u32le, u64le } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { sha256, taggedHash } from '../hash.js';
import { assertVersion } from './challenge-hash.js';
import { HEADER_VERSION, HEXCHAIN_TAGS } from './constants.js';
import { type Coord, parseCoord } from './coord.js';

/**
 * The 88-byte block header:
 *
 * | offset | size | field          | encoding                       |
 * |--------|------|----------------|--------------------------------|
 * | 0      | 4    | version        | u32le, HEADER_VERSION          |
 * | 4      | 4    | q              | i32le                          |
 * | 8      | 4    | r              | i32le                          |
 * | 12     | 4    | s              | i32le                          |
 * | 16     | 32   | challenge_hash | bytes                          |
 * | 48     | 32   | miner pubkey   | ed25519 public key             |
 * | 80     | 8    | nonce          | u64le, at most 2^53 - 1        |
 *
 * The nonce lies in the second 64-byte SHA-256 block, so a miner hashes bytes [0, 64) once and
 * reuses that midstate for every nonce.
 */
export const HEADER_BYTES = 88;
export const NONCE_OFFSET = 80;
export const MIDSTATE_PREFIX_BYTES = 64;

/** The largest nonce, 2^53 - 1, so that it is exact as a JSON number. */
export const MAX_NONCE = Number.MAX_SAFE_INTEGER;

/** The fields of a header other than the version. */
export interface HexHeaderFields {
  readonly coord: Coord;
  /** 32 bytes. */
  readonly challengeHash: Uint8Array;
  /** 32 bytes, the ed25519 public key that the reward goes to and that signs the submission. */
  readonly minerPublicKey: Uint8Array;
  /** An integer in [0, 2^53 - 1]. */
  readonly nonce: number;
}

/**
 * Checks a nonce: an integer in [0, 2^53 - 1].
 * @throws ProtocolError `invalid_nonce`
 */
export function parseNonce(value: unknown, what = 'nonce'): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ProtocolError(
      'invalid_nonce',
      `${what}: expected an integer in [0, ${MAX_NONCE}], got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * Encodes a header (88 bytes) with version HEADER_VERSION.
 * @throws ProtocolError `invalid_coordinate`, `invalid_nonce`, or `invalid_header` when a hash or
 *   key is not 32 bytes.
 */
export function encodeHeader(fields: HexHeaderFields): Uint8Array {
  const coord = parseCoord(fields.coord);
  const nonce = parseNonce(fields.nonce);
  assert32(fields.challengeHash, 'challenge hash');
  assert32(fields.minerPublicKey, 'miner public key');
  const out = new Uint8Array(HEADER_BYTES);
  out.set(u32le(HEADER_VERSION), 0);
  out.set(i32le(coord.q), 4);
  out.set(i32le(coord.r), 8);
  out.set(i32le(coord.s), 12);
  out.set(fields.challengeHash, 16);
  out.set(fields.minerPublicKey, 48);
  out.set(u64le(nonce), NONCE_OFFSET);
  return out;
}

/**
 * Decodes an 88-byte header, checking every field.
 * @throws ProtocolError `invalid_header` for a wrong length, `unsupported_version`,
 *   `invalid_coordinate`, `invalid_nonce` (a nonce above 2^53 - 1).
 */
export function decodeHeader(bytes: Uint8Array): HexHeaderFields & { readonly version: number } {
  if (bytes.length !== HEADER_BYTES) {
    throw new ProtocolError('invalid_header', `header: expected ${HEADER_BYTES} bytes, got ${bytes.length}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(0, true);
  assertVersion(version);
  const coord = parseCoord(
    { q: view.getInt32(4, true), r: view.getInt32(8, true), s: view.getInt32(12, true) },
    'header coordinate',
  );
  const rawNonce = view.getBigUint64(NONCE_OFFSET, true);
  if (rawNonce > BigInt(MAX_NONCE)) {
    throw new ProtocolError(
      'invalid_nonce',
      `header nonce: expected an integer in [0, ${MAX_NONCE}], got ${rawNonce}`,
    );
  }
  return {
    version,
    coord,
    challengeHash: bytes.slice(16, 48),
    minerPublicKey: bytes.slice(48, 80),
    nonce: Number(rawNonce),
  };
}

/** The proof-of-work hash: plain SHA-256 of the 88-byte header (the one hash miners grind). */
export function hexPowHash(header: Uint8Array): Uint8Array {
  assertHeaderLength(header);
  return sha256(header);
}

/** The block hash, which names the block in the lattice: `taggedHash("PTM41/block", header)`. */
export function hexBlockHash(header: Uint8Array): Uint8Array {
  assertHeaderLength(header);
  return taggedHash(HEXCHAIN_TAGS.block, header);
}

export function assertHeaderLength(header: Uint8Array): void {
  if (header.length !== HEADER_BYTES) {
    throw new ProtocolError('invalid_header', `header: expected ${HEADER_BYTES} bytes, got ${header.length}`);
  }
}

function assert32(bytes: Uint8Array, what: string): void {
  if (!(bytes instanceof Uint8Array) || bytes.length !== 32) {
    throw new ProtocolError(
      'invalid_header',
      `${what}: expected 32 bytes, got ${bytes instanceof Uint8Array ? bytes.length : describe(bytes)}`,
    );
  }
}
