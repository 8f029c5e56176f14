import { randomBytes, randomInt } from 'node:crypto';
import {
  type Coord,
  difficultyParams,
  encodeHeader,
  equalBytes,
  expand,
  solveBlock,
  solveProof,
  taggedHash,
  targetFromDifficulty,
} from '@tensormine/protocol';
import {
  CAPABILITIES,
  type HelloMessage,
  type JobHexMessage,
  type JobTensorMessage,
  type ResultMessage,
} from './codec/messages.js';

/**
 * The known-answer self-test of docs/serial-protocol.md section 7: one JOB_HEX and, when the
 * board can run tensors, one JOB_TENSOR, each over a small nonce range that contains exactly
 * one solution, found beforehand with the protocol's reference solvers (solveBlock,
 * solveProof) on a fresh random challenge at a low target, so that no firmware can have the
 * answer built in. The board must return exactly that RESULT, field for field.
 */
export interface KnownAnswer {
  readonly job: JobHexMessage | JobTensorMessage;
  readonly expected: ResultMessage;
}

/** Difficulty of the hexchain self-test: about 256 hashes. */
export const SELF_TEST_HEX_DIFFICULTY = 256n;
/** Difficulty level of the tensor self-test: path distance <= 29, about 4 nonces. */
export const SELF_TEST_TENSOR_LEVEL = 3;
/** The tensor side of the self-test (or the board's max N if smaller, at least 4). */
export const SELF_TEST_TENSOR_DIM = 8;

const SELF_TEST_COORD: Coord = { q: 0, r: -1, s: 1 };

/** Builds the known-answer jobs for a board (ids from `nextJobId`). */
export function knownAnswerJobs(hello: HelloMessage, nextJobId: () => number): KnownAnswer[] {
  const out: KnownAnswer[] = [];
  if ((hello.capabilities & CAPABILITIES.hexchain) !== 0) out.push(hexKnownAnswer(nextJobId()));
  const tensor = tensorKnownAnswer(hello, nextJobId);
  if (tensor) out.push(tensor);
  return out;
}

export function hexKnownAnswer(jobId: number): KnownAnswer {
  const challengeHash = randomBytes(32);
  const minerPublicKey = randomBytes(32);
  const target = targetFromDifficulty(SELF_TEST_HEX_DIFFICULTY);
  const start = randomInt(0, 2 ** 40);
  const solved = solveBlock({
    challengeHash,
    coord: SELF_TEST_COORD,
    minerPublicKey,
    target,
    startNonce: start,
  })!;
  const header = encodeHeader({ coord: SELF_TEST_COORD, challengeHash, minerPublicKey, nonce: 0 });
  return {
    job: {
      name: 'JOB_HEX',
      jobId,
      headerPrefix: header.slice(0, 80),
      target,
      firstNonce: start,
      nonceCount: solved.nonce - start + 1,
    },
    expected: { name: 'RESULT', kind: 'hex', jobId, nonce: solved.nonce, powHash: solved.powHash },
  };
}

export function tensorKnownAnswer(hello: HelloMessage, nextJobId: () => number): KnownAnswer | undefined {
  const matmul = (hello.capabilities & CAPABILITIES.matmul) !== 0;
  const conv = (hello.capabilities & CAPABILITIES.conv) !== 0 && hello.maxFilters >= 1;
  const dim = Math.min(SELF_TEST_TENSOR_DIM, hello.maxDim);
  if ((!matmul && !conv) || dim < 4) return undefined;
  const operation = matmul ? 'matmul' : 'conv';
  const filters = operation === 'conv' ? Math.min(2, hello.maxFilters) : 0;
  const challengeHash = randomBytes(32);
  const minerPublicKey = randomBytes(32);
  const { mmlThresholdQ16, pathDistanceMax } = difficultyParams(SELF_TEST_TENSOR_LEVEL);
  const task = {
    challengeHash,
    operation,
    activation: 'relu',
    dim,
    filters,
    input: new Int8Array(expand(taggedHash('PTM4/input', challengeHash), dim * dim).buffer),
    pathTarget: taggedHash('PTM4/path-target', challengeHash).slice(0, 8),
    mmlThresholdQ16,
    pathDistanceMax,
  } as const;
  const start = randomInt(0, 2 ** 40);
  const solution = solveProof(task, minerPublicKey, { startNonce: start })!;
  const jobId = nextJobId();
  const w = solution.work;
  return {
    job: {
      name: 'JOB_TENSOR',
      jobId,
      challengeHash,
      operation,
      activation: 'relu',
      dim,
      filters,
      minerPublicKey,
      pathTarget: task.pathTarget,
      mmlThresholdQ16,
      pathDistanceMax,
      firstNonce: start,
      nonceCount: solution.nonce - start + 1,
    },
    expected: {
      name: 'RESULT',
      kind: 'tensor',
      jobId,
      nonce: solution.nonce,
      tensorResultHash: w.tensorResultHash,
      mmlScoreQ16: w.mmlScoreQ16,
      pathSignature: w.pathSignature,
      pathDistance: w.pathDistance,
      computationHash: w.computationHash,
    },
  };
}

/** Whether two RESULT messages are the same, field for field. */
export function sameResult(a: ResultMessage, b: ResultMessage): boolean {
  if (a.jobId !== b.jobId || a.nonce !== b.nonce || a.kind !== b.kind) return false;
  if (a.kind === 'hex' && b.kind === 'hex') return equalBytes(a.powHash, b.powHash);
  if (a.kind === 'tensor' && b.kind === 'tensor') {
    return (
      equalBytes(a.tensorResultHash, b.tensorResultHash) &&
      a.mmlScoreQ16 === b.mmlScoreQ16 &&
      equalBytes(a.pathSignature, b.pathSignature) &&
      a.pathDistance === b.pathDistance &&
      equalBytes(a.computationHash, b.computationHash)
    );
  }
  return false;
}

/** Describes where two results differ ("nonce 12 != 15", "pow hash differs"). */
export function resultDifference(expected: ResultMessage, got: ResultMessage): string {
  if (got.kind !== expected.kind) return `kind ${got.kind}, expected ${expected.kind}`;
  if (got.nonce !== expected.nonce) return `nonce ${got.nonce}, expected ${expected.nonce}`;
  return 'the result fields differ from the reference';
}
