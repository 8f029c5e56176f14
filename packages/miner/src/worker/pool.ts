import { Worker } from 'node:worker_threads';
import { MinerError } from '../errors.js';
import type { KernelName } from '../kernels/choice.js';
import type { WarmUpReport } from '../kernels/warm-up.js';
import {
  ACK_STRIDE,
  CONTROL_WORDS,
  type FromWorker,
  GENERATION,
  INTENSITY,
  type KernelJob,
  PAUSED,
  type ReferenceCheck,
  type ToWorker,
  WAKE,
  WORKER_STATES,
  type WorkerInit,
  type WorkerState,
} from './protocol.js';

/**
 * The worker threads of the CPU engine: spawns them, splits a job's nonce range among them
 * (disjoint ranges, one per worker), and drives them through the shared control block.
 */
export interface WorkerPoolOptions {
  readonly threads: number;
  /** The kernel every worker runs (until `setKernel`). */
  readonly kernel: KernelName;
  /** The native library the workers load, when the kernel is `native`. */
  readonly nativeLibrary?: string;
  /** Where a tensor solution is recomputed with the reference (default `worker`). */
  readonly referenceCheck?: ReferenceCheck;
  /** The worker script; default: the built `worker.js` next to this module, or the source entry. */
  readonly workerUrl?: URL;
  readonly onMessage: (message: FromWorker) => void;
  /** A worker ended while the pool was running (a crash: the engine reports and replaces it). */
  readonly onExit: (index: number, code: number) => void;
}

/**
 * Where the worker code is. From the build (dist/index.js or a chunk beside it) it is
 * dist/worker.js. From source (vitest, tsx) this module is src/worker/pool.ts: the worker runs
 * src/worker/entry.ts through source-loader.mjs, with Node's own type stripping.
 */
export function workerScript(): { readonly url: URL; readonly entry?: URL } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    return { url: new URL('./source-loader.mjs', here), entry: new URL('./entry.ts', here) };
  }
  return { url: new URL('./worker.js', here) };
}

export class WorkerPool {
  readonly threads: number;
  readonly control: Int32Array;
  readonly counters: BigInt64Array;
  readonly states: Int32Array;
  /** The `found` messages received from each worker (protocol.ts: back-pressure). */
  readonly acks: Int32Array;
  private readonly workers: (Worker | undefined)[];
  private readonly options: WorkerPoolOptions;
  /** Each worker's `js` warm-up, as its ready message reported it. */
  readonly warmUps: (WarmUpReport | undefined)[] = [];
  private running = false;
  private kernel: { readonly name: KernelName; readonly nativeLibrary: string | undefined };
  /** The last job, re-sent to a replaced worker. */
  private lastDispatch: ((index: number) => ToWorker | undefined) | undefined;

