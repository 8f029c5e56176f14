import type { ProvedWork } from '@tensormine/protocol';
import type { KernelName } from '../kernels/choice.js';
import type { TensorKernelTask } from '../kernels/tensor.js';
import type { WarmUpReport } from '../kernels/warm-up.js';

/**
 * What the engine and its workers share. Control goes through a SharedArrayBuffer (read by
 * the workers between batches, no message needed); jobs and results go through messages.
 *
 * control (Int32Array):
 *   [GENERATION]  the job generation; the engine increments it for every new job and for a
 *                 stop, so a worker drops its job at the end of the current batch
 *   [PAUSED]      1 while paused: workers finish the batch and wait
 *   [INTENSITY]   the duty cycle in thousandths (1..1000): after a batch of t ms a worker
 *                 sleeps t * (1000 - x) / x ms
 *   [WAKE]        incremented with Atomics.notify on every change, so sleeping workers wake
 * counters (BigInt64Array, one per worker): hashes (nonce iterations) done, cumulative,
 *   written only by its worker (Atomics.add) and read by the engine (Atomics.load)
 * states (Int32Array, one per worker): what the worker is doing (WORKER_IDLE...), for the
 *   per-thread rows of the TUI and for tests
 * acks (Int32Array, one slot of ACK_STRIDE words per worker, so that no two workers' slots share
 *   a cache line): the `found` messages of the worker the engine has received, cumulative,
 *   written by the pool (Atomics.add, Atomics.notify) and read by the worker, which keeps at
 *   most MAX_FOUND_IN_FLIGHT messages unreceived (back-pressure: a busy engine thread holds its
 *   workers' results back rather than letting them queue without bound)
 *
 * Results: the result of a job that ends at its first (stopOnFound: a v4.0 challenge, a solo
 * hexchain block) is posted at once, so its latency is what it was; the results of a job that
 * goes on (a pool's shares, the bench's easy tensor target) are held and posted together at the
 * end of their batch (about batchMs later at most; or every MAX_FOUND_PER_MESSAGE), so that such
 * a job wakes the engine's thread once a batch rather than once a result.
 */
export const GENERATION = 0;
export const PAUSED = 1;
export const INTENSITY = 2;
export const WAKE = 3;
export const CONTROL_WORDS = 4;

/** Words per worker in `acks` (64 bytes: one cache line each). */
export const ACK_STRIDE = 16;
/** `found` messages a worker may have posted that the engine has not received yet. */
export const MAX_FOUND_IN_FLIGHT = 16;
/** Results a `found` message carries at most. */
export const MAX_FOUND_PER_MESSAGE = 64;

export const WORKER_IDLE = 0;
export const WORKER_MINING = 1;
export const WORKER_PAUSED = 2;
/** Sleeping between batches because the intensity is below 1. */
export const WORKER_SLEEPING = 3;
export const WORKER_STATES = ['idle', 'mining', 'paused', 'sleeping'] as const;
export type WorkerState = (typeof WORKER_STATES)[number];

/** Where a tensor solution's reference recomputation runs (MiningEngineOptions.referenceCheck). */
export type ReferenceCheck = 'worker' | 'engine';

export interface WorkerInit {
  readonly index: number;
  /** The kernel the worker runs (resolved by the engine: the same in every worker). */
  readonly kernel: KernelName;
  /** The native library to load (kernel `native`: built and verified by the engine's thread). */
  readonly nativeLibrary?: string;
  /**
   * Where a tensor solution is recomputed with the reference: `worker` (the default: here,
   * posted as `reference`) or `engine` (the engine's thread; for the bench's side-by-side).
   */
  readonly referenceCheck?: ReferenceCheck;
  readonly control: Int32Array;
  readonly counters: BigInt64Array;
  readonly states: Int32Array;
  readonly acks: Int32Array;
}

/** One result of a worker, as a `found` message carries it. */
export interface FoundItem {
  readonly nonce: number;
  /** hexchain: the kernel's pow_hash. */
  readonly powHash?: Uint8Array;
  /** tensor: the kernel's computation hash (the engine compares it with the reference's). */
  readonly computationHash?: Uint8Array;
  /**
   * tensor: the reference's work for the nonce (`computeWork` of @tensormine/protocol, run
   * by the worker on its own thread), which the engine builds and checks the result from;
   * without the activations (`ProvedWork`), which a result does not carry, so that a
   * message copies a few hashes rather than the whole tensor.
   */
  readonly reference?: ProvedWork;
}

/** The kernel input of a job, as it crosses to a worker (structured clone). */
export type KernelJob =
  | { readonly kind: 'hexchain'; readonly header: Uint8Array; readonly target: Uint8Array }
  | { readonly kind: 'tensor'; readonly task: TensorKernelTask; readonly minerPublicKey: Uint8Array };

export interface JobMessage {
  readonly type: 'job';
  readonly generation: number;
  readonly job: KernelJob;
  /** This worker's nonce range [start, end). */
  readonly start: number;
  readonly end: number;
  /** End the job at the first result (a solo challenge takes one). */
  readonly stopOnFound: boolean;
  /** Target duration of a batch, ms. */
  readonly batchMs: number;
}

export type ToWorker = JobMessage;

export type FromWorker =
  | {
      readonly type: 'ready';
      readonly index: number;
      /** The `js` kernel's warm-up before the worker took work (kernels/warm-up.ts). */
      readonly warmUp?: WarmUpReport;
    }
  | {
      readonly type: 'found';
      readonly index: number;
      readonly generation: number;
      /** Results in nonce order: one that ends its job, or those of a batch (protocol above). */
      readonly results: readonly FoundItem[];
    }
  | { readonly type: 'exhausted'; readonly index: number; readonly generation: number }
  | { readonly type: 'error'; readonly index: number; readonly generation: number; readonly message: string };
