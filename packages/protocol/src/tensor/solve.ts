import { computeWork, type ProvedWork, type TensorTask, type WorkResult } from './work.js';

/** A task together with the thresholds its proofs must meet. */
export interface ThresholdTask extends TensorTask {
  readonly mmlThresholdQ16: number;
  readonly pathDistanceMax: number;
}

export interface SolveOptions {
  readonly startNonce?: number;
  /** Give up after this many nonces (default: unbounded). */
  readonly maxIterations?: number;
}

export interface Solution {
  readonly nonce: number;
  readonly work: WorkResult;
  /** Nonces tried, including the winning one. */
  readonly iterations: number;
}

/** True when a computed result meets the challenge's thresholds. */
export function meetsThresholds(challenge: ThresholdTask, work: ProvedWork): boolean {
  return work.mmlScoreQ16 <= challenge.mmlThresholdQ16 && work.pathDistance <= challenge.pathDistanceMax;
}

/**
 * Reference solver: tries nonces in order from startNonce until one meets the thresholds.
 * Clear rather than fast (the miner package has the fast kernels); returns undefined when
 * maxIterations nonces were tried without success.
 */
export function solveProof(
  challenge: ThresholdTask,
  minerPublicKey: Uint8Array,
  options: SolveOptions = {},
): Solution | undefined {
  const start = options.startNonce ?? 0;
  const max = options.maxIterations ?? Number.POSITIVE_INFINITY;
  for (let i = 0; i < max && start + i <= Number.MAX_SAFE_INTEGER; i++) {
    const nonce = start + i;
    const work = computeWork(challenge, minerPublicKey, nonce);
    if (meetsThresholds(challenge, work)) return { nonce, work, iterations: i + 1 };
  }
  return undefined;
}
