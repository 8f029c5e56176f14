import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';
import { toHex } from '@tensormine/protocol';
import type { DeviceBackend, DeviceEvents, DeviceHashrate, DeviceState } from './device.js';
import { MinerError } from './errors.js';
import { resultFromNonce, resultFromReferenceWork } from './found.js';
import { HashrateMeter, WINDOW_MS } from './hashrate.js';
import { checkJob, kernelJob, type MiningJob, nonceRange } from './job.js';
import { checkKernelChoice, type KernelChoice, type KernelName, resolveKernel } from './kernels/choice.js';
import { type KernelSelection, type SelectKernelOptions, selectKernel } from './kernels/select.js';
import type { WarmUpReport } from './kernels/warm-up.js';
import { WorkerPool } from './worker/pool.js';
import type { FoundItem, FromWorker, ReferenceCheck, WorkerState } from './worker/protocol.js';

export interface MiningEngineOptions {
  /** The backend id (default `cpu`). */
  readonly id?: string;
  /** Worker threads (default `os.availableParallelism()`). */
  readonly threads?: number;
  /**
   * The kernels (default `auto`): `native` (C on SHA-NI and AVX2, built on this machine and
   * checked against the vectors when the engine starts; `wasm` with a notice where it cannot
   * run), `wasm` (WebAssembly SIMD), `js` (generated JavaScript), or `auto`: native, else wasm
   * where the runtime supports WebAssembly SIMD, else js (kernels/select.ts). Results are
   * identical.
   */
  readonly kernel?: KernelChoice;
  /** How the native kernels are found and built (environment, cache, cpuinfo); default process.env. */
  readonly select?: SelectKernelOptions;
  /** Duty cycle, 0 < intensity <= 1 (default 1): each worker sleeps (1 - x) / x of its batch time. */
  readonly intensity?: number;
  /** Target duration of one batch, ms (default 25): the longest a new job or a stop waits. */
  readonly batchMs?: number;
  /** Hashrate sampling interval, ms (default 1000). */
  readonly sampleIntervalMs?: number;
  /** The worker script (default: dist/worker.js from the build, src/worker/entry.ts from source). */
  readonly workerUrl?: URL;
  /** Delay before a crashed worker is replaced, ms (default 1000). */
  readonly respawnDelayMs?: number;
  /**
   * Where a tensor solution is recomputed with the reference before it is emitted: `worker`
   * (default: in the worker that found it, so the check's cost grows with the workers) or
   * `engine` (on this thread, as the engine did before; the miner bench measures both side by
   * side). Either way every result is checked by the reference before it is emitted.
   */
  readonly referenceCheck?: ReferenceCheck;
}

/** More crashes than this within CRASH_WINDOW_MS and the engine gives up (state `error`). */
const MAX_CRASHES = 5;
const CRASH_WINDOW_MS = 60_000;

/**
 * The CPU mining engine, a `DeviceBackend`: long-lived worker threads (one per core by
 * default) that each search a disjoint slice of the job's nonce range with the fast kernels.
 * Control (new job, stop, pause, intensity) goes through shared memory and takes effect
 * within one batch; the hash counters are shared memory too, sampled once a second into the
 * 10 s / 60 s / 15 min windows. Every nonce a worker reports is rebuilt and verified with the
 * reference implementation before it is emitted as `found`; one that fails is counted in
 * `kernelErrors` and reported as an `error`, never emitted. A tensor solution's recomputation
 * with the reference runs in the worker that found it (a whole tensor: milliseconds), a
 * hexchain result's (one SHA-256) here.
 *
 * The main thread only dispatches, samples and checks results, so its event loop stays free.
 */
export class MiningEngine extends EventEmitter<DeviceEvents> implements DeviceBackend {
  readonly id: string;
  readonly kind = 'cpu';
  /** How `start()` chose the kernel (undefined before): the kernel, and why not native. */
  kernelSelection: KernelSelection | undefined;
  /** Results that the reference verifier rejected (or kernel output that disagreed with it). */
  kernelErrors = 0;
  /** Verified results emitted. */
  foundCount = 0;
  lastFoundAtMs: number | undefined;
  lastError: Error | undefined;

