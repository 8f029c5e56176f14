import { concatBytes, fromHex, lpString, toHex, u8, u32le, u64le, utf8 } from '../bytes.js';
import { formatPublicKey, sign } from '../ed25519.js';
import { q16ToNumber } from './mml.js';
import type { ProvedWork } from './work.js';

/** A v4.0 proof as it travels (field names exactly as the interface names them). */
export interface ProofWire {
  readonly challenge_id: string;
  /** 64 hex digits: the `hash` of the challenge. */
  readonly challenge_hash: string;
  readonly tensor_result_hash: string;
  /** An exact multiple of 1/65536 in [0, 1]. */
  readonly mml_score: number;
  /** 16 hex digits. */
  readonly path_signature: string;
  readonly path_distance: number;
  readonly computation_nonce: number;
  readonly computation_hash: string;
  readonly miner_pubkey: string;
}

/** A v4.0 proof with its signature, as it travels: the body of POST /submit. */
export interface SignedProof {
  readonly proof: ProofWire;
  /** ed25519 over `proofMessage` by `proof.miner_pubkey`: 64 integers in [0, 255]. */
  readonly signature: readonly number[];
}

/** The proof fields in binary form. */
export interface ProofBytes {
  readonly challengeId: string;
  readonly challengeHash: Uint8Array;
  readonly tensorResultHash: Uint8Array;
  readonly mmlScoreQ16: number;
  readonly pathSignature: Uint8Array;
  readonly pathDistance: number;
  readonly nonce: number;
  readonly computationHash: Uint8Array;
  readonly minerPublicKey: Uint8Array;
}

/**
 * The canonical bytes of a proof, which its ed25519 signature covers:
 *   utf8("PTM4/proof") || 0x00 || lpString(challenge_id) || challenge_hash(32) ||
 *   tensor_result_hash(32) || u32le(mml_score_q16) || path_signature(8) || u8(path_distance) ||
 *   u64le(computation_nonce) || computation_hash(32) || miner_pubkey(32)
 */
export function proofMessage(p: ProofBytes): Uint8Array {
  return concatBytes(
    utf8('PTM4/proof'),
    Uint8Array.of(0),
    lpString(p.challengeId),
    p.challengeHash,
    p.tensorResultHash,
    u32le(p.mmlScoreQ16),
    p.pathSignature,
    u8(p.pathDistance),
    u64le(p.nonce),
    p.computationHash,
    p.minerPublicKey,
  );
}

/** Assembles the wire proof for a computed nonce. */
export function proofFromWork(
  challengeId: string,
  challengeHash: Uint8Array,
  minerPublicKey: Uint8Array,
  nonce: number,
  work: ProvedWork,
): ProofWire {
  return {
    challenge_id: challengeId,
    challenge_hash: toHex(challengeHash),
    tensor_result_hash: toHex(work.tensorResultHash),
    mml_score: q16ToNumber(work.mmlScoreQ16),
    path_signature: toHex(work.pathSignature),
    path_distance: work.pathDistance,
    computation_nonce: nonce,
    computation_hash: toHex(work.computationHash),
    miner_pubkey: formatPublicKey(minerPublicKey),
  };
}

/** Signs a proof: the seed's `signature`, as an array of 64 byte integers. */
export function signProof(proof: ProofBytes, secretKey: Uint8Array): number[] {
  return Array.from(sign(proofMessage(proof), secretKey));
}

/** Binary view of a wire proof whose fields are already known to be well-formed. */
export function proofBytesFromWire(p: ProofWire, mmlScoreQ16: number): ProofBytes {
  return {
    challengeId: p.challenge_id,
    challengeHash: fromHex(p.challenge_hash, 32, 'challenge_hash'),
    tensorResultHash: fromHex(p.tensor_result_hash, 32, 'tensor_result_hash'),
    mmlScoreQ16,
    pathSignature: fromHex(p.path_signature, 8, 'path_signature'),
    pathDistance: p.path_distance,
    nonce: p.computation_nonce,
    computationHash: fromHex(p.computation_hash, 32, 'computation_hash'),
    minerPublicKey: fromHex(p.miner_pubkey, 32, 'miner_pubkey'),
  };
}
