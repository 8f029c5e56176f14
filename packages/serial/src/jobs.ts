import type { HexchainJob, MiningJob, TensorJob } from '@tensormine/miner';
import { encodeHeader } from '@tensormine/protocol';
import {
  CAPABILITIES,
  type HelloMessage,
  type JobHexMessage,
  type JobTensorMessage,
} from './codec/messages.js';
import type { NonceChunk } from './cursor.js';

/** The JOB_HEX or JOB_TENSOR message that searches `chunk` of a mining job. */
export function jobMessage(
  job: MiningJob,
  jobId: number,
  chunk: NonceChunk,
): JobHexMessage | JobTensorMessage {
  return job.kind === 'hexchain' ? hexJobMessage(job, jobId, chunk) : tensorJobMessage(job, jobId, chunk);
}

export function hexJobMessage(job: HexchainJob, jobId: number, chunk: NonceChunk): JobHexMessage {
  const header = encodeHeader({
    coord: job.coord,
    challengeHash: job.challengeHash,
    minerPublicKey: job.minerPublicKey,
    nonce: 0,
  });
  return {
    name: 'JOB_HEX',
    jobId,
    headerPrefix: header.slice(0, 80),
    target: job.target,
    firstNonce: chunk.start,
    nonceCount: chunk.count,
  };
}

export function tensorJobMessage(job: TensorJob, jobId: number, chunk: NonceChunk): JobTensorMessage {
  const t = job.task;
  return {
    name: 'JOB_TENSOR',
    jobId,
    challengeHash: t.challengeHash,
    operation: t.operation,
    activation: t.activation,
    dim: t.dim,
    filters: t.operation === 'conv' ? t.filters : 0,
    minerPublicKey: job.minerPublicKey,
    pathTarget: t.pathTarget,
    mmlThresholdQ16: t.mmlThresholdQ16,
    pathDistanceMax: t.pathDistanceMax,
    firstNonce: chunk.start,
    nonceCount: chunk.count,
  };
}

/** Whether a board (by its HELLO) can run a job: capability bits, tensor size, filters. */
export function boardSupports(hello: HelloMessage, job: MiningJob): boolean {
  const caps = hello.capabilities;
  if (job.kind === 'hexchain') return (caps & CAPABILITIES.hexchain) !== 0;
  const t = job.task;
  if (t.operation === 'matmul' && (caps & CAPABILITIES.matmul) === 0) return false;
  if (t.operation === 'conv' && ((caps & CAPABILITIES.conv) === 0 || t.filters > hello.maxFilters))
    return false;
  if (t.activation === 'sigmoid' && (caps & CAPABILITIES.sigmoid) === 0) return false;
  if (t.activation === 'tanh' && (caps & CAPABILITIES.tanh) === 0) return false;
  return t.dim <= hello.maxDim;
}

/** The capability names of a HELLO (relu is always present). */
export function capabilityNames(capabilities: number): string[] {
  const names: string[] = [];
  for (const [name, bit] of Object.entries(CAPABILITIES)) if ((capabilities & bit) !== 0) names.push(name);
  return names;
}

/**
 * The nonce rate a board reports for a job before it has run one of that shape: the HELLO
 * hex rate, or the tensor rate (measured at max N) scaled by (max N / N)^2.
 */
export function helloRate(hello: HelloMessage, job: MiningJob): number {
  if (job.kind === 'hexchain') return hello.hexRate;
  const scale = (hello.maxDim / Math.max(1, job.task.dim)) ** 2;
  return hello.tensorRate * scale;
}

/** A key for rates measured per job shape. */
export function rateKey(job: MiningJob): string {
  if (job.kind === 'hexchain') return 'hex';
  const t = job.task;
  return `tensor:${t.operation}:${t.dim}:${t.operation === 'conv' ? t.filters : 0}`;
}
