import {
  binomialTail,
  computeWork,
  coordEquals,
  decodeHeader,
  type ErrorCode,
  encodeHeader,
  equalBytes,
  formatPublicKey,
  fromHex,
  type HexSubmissionInput,
  hexPowHash,
  meetsThresholds,
  type ProofWire,
  type ProvedWork,
  parseProof,
  proofFromWork,
  q16ToNumber,
  type SignedHexSubmission,
  type SignedProof,
  toHex,
  verifyBlock,
} from '@tensormine/protocol';
import { MinerError } from './errors.js';
import { expectedHashes, type HexchainJob, type MiningJob, type TensorJob } from './job.js';

export type { SignedHexSubmission, SignedProof } from '@tensormine/protocol';

/**
 * A found result: a nonce that the reference verifier accepts for its job, in the wire form
 * the validator takes (unsigned: the WorkSource signs when it submits, see `signFound`). Plain
 * JSON (no bytes, no bigint), so that the journal can store it as it is.
 *
 * Built, verified and signed once: `resultFromNonce` builds it with the reference and checks
 * it (the result it returns is frozen), `verifyFound` does not check such a result again,
 * `signFound` signs it as it is, and the WorkSource sends that body unchanged (the CLI through
 * the client's `submitSigned`): nothing is rebuilt or recomputed on the way.
 */
interface FoundBase {
  /** `challengeId/nonce`: the result's identity (the journal's key). */
  readonly id: string;
  readonly challengeId: string;
  readonly nonce: number;
  /** Expected hashes per result of the job (hexchain D; tensor the expected iterations). */
  readonly difficulty: number;
  /** The difficulty this result would have met (the share's "diff"; bestDiff is the highest). */
  readonly achievedDifficulty: number;
  /** When it was found and when its challenge expires, Unix milliseconds. */
  readonly foundAtMs: number;
  readonly expiresAtMs: number;
  /** The backend that found it (e.g. `cpu`) and its worker, if it has several. */
  readonly device: string;
  readonly worker?: number;
}

export interface HexchainFound extends FoundBase {
  readonly kind: 'hexchain';
  /** The 88-byte header, hex (what the signature covers). */
  readonly header: string;
  /** The body of POST /api/hexchain/submit without its signature. */
  readonly submission: HexSubmissionInput;
}

export interface TensorFound extends FoundBase {
  readonly kind: 'tensor';
  /** The proof of POST /submit (sign it with `signFound`). */
  readonly proof: ProofWire;
}

export type FoundResult = HexchainFound | TensorFound;

/** A reference check that failed: the validator's error code and message. */
export interface ResultRejection {
  readonly ok: false;
  readonly code: ErrorCode;
  readonly message: string;
}

export interface FoundMeta {
  readonly device: string;
  readonly worker?: number;
  readonly now?: number;
}

/**
 * Builds the result of a nonce with the reference implementation (@tensormine/protocol) and
 * verifies it: `verifyBlock` for hexchain, the recomputation and thresholds of `verifyProof`
 * for tensor. Every backend's nonce goes through here before anything is reported, so no
 * kernel or device bug can produce a submission the validator would reject as invalid.
 */