  private pool: WorkerPool;
  private threadCount: number;
  private choice: KernelChoice;
  private readonly workerUrl: URL | undefined;
  private readonly selectOptions: SelectKernelOptions;
  private readonly batchMs: number;
  private readonly sampleIntervalMs: number;
  private meters: HashrateMeter[];
  private readonly totalMeter: HashrateMeter;
  /** Hashes of the workers a reconfigure() replaced (the totals carry on). */
  private hashesBefore = 0;
  private best60: number | undefined;
  private current: { readonly job: MiningJob; readonly generation: number } | undefined;
  private pending: MiningJob | undefined;
  private readonly exhausted = new Set<number>();
  private stateValue: DeviceState = 'stopped';
  private pausedValue = false;
  private intensityValue: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly respawnDelayMs: number;
  private readonly referenceCheck: ReferenceCheck;
  private crashes: number[] = [];

  constructor(options: MiningEngineOptions = {}) {
    super();
    this.id = options.id ?? 'cpu';
    this.threadCount = options.threads ?? availableParallelism();
    this.workerUrl = options.workerUrl;
    this.batchMs = options.batchMs ?? 25;
    this.sampleIntervalMs = options.sampleIntervalMs ?? 1000;
    this.respawnDelayMs = options.respawnDelayMs ?? 1000;
    this.referenceCheck = options.referenceCheck ?? 'worker';
    if (this.referenceCheck !== 'worker' && this.referenceCheck !== 'engine')
      throw new MinerError(
        'invalid_option',
        `referenceCheck: expected worker or engine, got ${String(this.referenceCheck)}`,
      );
    if (!(this.batchMs > 0))
      throw new MinerError('invalid_option', `batchMs: expected > 0, got ${this.batchMs}`);
    this.choice = options.kernel ?? 'auto';
    this.selectOptions = options.select ?? {};
    checkKernelChoice(this.choice);
    if (this.choice !== 'native') resolveKernel(this.choice); // wasm without SIMD fails here
    this.intensityValue = options.intensity ?? 1;
    this.pool = this.newPool(this.threadCount, this.kernel);
    this.meters = this.newMeters(this.threadCount);
    this.totalMeter = new HashrateMeter({ intervalMs: this.sampleIntervalMs });
  }

  /** Worker threads (reconfigure() changes them). */
  get threads(): number {
    return this.threadCount;
  }

  /** The kernel setting (reconfigure() changes it). */
  get kernelChoice(): KernelChoice {
    return this.choice;
  }

  /**
   * Changes the number of worker threads and the kernel while mining: the kernel is selected
   * first (a build of the native kernels, its self-test; `kernelSelection.notice` says why a
   * fallback was taken), then the workers stop and new ones start on the job in hand, within a
   * batch or two. The hash totals and the engine's rate windows carry on; the per-worker windows
   * start anew. Resolves once the new workers mine (at once when the engine is stopped).
   * @throws MinerError `invalid_option` for a thread count or kernel that cannot be; nothing changed
   */
  async reconfigure(change: { readonly threads?: number; readonly kernel?: KernelChoice }): Promise<void> {
    const threads = change.threads ?? this.threadCount;
    const choice = change.kernel ?? this.choice;
    checkKernelChoice(choice);
    if (!Number.isInteger(threads) || threads < 1 || threads > 1024) {
      throw new MinerError('invalid_option', `threads: expected an integer in [1, 1024], got ${threads}`);
    }
    if (threads === this.threadCount && choice === this.choice) return;
    if (choice !== 'native') resolveKernel(choice);
    const stopped = this.stateValue === 'stopped';
    const selection = stopped ? undefined : await selectKernel(choice, this.selectOptions);
    const job = this.current?.job ?? this.pending;
    if (!stopped) {
      if (this.timer) clearInterval(this.timer);
      this.timer = undefined;
      this.sample();
      this.setState('starting');
      this.current = undefined;
      await this.pool.stop();
    }
    for (let i = 0; i < this.threadCount; i++) this.hashesBefore += this.pool.hashes(i);
    this.threadCount = threads;
    this.choice = choice;
    this.kernelSelection = selection;
    this.pool = this.newPool(threads, selection?.kernel ?? this.kernel, selection?.nativeLibrary);
    this.meters = this.newMeters(threads);
    this.exhausted.clear();
    if (stopped) return;
    try {
      await this.pool.start();
    } catch (error) {
      this.setState('error');
      throw error;
    }
    this.afterPoolStart();
    this.setState('idle');
    this.setJob(job);
  }

  private newPool(threads: number, kernel: KernelName, nativeLibrary?: string): WorkerPool {
    const pool = new WorkerPool({
      threads,
      kernel,
      referenceCheck: this.referenceCheck,
      ...(nativeLibrary === undefined ? {} : { nativeLibrary }),
      ...(this.workerUrl ? { workerUrl: this.workerUrl } : {}),
      onMessage: (m) => this.onWorkerMessage(m),
      onExit: (index, code) => this.onWorkerExit(index, code),
    });
    pool.setIntensity(this.intensityValue);
    return pool;
  }

