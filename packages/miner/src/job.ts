import {
  assertTarget,
  type ChallengeWire,
  type Coord,
  difficultyParams,
  encodeHeader,
  fromHex,
  HEADER_VERSION,
  type HexChallenge,
  type MiningTask,
  parseCoord,
  parsePublicKey,
  targetFromHex,
  targetToBytes,
  taskFromWire,
} from '@tensormine/protocol';
import { MinerError } from './errors.js';
import type { KernelJob } from './worker/protocol.js';

/**
 * A unit of work for a device backend: everything its kernel needs, the challenge id and the
 * expiry. The CLI builds jobs from the validator's challenges with `hexchainJob` and
 * `tensorJob`; the Miner gives each backend a disjoint nonce range of the same job.
 */
interface JobBase {
  readonly challengeId: string;
  /** The miner's ed25519 public key, 32 bytes (committed in every result). */
  readonly minerPublicKey: Uint8Array;
  /** When the challenge expires, Unix milliseconds. */
  readonly expiresAtMs: number;
  /** The nonce range [nonceStart, nonceEnd) to search; default [0, 2^53). */
  readonly nonceStart?: number;
  readonly nonceEnd?: number;
  /** End the job at its first result (default true: a solo challenge takes one result). */
  readonly stopOnFound?: boolean;
}

/** A v4.1 hexchain job: grind the 88-byte header's nonce until SHA-256 <= target. */
export interface HexchainJob extends JobBase {
  readonly kind: 'hexchain';
  readonly coord: Coord;
  /** 32 bytes. */
  readonly challengeHash: Uint8Array;
  /** What a result must meet: the block target, or for a pool member its share target. */
  readonly target: bigint;
  /** Expected hashes per result: the block difficulty D, or the share difficulty. */
  readonly difficulty: number;
  /** Pool jobs: the block target and difficulty (a share at or below it is also a block). */
  readonly blockTarget?: bigint;
  readonly blockDifficulty?: number;
}

/** A v4.0 tensor job: try nonces until the MML score and path distance meet the thresholds. */
export interface TensorJob extends JobBase {
  readonly kind: 'tensor';
  readonly task: MiningTask;
  /** The difficulty level, 1..24. */
  readonly difficulty: number;
}

export type MiningJob = HexchainJob | TensorJob;

/** The protocol version of a job, as the validator names it. */
export function protocolVersion(job: Pick<MiningJob, 'kind'>): '4.0' | '4.1' {
  return job.kind === 'hexchain' ? '4.1' : '4.0';
}

/** The full nonce space: [0, 2^53). */
export const NONCE_SPACE_END = Number.MAX_SAFE_INTEGER + 1;

/**
 * A job from a served hexchain challenge (POST /api/hexchain/challenge).
 * @throws MinerError `invalid_job` for a header version this miner cannot mine; ProtocolError
 *   for a malformed coordinate, hash or target.
 */
export function hexchainJob(challenge: HexChallenge, minerPublicKey: Uint8Array | string): HexchainJob {
  if (challenge.header_version !== HEADER_VERSION) {
    throw new MinerError(
      'invalid_job',
      `challenge ${challenge.id}: expected header_version ${HEADER_VERSION}, got ${challenge.header_version}`,
    );
  }
  const base = {
    kind: 'hexchain' as const,
    challengeId: challenge.id,
    coord: parseCoord(challenge.coord, 'challenge coord'),
    challengeHash: fromHex(challenge.challenge_hash, 32, 'challenge_hash'),
    minerPublicKey: publicKeyBytes(minerPublicKey),
    expiresAtMs: challenge.expires_at * 1000,
  };
  const target = targetFromHex(challenge.target);
  if (challenge.share_target !== undefined && challenge.share_difficulty !== undefined) {
    // A pool member's challenge: the engine and the boards look for shares (protocol 4.13);
    // every hash at or below the share target is sent, and the validator sees which are blocks.
    return {
      ...base,
      target: targetFromHex(challenge.share_target),
      difficulty: challenge.share_difficulty,
      blockTarget: target,
      blockDifficulty: challenge.difficulty,
    };
  }
  return { ...base, target, difficulty: challenge.difficulty };
}

/**
 * A job from a served v4.0 challenge (POST /challenge): `taskFromWire` checks that the input
 * tensor, the path target and the thresholds are the ones the hash and difficulty imply.
 * @throws ProtocolError `invalid_challenge`
 */