export function resultFromNonce(
  job: MiningJob,
  nonce: number,
  meta: FoundMeta,
): { readonly ok: true; readonly found: FoundResult } | ResultRejection {
  const base = baseOf(job, nonce, meta);
  if (job.kind === 'hexchain') {
    let header: Uint8Array;
    try {
      header = encodeHeader({
        coord: job.coord,
        challengeHash: job.challengeHash,
        minerPublicKey: job.minerPublicKey,
        nonce,
      });
    } catch (error) {
      return { ok: false, code: 'invalid_nonce', message: (error as Error).message };
    }
    const powHash = hexPowHash(header);
    const submission: HexSubmissionInput = {
      challenge_id: job.challengeId,
      block: {
        coord: { q: job.coord.q, r: job.coord.r, s: job.coord.s },
        pow_hash: toHex(powHash),
        nonce,
        miner_pubkey: formatPublicKey(job.minerPublicKey),
      },
    };
    const verdict = verifyBlock(hexTerms(job), submission, { requireSignature: false });
    if (!verdict.ok) return { ok: false, code: verdict.code, message: verdict.message };
    return built(job, {
      ...base,
      kind: 'hexchain',
      achievedDifficulty: hashDifficulty(powHash),
      header: toHex(header),
      submission,
    });
  }
  if (!Number.isSafeInteger(nonce) || nonce < 0) {
    return {
      ok: false,
      code: 'invalid_nonce',
      message: `nonce: expected an integer in [0, 2^53), got ${nonce}`,
    };
  }
  return tensorResult(job, nonce, computeWork(job.task, job.minerPublicKey, nonce), base);
}

/**
 * `resultFromNonce` for a tensor nonce whose work the reference (`computeWork` of
 * @tensormine/protocol, its own fixed-point multiply-accumulates) has already computed on
 * another thread: the engine's worker that found the nonce runs it there, so that the cost of
 * the check, a whole recomputation of the tensor, grows with the workers and never queues on
 * the engine's thread (docs/architecture.md). Never pass a kernel's work here: that would check
 * the kernel against itself.
 */
export function resultFromReferenceWork(
  job: TensorJob,
  nonce: number,
  referenceWork: ProvedWork,
  meta: FoundMeta,
): { readonly ok: true; readonly found: FoundResult } | ResultRejection {
  if (!Number.isSafeInteger(nonce) || nonce < 0) {
    return {
      ok: false,
      code: 'invalid_nonce',
      message: `nonce: expected an integer in [0, 2^53), got ${nonce}`,
    };
  }
  return tensorResult(job, nonce, referenceWork, baseOf(job, nonce, meta));
}

function baseOf(job: MiningJob, nonce: number, meta: FoundMeta): Omit<FoundBase, 'achievedDifficulty'> {
  return {
    id: `${job.challengeId}/${nonce}`,
    challengeId: job.challengeId,
    nonce,
    difficulty: expectedHashes(job),
    foundAtMs: meta.now ?? Date.now(),
    expiresAtMs: job.expiresAtMs,
    device: meta.device,
    ...(meta.worker === undefined ? {} : { worker: meta.worker }),
  };
}

function tensorResult(
  job: TensorJob,
  nonce: number,
  work: ProvedWork,
  base: Omit<FoundBase, 'achievedDifficulty'>,
): { readonly ok: true; readonly found: FoundResult } | ResultRejection {
  if (!meetsThresholds(job.task, work)) return thresholdRejection(job, work.mmlScoreQ16, work.pathDistance);
  const proof = proofFromWork(job.challengeId, job.task.challengeHash, job.minerPublicKey, nonce, work);
  return built(job, {
    ...base,
    kind: 'tensor',
    achievedDifficulty: pathDifficulty(work.pathDistance),
    proof,
  });
}

/**
 * The results `resultFromNonce` built and found valid, with the terms of the job they were
 * checked against (`termsOf`). Frozen, so what was checked is what is submitted.
 */
const verified = new WeakMap<FoundResult, string>();

function built(job: MiningJob, found: FoundResult): { readonly ok: true; readonly found: FoundResult } {
  deepFreeze(found);
  verified.set(found, termsOf(job));
  return { ok: true, found };
}

/** What `verifyFound` checks a result against, as one string. */
function termsOf(job: MiningJob): string {
  return job.kind === 'hexchain'
    ? `hexchain ${job.challengeId} ${formatCoordKey(job.coord)} ${toHex(job.challengeHash)} ${job.target.toString(16)}`
    : `tensor ${job.challengeId} ${toHex(job.task.challengeHash)} ${job.task.mmlThresholdQ16} ${job.task.pathDistanceMax}`;
}

