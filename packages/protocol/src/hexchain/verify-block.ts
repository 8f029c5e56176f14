import { describe, equalBytes, fromHex, toHex } from '../bytes.js';
import { signatureFromWire, verify } from '../ed25519.js';
import type { ErrorCode, Verdict } from '../error-codes.js';
import { ProtocolError } from '../errors.js';
import { type Coord, coordEquals, formatCoord, parseCoord } from './coord.js';
import { encodeHeader, hexBlockHash, hexPowHash, parseNonce } from './header.js';
import { type HexSubmissionInput, submissionMessage } from './submission.js';
import { hashMeetsTarget, targetToHex } from './target.js';

/** The consensus view of an issued challenge: what a block for it must satisfy. */
export interface HexChallengeTerms {
  readonly id: string;
  readonly coord: Coord;
  /** 32 bytes, `hexChallengeHash(...)` of the challenge. */
  readonly challengeHash: Uint8Array;
  readonly target: bigint;
}

/** A rejected verification: a stable code, a message, maybe details. */
export type Rejection = Extract<Verdict, { ok: false }>;

/** An accepted block, with what the validator stores. */
export interface AcceptedBlock {
  readonly ok: true;
  /** The 88-byte header rebuilt from the challenge and the submission. */
  readonly header: Uint8Array;
  readonly powHash: Uint8Array;
  /** taggedHash("PTM41/block", header). */
  readonly blockHash: Uint8Array;
  readonly minerPublicKey: Uint8Array;
  readonly nonce: number;
}

/** The result of `verifyBlock`; assignable to `Verdict`. */
export type BlockVerdict = AcceptedBlock | Rejection;

export interface VerifyBlockOptions {
  /** Reject a submission without a signature (default true). A signature present is always checked. */
  readonly requireSignature?: boolean;
}

/**
 * Verifies a submitted block against the challenge it answers. Pure: expiry, occupancy of the
 * cell and replay are the validator's checks. The checks run cheapest first, and the ed25519
 * verification only after the proof of work, so that a forged submission costs its sender a
 * solved block before it costs the validator a signature check:
 * 1. `challenge_id` names this challenge (`validation_failed`);
 * 2. `block.coord` is a valid coordinate (`invalid_coordinate`) equal to the challenge's
 *    (`coordinate_mismatch`);
 * 3. `block.miner_pubkey` and `block.pow_hash` are 64 hex digits (`validation_failed`);
 * 4. `block.nonce` is an integer in [0, 2^53 - 1] (`invalid_nonce`);
 * 5. a signature is present when required (`signature_required`) and well formed (`validation_failed`);
 * 6. `block.pow_hash` is SHA-256 of the rebuilt header (`pow_hash_mismatch`);
 * 7. the pow hash is <= the target (`pow_above_target`);
 * 8. the signature, when present, verifies (`signature_invalid`).
 */
export function verifyBlock(
  challenge: HexChallengeTerms,
  submission: HexSubmissionInput,
  options: VerifyBlockOptions = {},
): BlockVerdict {
  if (submission.challenge_id !== challenge.id) {
    return fail(
      'validation_failed',
      `challenge_id: expected ${describe(challenge.id)} (the challenge being verified), got ${describe(submission.challenge_id)}`,
    );
  }
  const block = submission.block as Partial<HexSubmissionInput['block']> | null | undefined;
  if (typeof block !== 'object' || block === null) {
    return fail('validation_failed', `block: expected an object, got ${describe(block)}`);
  }

  let coord: Coord;
  let minerPublicKey: Uint8Array;
  let claimedPowHash: Uint8Array;
  let nonce: number;
  let signature: Uint8Array | undefined;
  try {
    coord = parseCoord(block.coord, 'block.coord');
  } catch (error) {
    return failFrom(error);
  }
  if (!coordEquals(coord, challenge.coord)) {
    return fail(
      'coordinate_mismatch',
      `block.coord: expected the challenge coordinate ${formatCoord(challenge.coord)}, got ${formatCoord(coord)}`,
    );
  }
  try {
    minerPublicKey = fromHex(block.miner_pubkey as string, 32, 'block.miner_pubkey');
    claimedPowHash = fromHex(block.pow_hash as string, 32, 'block.pow_hash');
  } catch (error) {
    return failFrom(error, 'validation_failed');
  }
  try {
    nonce = parseNonce(block.nonce, 'block.nonce');
  } catch (error) {
    return failFrom(error);
  }
  if (submission.signature === undefined) {
    if (options.requireSignature ?? true) {
      return fail(
        'signature_required',
        'signature: expected an ed25519 signature by block.miner_pubkey (an array of 64 byte integers), got none',
      );
    }
  } else {
    try {
      signature = signatureFromWire(submission.signature);
    } catch (error) {
      return failFrom(error, 'validation_failed');
    }
  }

  const header = encodeHeader({ coord, challengeHash: challenge.challengeHash, minerPublicKey, nonce });
  const powHash = hexPowHash(header);
  if (!equalBytes(powHash, claimedPowHash)) {
    return fail(
      'pow_hash_mismatch',
      `block.pow_hash ${toHex(claimedPowHash)} is not the SHA-256 of the 88-byte header rebuilt from block.coord, the challenge hash, block.miner_pubkey and block.nonce (docs/protocol.md 4.4)`,
      { got: toHex(claimedPowHash) },
    );
  }
  if (!hashMeetsTarget(powHash, challenge.target)) {
    const target = targetToHex(challenge.target);
    return fail(
      'pow_above_target',
      `block.pow_hash: expected a hash <= the target ${target}, got ${toHex(powHash)}`,
      { pow_hash: toHex(powHash), target },
    );
  }
  if (
    signature !== undefined &&
    !verify(signature, submissionMessage(challenge.id, header), minerPublicKey)
  ) {
    return fail(
      'signature_invalid',
      `signature: does not verify against block.miner_pubkey over the submission message of challenge_id ${describe(challenge.id)}`,
    );
  }
  return { ok: true, header, powHash, blockHash: hexBlockHash(header), minerPublicKey, nonce };
}

function fail(code: ErrorCode, message: string, details?: Record<string, unknown>): Rejection {
  return details === undefined ? { ok: false, code, message } : { ok: false, code, message, details };
}

function failFrom(error: unknown, code?: ErrorCode): Rejection {
  if (!(error instanceof ProtocolError)) throw error;
  return fail(code ?? (error.code as ErrorCode), error.message);
}