  constructor(options: WorkerPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1 || options.threads > 1024) {
      throw new MinerError(
        'invalid_option',
        `threads: expected an integer in [1, 1024], got ${options.threads}`,
      );
    }
    this.options = options;
    this.threads = options.threads;
    this.kernel = { name: options.kernel, nativeLibrary: options.nativeLibrary };
    this.control = new Int32Array(new SharedArrayBuffer(CONTROL_WORDS * 4));
    this.counters = new BigInt64Array(new SharedArrayBuffer(options.threads * 8));
    this.states = new Int32Array(new SharedArrayBuffer(options.threads * 4));
    this.acks = new Int32Array(new SharedArrayBuffer(options.threads * ACK_STRIDE * 4));
    this.control[INTENSITY] = 1000;
    this.workers = new Array(options.threads).fill(undefined);
  }

  /** The kernel of the workers spawned from now on (set it before `start`). */
  setKernel(kernel: KernelName, nativeLibrary?: string): void {
    if (kernel === 'native' && nativeLibrary === undefined) {
      throw new MinerError('invalid_option', 'kernel: native needs the library the workers load');
    }
    this.kernel = { name: kernel, nativeLibrary };
  }

  /** Spawns every worker and resolves when all are ready. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await Promise.all(this.workers.map((_, i) => this.spawn(i)));
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Terminates every worker (the current batch is abandoned). */
  async stop(): Promise<void> {
    this.running = false;
    this.bump(GENERATION);
    const workers = this.workers.splice(0, this.workers.length, ...new Array(this.threads).fill(undefined));
    await Promise.all(workers.map((w) => w?.terminate()));
  }

  /**
   * Starts a job on every worker: bumps the generation (so that the previous job ends within
   * one batch) and gives worker i the i-th of `threads` equal slices of [start, end).
   * Returns the job's generation.
   */
  dispatch(job: KernelJob, start: number, end: number, stopOnFound: boolean, batchMs: number): number {
    const generation = this.bump(GENERATION);
    const span = Math.floor((end - start) / this.threads);
    const message = (i: number): ToWorker => ({
      type: 'job',
      generation,
      job,
      start: start + i * span,
      end: i === this.threads - 1 ? end : start + (i + 1) * span,
      stopOnFound,
      batchMs,
    });
    this.lastDispatch = (i) =>
      Atomics.load(this.control, GENERATION) === generation ? message(i) : undefined;
    this.workers.forEach((w, i) => {
      w?.postMessage(message(i));
    });
    return generation;
  }

  /** Ends the current job (workers stop within one batch). */
  clear(): void {
    this.lastDispatch = undefined;
    this.bump(GENERATION);
  }

  get generation(): number {
    return Atomics.load(this.control, GENERATION);
  }

  setPaused(paused: boolean): void {
    Atomics.store(this.control, PAUSED, paused ? 1 : 0);
    this.bump(WAKE, false);
  }

  /** The duty cycle, 0 < intensity <= 1 (stored in thousandths, at least 1). */
  setIntensity(intensity: number): void {
    if (!(intensity > 0 && intensity <= 1)) {
      throw new MinerError('invalid_option', `intensity: expected a number in (0, 1], got ${intensity}`);
    }
    Atomics.store(this.control, INTENSITY, Math.max(1, Math.round(intensity * 1000)));
    this.bump(WAKE, false);
  }

  /** What worker `index` is doing. */
  state(index: number): WorkerState {
    return WORKER_STATES[Atomics.load(this.states, index)] ?? 'idle';
  }

  /** Hashes done by worker `index` since the pool was created. */
  hashes(index: number): number {
    return Number(Atomics.load(this.counters, index));
  }

  private bump(word: number, alsoWake = true): number {
    const value = Atomics.add(this.control, word, 1) + 1;
    if (word !== WAKE && alsoWake) Atomics.add(this.control, WAKE, 1);
    Atomics.notify(this.control, WAKE);
    return value;
  }

  private spawn(index: number): Promise<void> {
    const script = this.options.workerUrl ? { url: this.options.workerUrl } : workerScript();
    // A new worker has posted nothing yet: its count of received messages starts again.
    Atomics.store(this.acks, index * ACK_STRIDE, 0);
    const data: WorkerInit & { entry?: string } = {
      index,
      kernel: this.kernel.name,
      ...(this.kernel.nativeLibrary === undefined ? {} : { nativeLibrary: this.kernel.nativeLibrary }),
      ...(this.options.referenceCheck === undefined ? {} : { referenceCheck: this.options.referenceCheck }),
      control: this.control,
      counters: this.counters,
      states: this.states,
      acks: this.acks,
      ...(script.entry ? { entry: script.entry.href } : {}),
    };
    const worker = new Worker(script.url, {
      workerData: data,
      name: `tensormine-miner-${index}`,
      // From source, run without the parent's loaders (tsx, vitest): Node transforms the types
      // (source-loader.mjs). From the build, keep the parent's flags except --input-type (valid
      // only with --eval; a worker refuses to start with it, e.g. under `node --input-type=module -e`).
      execArgv: script.entry
        ? ['--experimental-transform-types', '--disable-warning=ExperimentalWarning']
        : process.execArgv.filter((a) => !a.startsWith('--input-type')),
    });
    this.workers[index] = worker;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') {
          ready = true;
          this.warmUps[index] = message.warmUp;
          const job = this.lastDispatch?.(index);
          if (job) worker.postMessage(job);
          resolve();
          return;
        }
        if (message.type === 'found' && this.workers[index] === worker) {
          Atomics.add(this.acks, index * ACK_STRIDE, 1);
          Atomics.notify(this.acks, index * ACK_STRIDE);
        }
        this.options.onMessage(message);
      });
      worker.on('error', (error) => {
        if (!ready)
          reject(
            new MinerError(
              'worker_failed',
              `worker ${index} failed to start: ${error.message}`,
              {},
              { cause: error },
            ),
          );
      });
      worker.on('exit', (code) => {
        if (this.workers[index] === worker) this.workers[index] = undefined;
        if (!ready) {
          reject(
            new MinerError('worker_failed', `worker ${index} exited with code ${code} before it was ready`),
          );
        } else if (this.running) {
          this.options.onExit(index, code);
        }
      });
    });
  }

  /** Replaces a worker that ended (the engine calls this after reporting the crash). */
  respawn(index: number): Promise<void> {
    if (!this.running || this.workers[index] !== undefined) return Promise.resolve();
    return this.spawn(index);
  }
}
