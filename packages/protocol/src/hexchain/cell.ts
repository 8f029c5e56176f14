import { u64le, utf8 } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { hmacSha256, taggedHash } from '../hash.js';
import { assertSlot, slotHashDigest } from '../slot.js';
import { HEXCHAIN_TAGS } from './constants.js';
import type { Coord } from './coord.js';

/**
 * The selector that picks a challenge's target cell:
 * `taggedHash("PTM41/cell", u64le(slot), SHA-256(utf8(slot_hash)), entropy)`.
 * @param entropy 32 bytes chosen by the validator per challenge (see `hexChallengeEntropy`), so that
 *   concurrent challenges for one slot get different cells.
 * @throws ProtocolError `validation_failed` for a bad slot, slot hash or entropy length.
 */
export function cellSelector(slot: number, slotHash: string, entropy: Uint8Array): Uint8Array {
  assertSlot(slot);
  assertEntropy(entropy);
  return taggedHash(HEXCHAIN_TAGS.cell, u64le(slot), slotHashDigest(slotHash), entropy);
}

/**
 * The target cell of a challenge: `frontier[u64le(selector[0..8]) mod frontier.length]`, the
 * first 8 selector bytes read as an unsigned little-endian 64-bit integer (exact, no floats).
 * @param frontierCanonical the frontier in canonical order (`frontier()` or `Lattice#frontier()`).
 * @throws ProtocolError `validation_failed` for an empty frontier or a selector that is not 32 bytes.
 */
export function chooseTargetCell(frontierCanonical: readonly Coord[], selector: Uint8Array): Coord {
  if (selector.length !== 32) {
    throw new ProtocolError('validation_failed', `selector: expected 32 bytes, got ${selector.length}`);
  }
  if (frontierCanonical.length === 0) {
    throw new ProtocolError('validation_failed', 'frontier: expected at least one cell, got none');
  }
  const view = new DataView(selector.buffer, selector.byteOffset, 8);
  const index = Number(view.getBigUint64(0, true) % BigInt(frontierCanonical.length));
  return frontierCanonical[index]!;
}

/**
 * The recommended per-challenge entropy: `HMAC-SHA256(seed, utf8("PTM41/entropy") || u64le(serial))`
 * with the validator's secret seed and a challenge serial that never repeats. It is not needed
 * to verify a block (the challenge hash commits to it); any unpredictable 32 bytes will do.
 */
export function hexChallengeEntropy(seed: Uint8Array, serial: number | bigint): Uint8Array {
  return hmacSha256(seed, utf8(HEXCHAIN_TAGS.entropy), u64le(serial));
}

export function assertEntropy(entropy: Uint8Array): void {
  if (!(entropy instanceof Uint8Array) || entropy.length !== 32) {
    throw new ProtocolError(
      'validation_failed',
      `entropy: expected 32 bytes, got ${entropy instanceof Uint8Array ? entropy.length : typeof entropy}`,
    );
  }
}