export function tensorJob(challenge: ChallengeWire, minerPublicKey: Uint8Array | string): TensorJob {
  return {
    kind: 'tensor',
    challengeId: challenge.challenge_id ?? challenge.id,
    task: taskFromWire(challenge),
    difficulty: challenge.difficulty,
    minerPublicKey: publicKeyBytes(minerPublicKey),
    expiresAtMs: challenge.expires_at * 1000,
  };
}

/** The expected number of hashes (nonce iterations) per result of a job. */
export function expectedHashes(job: MiningJob): number {
  if (job.kind === 'hexchain') return job.difficulty;
  let iterations = expectedIterations.get(job.difficulty);
  if (iterations === undefined) {
    iterations = difficultyParams(job.difficulty).expectedPathIterations;
    expectedIterations.set(job.difficulty, iterations);
  }
  return iterations;
}

/** A tensor level's expected iterations (exact bigint arithmetic), computed once per level: every result states it. */
const expectedIterations = new Map<number, number>();

/** The job restricted to [start, end) (the Miner gives each backend its own slice). */
export function withNonceRange<J extends MiningJob>(job: J, start: number, end: number): J {
  return { ...job, nonceStart: start, nonceEnd: end };
}

/** The job's nonce range, checked. */
export function nonceRange(job: MiningJob): { readonly start: number; readonly end: number } {
  const start = job.nonceStart ?? 0;
  const end = job.nonceEnd ?? NONCE_SPACE_END;
  if (
    !Number.isSafeInteger(start) ||
    start < 0 ||
    !Number.isInteger(end) ||
    end < start ||
    end > NONCE_SPACE_END
  ) {
    throw new MinerError(
      'invalid_job',
      `nonce range: expected integers 0 <= nonceStart <= nonceEnd <= 2^53, got [${start}, ${end})`,
    );
  }
  return { start, end };
}

/**
 * Checks a job (lengths, coordinate, target range, nonce range).
 * @throws MinerError `invalid_job`
 */
export function checkJob(job: MiningJob): void {
  const fail = (message: string): never => {
    throw new MinerError('invalid_job', `job ${job.challengeId}: ${message}`);
  };
  if (typeof job.challengeId !== 'string' || job.challengeId.length === 0)
    fail('challengeId: expected a string');
  if (!(job.minerPublicKey instanceof Uint8Array) || job.minerPublicKey.length !== 32) {
    fail(`minerPublicKey: expected 32 bytes, got ${job.minerPublicKey?.length}`);
  }
  if (!Number.isFinite(job.expiresAtMs))
    fail(`expiresAtMs: expected Unix milliseconds, got ${job.expiresAtMs}`);
  nonceRange(job);
  if (job.kind === 'hexchain') {
    try {
      parseCoord(job.coord);
      assertTarget(job.target);
    } catch (error) {
      fail((error as Error).message);
    }
    if (job.challengeHash?.length !== 32)
      fail(`challengeHash: expected 32 bytes, got ${job.challengeHash?.length}`);
  } else if (job.kind === 'tensor') {
    if (job.task?.input?.length !== job.task?.dim * job.task?.dim) fail('task: input is not N x N');
  } else {
    fail(`kind: expected hexchain or tensor, got ${String((job as { kind: unknown }).kind)}`);
  }
}

/** The kernel input of a job, as a worker receives it. */
export function kernelJob(job: MiningJob): KernelJob {
  if (job.kind === 'hexchain') {
    return {
      kind: 'hexchain',
      header: encodeHeader({
        coord: job.coord,
        challengeHash: job.challengeHash,
        minerPublicKey: job.minerPublicKey,
        nonce: 0,
      }),
      target: targetToBytes(job.target),
    };
  }
  const t = job.task;
  return {
    kind: 'tensor',
    task: {
      challengeHash: t.challengeHash,
      operation: t.operation,
      activation: t.activation,
      dim: t.dim,
      filters: t.filters,
      input: t.input,
      pathTarget: t.pathTarget,
      mmlThresholdQ16: t.mmlThresholdQ16,
      pathDistanceMax: t.pathDistanceMax,
    },
    minerPublicKey: job.minerPublicKey,
  };
}

function publicKeyBytes(key: Uint8Array | string): Uint8Array {
  return typeof key === 'string' ? parsePublicKey(key) : key;
}