  private newMeters(threads: number): HashrateMeter[] {
    return Array.from({ length: threads }, () => new HashrateMeter({ intervalMs: this.sampleIntervalMs }));
  }

  get state(): DeviceState {
    return this.stateValue;
  }

  get job(): MiningJob | undefined {
    return this.current?.job ?? this.pending;
  }

  get paused(): boolean {
    return this.pausedValue;
  }

  get intensity(): number {
    return this.intensityValue;
  }

  /**
   * The kernel the workers run: what `start()` selected, or before it the kernel the setting
   * resolves to now (`native` only once the native kernels are loaded in this process).
   */
  get kernel(): KernelName {
    if (this.kernelSelection !== undefined) return this.kernelSelection.kernel;
    if (this.choice === 'native') return resolveKernel('auto');
    return resolveKernel(this.choice);
  }

  /** The workers' warm-ups of the `js` kernel before they took work (none for the other kernels). */
  warmUps(): readonly WarmUpReport[] {
    return this.pool.warmUps.filter((w) => w !== undefined);
  }

  supports(job: MiningJob): boolean {
    return job.kind === 'hexchain' || job.kind === 'tensor';
  }

  /** Starts the workers (resolves when all are ready) and the job set before, if any. */
  async start(): Promise<void> {
    if (this.stateValue !== 'stopped') return;
    this.setState('starting');
    try {
      this.kernelSelection = await selectKernel(this.choice, this.selectOptions);
      this.pool.setKernel(this.kernelSelection.kernel, this.kernelSelection.nativeLibrary);
      await this.pool.start();
    } catch (error) {
      this.setState('error');
      throw error;
    }
    this.afterPoolStart();
    this.sample();
    this.setState('idle');
    const job = this.pending;
    this.pending = undefined;
    this.setJob(job);
  }

  /** Stops mining and ends the workers (the current batch is abandoned). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.pending = this.current?.job ?? this.pending;
    this.current = undefined;
    await this.pool.stop();
    this.setState('stopped');
  }

  /**
   * Mines `job` from now on (the previous job ends within one batch); undefined idles.
   * Before `start`, the job is kept and started with the workers.
   * @throws MinerError `invalid_job`
   */
  setJob(job: MiningJob | undefined): void {
    if (job !== undefined) checkJob(job);
    if (this.stateValue === 'stopped' || this.stateValue === 'starting') {
      this.pending = job;
      return;
    }
    this.exhausted.clear();
    if (job === undefined) {
      this.current = undefined;
      this.pool.clear();
    } else {
      const { start, end } = nonceRange(job);
      const generation = this.pool.dispatch(
        kernelJob(job),
        start,
        end,
        job.stopOnFound ?? true,
        this.batchMs,
      );
      this.current = { job, generation };
    }
    this.updateState();
  }

  /** Workers finish their batch and wait; hash counters stop. */
  pause(): void {
    this.pausedValue = true;
    this.pool.setPaused(true);
    this.updateState();
  }

  resume(): void {
    this.pausedValue = false;
    this.pool.setPaused(false);
    this.updateState();
  }

  /** Changes the duty cycle, 0 < intensity <= 1, from the next batch. */
  setIntensity(intensity: number): void {
    this.pool.setIntensity(intensity);
    this.intensityValue = intensity;
  }

  hashrate(): DeviceHashrate {
    return { total: this.totalMeter.windows(), workers: this.meters.map((m) => m.windows()) };
  }

  totalHashes(): number {
    let total = this.hashesBefore;
    for (let i = 0; i < this.threads; i++) total += this.pool.hashes(i);
    return total;
  }

  /** Hashes done by each worker since the engine was created. */
  workerHashes(): number[] {
    return Array.from({ length: this.threads }, (_, i) => this.pool.hashes(i));
  }

  /** What each worker thread is doing (`idle`, `mining`, `paused`, `sleeping`). */
  workerStates(): WorkerState[] {
    return Array.from({ length: this.threads }, (_, i) => this.pool.state(i));
  }

  /** The best 60 s average so far (or the best 10 s one before a minute has passed). */
  expectedHashrate(): number | undefined {
    return this.best60 ?? this.totalMeter.max;
  }

