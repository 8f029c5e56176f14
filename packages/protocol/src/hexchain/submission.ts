import { concatBytes, lpString, toHex, utf8 } from '../bytes.js';
import { formatPublicKey, type KeyPair, sign, signatureToWire } from '../ed25519.js';
import { HEXCHAIN_TAGS } from './constants.js';
import type { Coord } from './coord.js';
import { assertHeaderLength, encodeHeader, hexPowHash } from './header.js';

/** The body of POST /api/hexchain/submit, as it travels. */
export interface HexSubmissionInput {
  readonly challenge_id: string;
  readonly block: {
    readonly coord: Coord;
    /** SHA-256 of the header, 64 hex digits. */
    readonly pow_hash: string;
    /** An integer in [0, 2^53 - 1]. */
    readonly nonce: number;
    /** The miner's ed25519 public key, 64 hex digits. */
    readonly miner_pubkey: string;
  };
  /** ed25519 signature of `submissionMessage(challenge_id, header)`: 64 integers in [0, 255]. */
  readonly signature?: readonly number[];
}

/** A block submission with its signature, as it travels: the body of POST /api/hexchain/submit. */
export type SignedHexSubmission = HexSubmissionInput & { readonly signature: readonly number[] };

/**
 * The message a miner signs: `utf8("PTM41/submit") || 0x00 || lpString(challenge_id) || header`,
 * where lpString is a u16le byte length then the UTF-8 bytes, and header is the 88-byte header.
 * @throws ProtocolError `invalid_header` for a header that is not 88 bytes, `invalid_integer` for a
 *   challenge id longer than 65535 UTF-8 bytes.
 */
export function submissionMessage(challengeId: string, header: Uint8Array): Uint8Array {
  assertHeaderLength(header);
  return concatBytes(utf8(HEXCHAIN_TAGS.submit), Uint8Array.of(0), lpString(challengeId), header);
}

/** Signs a submission: ed25519 over `submissionMessage(challengeId, header)`; 64 bytes. */
export function signSubmission(challengeId: string, header: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return sign(submissionMessage(challengeId, header), secretKey);
}

/** Input of `buildSubmission`: a solved block and the key that mined it. */
export interface BuildSubmissionInput {
  readonly challengeId: string;
  readonly challengeHash: Uint8Array;
  readonly coord: Coord;
  readonly nonce: number;
  readonly keyPair: KeyPair;
  /** Include the signature (default true). */
  readonly sign?: boolean;
}

/** Builds the wire submission for a nonce: header, pow_hash and (by default) the signature. */
export function buildSubmission(input: BuildSubmissionInput): HexSubmissionInput {
  const header = encodeHeader({
    coord: input.coord,
    challengeHash: input.challengeHash,
    minerPublicKey: input.keyPair.publicKey,
    nonce: input.nonce,
  });
  const block = {
    coord: { q: input.coord.q, r: input.coord.r, s: input.coord.s },
    pow_hash: toHex(hexPowHash(header)),
    nonce: input.nonce,
    miner_pubkey: formatPublicKey(input.keyPair.publicKey),
  };
  if (input.sign === false) return { challenge_id: input.challengeId, block };
  const signature = signatureToWire(signSubmission(input.challengeId, header, input.keyPair.secretKey));
  return { challenge_id: input.challengeId, block, signature };
}
