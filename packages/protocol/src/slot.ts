import { describe, utf8 } from './bytes.js';
import { ProtocolError } from './errors.js';
import { sha256 } from './hash.js';

/** The longest accepted slot_hash, in Unicode characters (code points). */
export const SLOT_HASH_MAX_CHARS = 128;

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Checks a slot number: a safe integer >= 0.
 * @throws ProtocolError `validation_failed`
 */
export function assertSlot(slot: number): void {
  if (!Number.isSafeInteger(slot) || slot < 0) {
    throw new ProtocolError(
      'validation_failed',
      `slot: expected an integer in [0, 2^53 - 1], got ${describe(slot)}`,
    );
  }
}

/**
 * The 32-byte digest under which a slot hash enters the v4.0 and v4.1 challenge hashes: SHA-256
 * of its UTF-8 bytes. The slot hash is any string of 1 to 128 Unicode characters (hex, base58, whatever the
 * chain uses) without unpaired surrogates; it is never decoded.
 * @throws ProtocolError `validation_failed`
 */
export function slotHashDigest(slotHash: string): Uint8Array {
  if (typeof slotHash !== 'string') {
    throw new ProtocolError('validation_failed', `slot_hash: expected a string, got ${describe(slotHash)}`);
  }
  const chars = [...slotHash].length;
  if (chars < 1 || chars > SLOT_HASH_MAX_CHARS) {
    throw new ProtocolError(
      'validation_failed',
      `slot_hash: expected 1 to ${SLOT_HASH_MAX_CHARS} characters, got ${chars}`,
    );
  }
  if (LONE_SURROGATE.test(slotHash)) {
    throw new ProtocolError(
      'validation_failed',
      'slot_hash: expected well-formed Unicode, got a string with an unpaired surrogate',
    );
  }
  return sha256(utf8(slotHash));
}