  /** After the worker pool (re)started: its pause state, a fresh crash record, the sampling timer. */
  private afterPoolStart(): void {
    this.pool.setPaused(this.pausedValue);
    this.crashes = [];
    this.timer = setInterval(() => this.sample(), this.sampleIntervalMs);
    this.timer.unref();
  }
  private sample(): void {
    const now = Date.now();
    let total = this.hashesBefore;
    for (let i = 0; i < this.threads; i++) {
      const h = this.pool.hashes(i);
      total += h;
      this.meters[i]!.record(now, h);
    }
    this.totalMeter.record(now, total);
    const r60 = this.totalMeter.rate(WINDOW_MS['60s']);
    if (r60 !== undefined && (this.best60 === undefined || r60 > this.best60)) this.best60 = r60;
    this.emit('hashrate', this.hashrate());
  }

  private onWorkerMessage(message: FromWorker): void {
    if (message.type === 'ready') return;
    const current = this.current;
    if (current === undefined || message.generation !== current.generation) return; // a finished job
    if (message.type === 'error') {
      this.report(new MinerError('worker_failed', `worker ${message.index}: ${message.message}`));
      return;
    }
    if (message.type === 'exhausted') {
      this.exhausted.add(message.index);
      if (this.exhausted.size === this.threads) {
        this.current = undefined;
        this.updateState();
        this.emit('exhausted', current.job.challengeId);
      }
      return;
    }
    for (const item of message.results) {
      // A job that stops at its first result ends with it: the rest of the message is dropped.
      if (this.current !== current) return;
      this.onFound(current.job, message.index, item);
    }
  }

  private onFound(job: MiningJob, index: number, message: FoundItem): void {
    const meta = { device: this.id, worker: index };
    // A tensor solution comes with the reference's work, computed by its worker (worker/entry.ts):
    // the check's cost, a whole recomputation, stays off this thread.
    const verdict =
      job.kind === 'tensor' && message.reference !== undefined
        ? resultFromReferenceWork(job, message.nonce, message.reference, meta)
        : resultFromNonce(job, message.nonce, meta);
    if (!verdict.ok) {
      this.kernelErrors++;
      this.report(
        new MinerError(
          'kernel_mismatch',
          `worker ${index} reported nonce ${message.nonce} for challenge ${job.challengeId}, which the reference verifier rejects: ${verdict.code}: ${verdict.message}`,
          { nonce: message.nonce, challengeId: job.challengeId, code: verdict.code },
        ),
      );
      return;
    }
    const found = verdict.found;
    // The nonce is valid; the kernel's own output must also agree with the reference.
    const agrees =
      found.kind === 'hexchain'
        ? message.powHash !== undefined && toHex(message.powHash) === found.submission.block.pow_hash
        : message.computationHash !== undefined &&
          toHex(message.computationHash) === found.proof.computation_hash;
    if (!agrees) {
      this.kernelErrors++;
      this.report(
        new MinerError(
          'kernel_mismatch',
          `worker ${index}: the kernel's ${found.kind === 'hexchain' ? 'pow_hash' : 'computation_hash'} for nonce ${message.nonce} differs from the reference (the result itself is valid and was rebuilt with the reference)`,
          { nonce: message.nonce, challengeId: job.challengeId },
        ),
      );
    }
    if (job.stopOnFound ?? true) {
      this.current = undefined;
      this.pool.clear();
      this.updateState();
    }
    this.foundCount++;
    this.lastFoundAtMs = found.foundAtMs;
    this.emit('found', found);
  }

  private onWorkerExit(index: number, code: number): void {
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => t > now - CRASH_WINDOW_MS), now];
    if (this.crashes.length > MAX_CRASHES) {
      this.report(
        new MinerError(
          'worker_failed',
          `worker ${index} exited with code ${code}; ${this.crashes.length} crashes within a minute, not restarting`,
        ),
      );
      this.current = undefined;
      this.pool.clear();
      this.setState('error');
      return;
    }
    this.report(new MinerError('worker_failed', `worker ${index} exited with code ${code}; restarting it`));
    setTimeout(() => {
      if (this.stateValue === 'stopped' || this.stateValue === 'error') return;
      this.pool.respawn(index).catch((error: Error) => this.report(error));
    }, this.respawnDelayMs).unref();
  }

  /** Emits `error` when someone listens (an unhandled `error` event would end the process). */
  private report(error: Error): void {
    this.lastError = error;
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  private updateState(): void {
    if (this.stateValue === 'stopped' || this.stateValue === 'starting' || this.stateValue === 'error')
      return;
    this.setState(this.pausedValue ? 'paused' : this.current === undefined ? 'idle' : 'ok');
  }

  private setState(state: DeviceState): void {
    if (state === this.stateValue) return;
    this.stateValue = state;
    this.emit('state', state);
  }
}
