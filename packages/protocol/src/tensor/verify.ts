import { describe, equalBytes } from '../bytes.js';
import { signatureFromWire, verify } from '../ed25519.js';
import { OK, reject, type Verdict } from '../error-codes.js';
import { ProtocolError } from '../errors.js';
import type { TensorChallenge } from './challenge.js';
import type { MacCore } from './mac.js';
import { numberToQ16, q16ToNumber } from './mml.js';
import { type ProofBytes, type ProofWire, proofBytesFromWire, proofMessage } from './proof.js';
import { computeWork } from './work.js';

export interface VerifyProofOptions {
  /** The envelope's `signature` (array of 64 byte integers), if any. */
  readonly signature?: unknown;
  /**
   * Require a valid signature (default true). A validator may relax this for legacy clients;
   * a present signature is always checked.
   */
  readonly requireSignature?: boolean;
  /** The multiply-accumulate core of the recomputation (default: the reference; see mac.ts). */
  readonly mac?: MacCore;
}

/**
 * Verifies a v4.0 proof against the challenge it answers, by recomputing the whole tensor
 * computation for the submitted nonce and key. Checks, cheapest first: field encodings;
 * challenge_hash; the signature; recomputation and comparison of every reported field
 * (tensor_result_hash, mml_score, path_signature, path_distance, computation_hash); the
 * thresholds. Stateful checks (the challenge exists and has not expired, the key is
 * registered, the proof is not a replay) belong to the validator and run before this.
 */
export function verifyProof(
  challenge: TensorChallenge,
  proof: ProofWire,
  options: VerifyProofOptions = {},
): Verdict {
  const parsed = parseProof(proof);
  if (!parsed.ok) return parsed.verdict;
  const p = parsed.bytes;

  if (!equalBytes(p.challengeHash, challenge.challengeHash)) {
    return reject('challenge_hash_mismatch', 'challenge_hash is not the hash of the issued challenge', {
      got: proof.challenge_hash,
    });
  }

  const requireSignature = options.requireSignature ?? true;
  if (options.signature === undefined || options.signature === null) {
    if (requireSignature) {
      return reject(
        'signature_required',
        'the proof must be signed by miner_pubkey (envelope field signature)',
      );
    }
  } else {
    let signature: Uint8Array;
    try {
      signature = signatureFromWire(options.signature);
    } catch (error) {
      return reject('validation_failed', (error as Error).message);
    }
    if (!verify(signature, proofMessage(p), p.minerPublicKey)) {
      return reject(
        'signature_invalid',
        'the signature does not verify against miner_pubkey over the canonical proof bytes',
      );
    }
  }

  // A mismatch says which field differs and never the recomputed value: an answer must not
  // contain anything the miner could not compute itself (rule-set 1 validators answered the
  // expected values, so three cheap requests per nonce replaced the tensor work). The first
  // field compared, tensor_result_hash, commits to every accumulator, so what a later
  // mismatch reveals is known only to whoever did the work.
  const work = computeWork(challenge, p.minerPublicKey, p.nonce, options.mac);
  if (!equalBytes(work.tensorResultHash, p.tensorResultHash)) {
    return reject(
      'tensor_result_mismatch',
      'tensor_result_hash is not the result of the tensor work for this nonce and key',
    );
  }
  if (work.mmlScoreQ16 !== p.mmlScoreQ16) {
    return reject(
      'mml_score_mismatch',
      'mml_score is not the score of the neural path for this nonce and key',
    );
  }
  if (!equalBytes(work.pathSignature, p.pathSignature)) {
    return reject(
      'path_signature_mismatch',
      'path_signature is not the signature of the neural path for this nonce and key',
    );
  }
  if (work.pathDistance !== p.pathDistance) {
    return reject(
      'path_distance_mismatch',
      'path_distance is not the distance of path_signature to the path target',
    );
  }
  if (!equalBytes(work.computationHash, p.computationHash)) {
    return reject(
      'computation_hash_mismatch',
      "computation_hash is not the commitment to this proof's fields (docs/protocol.md 3.3)",
    );
  }
  if (p.mmlScoreQ16 > challenge.mmlThresholdQ16) {
    return reject('mml_above_threshold', 'mml_score is above the challenge mml_threshold', {
      mml_score: proof.mml_score,
      mml_threshold: q16ToNumber(challenge.mmlThresholdQ16),
    });
  }
  if (p.pathDistance > challenge.pathDistanceMax) {
    return reject('path_distance_above_max', 'path_distance is above the challenge path_distance_max', {
      path_distance: p.pathDistance,
      path_distance_max: challenge.pathDistanceMax,
    });
  }
  return OK;
}

type Parsed = { ok: true; bytes: ProofBytes } | { ok: false; verdict: Verdict };

/** Checks every field's encoding and returns the binary view, or a validation verdict. */
export function parseProof(proof: ProofWire): Parsed {
  const q16 = numberToQ16(proof.mml_score);
  if (q16 === undefined) {
    return invalid(`mml_score: expected a multiple of 1/65536 in [0, 1], got ${describe(proof.mml_score)}`);
  }
  if (!Number.isSafeInteger(proof.computation_nonce) || proof.computation_nonce < 0) {
    return {
      ok: false,
      verdict: reject(
        'invalid_nonce',
        `computation_nonce: expected an integer in [0, 2^53), got ${describe(proof.computation_nonce)}`,
      ),
    };
  }
  if (!Number.isInteger(proof.path_distance) || proof.path_distance < 0 || proof.path_distance > 64) {
    return invalid(`path_distance: expected an integer in [0, 64], got ${describe(proof.path_distance)}`);
  }
  if (
    typeof proof.challenge_id !== 'string' ||
    proof.challenge_id.length === 0 ||
    proof.challenge_id.length > 128
  ) {
    return invalid(
      `challenge_id: expected a string of 1 to 128 characters, got ${describe(proof.challenge_id)}`,
    );
  }
  try {
    return { ok: true, bytes: proofBytesFromWire(proof, q16) };
  } catch (error) {
    if (error instanceof ProtocolError) return invalid(error.message);
    throw error;
  }
}

function invalid(message: string): Parsed {
  return { ok: false, verdict: reject('validation_failed', message) };
}