function formatCoordKey(c: { readonly q: number; readonly r: number; readonly s: number }): string {
  return `${c.q},${c.r},${c.s}`;
}

function deepFreeze(value: object): void {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  }
  Object.freeze(value);
}

/**
 * Verifies a found result against its job with the reference: `verifyBlock` (no signature)
 * for hexchain; for tensor the recomputation, field by field, and the thresholds, as
 * `verifyProof` does after the signature. A result that `resultFromNonce` built (and checked)
 * against the same terms is not checked again: it cannot have changed (it is frozen).
 */
export function verifyFound(job: MiningJob, found: FoundResult): { readonly ok: true } | ResultRejection {
  if (found.challengeId !== job.challengeId) {
    return {
      ok: false,
      code: 'validation_failed',
      message: `challenge_id: expected ${job.challengeId}, got ${found.challengeId}`,
    };
  }
  if (verified.get(found) === termsOf(job)) return { ok: true };
  if (job.kind === 'hexchain') {
    if (found.kind !== 'hexchain')
      return { ok: false, code: 'validation_failed', message: 'expected a hexchain result' };
    const verdict = verifyBlock(hexTerms(job), found.submission, { requireSignature: false });
    return verdict.ok ? { ok: true } : { ok: false, code: verdict.code, message: verdict.message };
  }
  if (found.kind !== 'tensor')
    return { ok: false, code: 'validation_failed', message: 'expected a tensor result' };
  const parsed = parseProof(found.proof);
  if (!parsed.ok) {
    const v = parsed.verdict as ResultRejection;
    return { ok: false, code: v.code, message: v.message };
  }
  const p = parsed.bytes;
  if (!equalBytes(p.challengeHash, job.task.challengeHash)) {
    return {
      ok: false,
      code: 'challenge_hash_mismatch',
      message: 'challenge_hash is not the job challenge hash',
    };
  }
  const work = computeWork(job.task, p.minerPublicKey, p.nonce);
  const mismatch = (code: ErrorCode, field: string): ResultRejection => ({
    ok: false,
    code,
    message: `${field} differs from the recomputed value for nonce ${p.nonce}`,
  });
  if (!equalBytes(work.tensorResultHash, p.tensorResultHash))
    return mismatch('tensor_result_mismatch', 'tensor_result_hash');
  if (work.mmlScoreQ16 !== p.mmlScoreQ16) return mismatch('mml_score_mismatch', 'mml_score');
  if (!equalBytes(work.pathSignature, p.pathSignature))
    return mismatch('path_signature_mismatch', 'path_signature');
  if (work.pathDistance !== p.pathDistance) return mismatch('path_distance_mismatch', 'path_distance');
  if (!equalBytes(work.computationHash, p.computationHash))
    return mismatch('computation_hash_mismatch', 'computation_hash');
  if (!meetsThresholds(job.task, work)) return thresholdRejection(job, work.mmlScoreQ16, work.pathDistance);
  return { ok: true };
}

/**
 * What signs a result: the key that mined it. The client's `Signer` is one (`Signer.load(...)`,
 * `Signer.fromSecretKey(...)`); the secret key stays inside it.
 */
export interface FoundSigner {
  /** ed25519 over `proofMessage` of a v4.0 proof, as 64 byte integers. */
  signProof(proof: ProofWire): readonly number[];
  /** ed25519 over `submissionMessage(challengeId, header)` of a v4.1 block, as 64 byte integers. */
  signSubmission(challengeId: string, header: Uint8Array): readonly number[];
}

/**
 * The signed request body of a result, as it is sent (POST /api/hexchain/submit or POST
 * /submit): the result's own submission or proof, nothing rebuilt, with the signature.
 * @throws MinerError `invalid_result` when the result's parts disagree (its nonce, its
 *   submission or proof, its header: a damaged journal line), before anything is signed.
 */
export function signFound(found: HexchainFound, signer: FoundSigner): SignedHexSubmission;
export function signFound(found: TensorFound, signer: FoundSigner): SignedProof;
export function signFound(found: FoundResult, signer: FoundSigner): SignedHexSubmission | SignedProof;
export function signFound(found: FoundResult, signer: FoundSigner): SignedHexSubmission | SignedProof {
  if (found.kind === 'hexchain') {
    const header = consistentHeader(found);
    const signature = signer.signSubmission(found.challengeId, header);
    return { ...found.submission, signature: [...signature] };
  }
  const p = found.proof;
  if (p.challenge_id !== found.challengeId || p.computation_nonce !== found.nonce) {
    throw inconsistent(found, `proof is for ${p.challenge_id} nonce ${p.computation_nonce}`);
  }
  return { proof: p, signature: [...signer.signProof(p)] };
}

/**
 * The header of a hexchain result, checked to be the one its submission describes (a result
 * read back from a journal could be damaged): nothing is signed that the result does not say.
 */
function consistentHeader(found: HexchainFound): Uint8Array {
  let header: Uint8Array;
  let fields: ReturnType<typeof decodeHeader>;
  try {
    header = fromHex(found.header, 88, 'header');
    fields = decodeHeader(header);
  } catch (error) {
    throw inconsistent(found, (error as Error).message, error);
  }
  const b = found.submission.block;
  if (
    found.submission.challenge_id !== found.challengeId ||
    b.nonce !== found.nonce ||
    fields.nonce !== found.nonce ||
    !coordEquals(fields.coord, b.coord) ||
    formatPublicKey(fields.minerPublicKey) !== b.miner_pubkey
  ) {
    throw inconsistent(
      found,
      `submission is for ${found.submission.challenge_id} nonce ${b.nonce}, header for nonce ${fields.nonce}`,
    );
  }
  return header;
}

function inconsistent(found: FoundResult, what: string, cause?: unknown): MinerError {
  return new MinerError(
    'invalid_result',
    `result ${found.id} (challenge ${found.challengeId}, nonce ${found.nonce}) does not hold together: ${what}`,
    { id: found.id },
    cause === undefined ? undefined : { cause },
  );
}

function hexTerms(job: HexchainJob) {
  return { id: job.challengeId, coord: job.coord, challengeHash: job.challengeHash, target: job.target };
}

function thresholdRejection(job: TensorJob, mml: number, distance: number): ResultRejection {
  return mml > job.task.mmlThresholdQ16
    ? {
        ok: false,
        code: 'mml_above_threshold',
        message: `mml_score ${q16ToNumber(mml)} is above mml_threshold ${q16ToNumber(job.task.mmlThresholdQ16)}`,
      }
    : {
        ok: false,
        code: 'path_distance_above_max',
        message: `path_distance ${distance} is above path_distance_max ${job.task.pathDistanceMax}`,
      };
}

const MAX_UINT256 = 2n ** 256n - 1n;

/** The difficulty a hexchain hash meets: floor((2^256 - 1) / hash) (as a float for display). */
export function hashDifficulty(powHash: Uint8Array): number {
  const value = BigInt(`0x${toHex(powHash)}`);
  return value === 0n ? Number.POSITIVE_INFINITY : Number(MAX_UINT256 / value);
}

/** The difficulty a path distance meets: 2^64 / (number of 64-bit strings within that distance). */
export function pathDifficulty(distance: number): number {
  return PATH_DIFFICULTIES[distance] ?? Number(2n ** 64n / binomialTail(64, distance));
}

/** pathDifficulty of each distance 0..64, computed once (exact bigint arithmetic): every tensor result states one. */
const PATH_DIFFICULTIES: readonly number[] = Array.from({ length: 65 }, (_, distance) =>
  Number(2n ** 64n / binomialTail(64, distance)),
);
