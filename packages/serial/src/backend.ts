import { EventEmitter } from 'node:events';
import {
  type DeviceBackend,
  type DeviceEvents,
  type DeviceHashrate,
  type DeviceNotice,
  type DeviceSelfTest,
  type DeviceState,
  type DeviceUnitCounters,
  type DeviceUnitInfo,
  type FoundResult,
  HashrateMeter,
  type MiningJob,
  resultFromNonce,
  WINDOW_MS,
} from '@tensormine/miner';
import { q16ToNumber, toHex } from '@tensormine/protocol';
import type { BoardInfo, BoardState, BoardStats, ResultJournal } from './board-info.js';
import {
  ERROR_NAMES,
  type HelloMessage,
  type ProgressMessage,
  RESET_REASONS,
  type ResultMessage,
} from './codec/messages.js';
import { MAX_CHUNK, type NonceChunk, NonceCursor } from './cursor.js';
import { SerialError } from './errors.js';
import { boardSupports, capabilityNames, helloRate, jobMessage, rateKey } from './jobs.js';
import { LinkHealth } from './link-health.js';
import { type BoardSession, chipIdHex, type SelfTestReport, type SessionState } from './session.js';

export interface SerialDeviceBackendOptions {
  /** The board's HELLO: its identity (chip id) and abilities. */
  readonly hello: HelloMessage;
  /** Default `serial:<chip id hex>`. */
  readonly id?: string;
  /** Target duration of one board job, ms (default 3000): chunks are sized from the board's rate. */
  readonly jobMs?: number;
  /**
   * When set, a verified result is added here (awaited) before it is emitted and before its
   * RESULT is acknowledged: the board keeps retransmitting until the result is durable.
   */
  readonly journal?: ResultJournal | (() => ResultJournal | undefined);
  /** Hashrate sampling interval, ms (default 1000). */
  readonly sampleIntervalMs?: number;
  readonly now?: () => number;
}

interface BoardJob {
  readonly jobId: number;
  readonly job: MiningJob;
  readonly chunk: NonceChunk;
  /** Nonces the board reported done. */
  done: number;
}

const RECENT_BOARD_JOBS = 256;
const RECENT_FOUND = 4096;

/**
 * One ESP32 board as a miner `DeviceBackend`, known by its chip id: the port it is on may
 * change (an unplug and replug, another USB socket), its id, counters and hashrate stay. The
 * fleet attaches the board's current BoardSession; without one the board is `no device` and
 * keeps its job, which resumes where it stopped when the board is back.
 *
 * Work: the job's nonce range is cut into chunks sized from the board's reported rate so that
 * a board job lasts about `jobMs`; a new job replaces the board's current one at once, no job
 * or a pause cancels it. Results: every RESULT is rebuilt and verified with the protocol's
 * reference (`resultFromNonce`: verifyBlock for hexchain, computeWork and the thresholds for
 * tensor) and compared field by field with what the board sent; only a verified result is
 * emitted as `found` (the reference's rebuild, never the board's bytes), once, however often
 * the board sends it. A RESULT that fails is counted in `stats.wrongResults` and reported as
 * an `error`. Hashrate comes from the board's PROGRESS counters.
 */
export class SerialDeviceBackend extends EventEmitter<DeviceEvents> implements DeviceBackend {
  readonly id: string;
  readonly kind = 'serial';
  readonly chipId: string;
  hello: HelloMessage;
  lastFoundAtMs: number | undefined;
  lastError: Error | undefined;
  lastValidWork: { challengeId: string; atMs: number } | undefined;
  readonly stats: BoardStats = {
    results: 0,
    found: 0,
    wrongResults: 0,
    duplicates: 0,
    unknownJobs: 0,
    staleResults: 0,
    jobsSent: 0,
    deviceErrors: 0,
    reboots: 0,
    linkLosses: 0,
  };

  private session: BoardSession | undefined;
  private detachSession: (() => void) | undefined;
  private readonly jobMs: number;
  private readonly journalOption: SerialDeviceBackendOptions['journal'];
  private readonly now: () => number;
  private readonly sampleIntervalMs: number;
  private readonly meter: HashrateMeter;
  private best60: number | undefined;
  private running = false;
  private paused = false;
  private current: MiningJob | undefined;
  private cursor: NonceCursor | undefined;
  private ownCursor = false;
  /** The board's job as far as the host knows. */
  private active: BoardJob | undefined;
  /** A range left unfinished (link lost, reboot, pause), mined first when the job is still current. */
  private leftover: { job: MiningJob; chunk: NonceChunk } | undefined;
  private sending = false;
  private exhaustedFor: MiningJob | undefined;
  private readonly boardJobs = new Map<number, BoardJob>();
  private readonly foundIds = new Set<string>();
  /** Challenges of solo jobs (stopOnFound) that have their result. */
  private readonly solved = new Set<string>();
  private readonly rates = new Map<string, number>();
  private hashBase = 0;
  private lastBootHashes = 0;
  private lastRate: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stateValue: DeviceState = 'stopped';
  /** The link's counters over every session of the board, and the `link-degraded` watch. */
  private readonly link = new LinkHealth();
  /** The board has been ready on a session (seen), and is there now (not lost). */
  private seen = false;
  private present = false;
  private lastPort: string | undefined;
  private lastProgressAtMs = 0;

  constructor(options: SerialDeviceBackendOptions) {
    super();
    this.hello = options.hello;
    this.chipId = chipIdHex(options.hello);
    this.id = options.id ?? `serial:${this.chipId}`;
    this.jobMs = options.jobMs ?? 3000;
    this.journalOption = options.journal;
    this.now = options.now ?? Date.now;
    this.sampleIntervalMs = options.sampleIntervalMs ?? 1000;
    this.meter = new HashrateMeter({ intervalMs: this.sampleIntervalMs });
    if (!(this.jobMs > 0)) throw new SerialError('invalid_option', `jobMs: expected > 0, got ${this.jobMs}`);
  }

  get state(): DeviceState {
    return this.stateValue;
  }

  /** The state with `connecting` (the miner's `starting`). */
  get boardState(): BoardState {
    const s = this.stateValue;
    return s === 'starting' ? 'connecting' : s;
  }

  get job(): MiningJob | undefined {
    return this.current;
  }

  /** Whether the board has a job of this host running. */
  get busy(): boolean {
    return this.active !== undefined;
  }

  /** The port the board is on now, if any. */
  get port(): string | undefined {
    return this.session?.path;
  }

  get attachedSession(): BoardSession | undefined {
    return this.session;
  }

  supports(job: MiningJob): boolean {
    return boardSupports(this.hello, job);
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.timer = setInterval(() => this.sample(), this.sampleIntervalMs);
    this.timer.unref();
    this.updateState();
    this.pump();
  }

  /** Stops mining (the board's job is cancelled); the session stays with the fleet. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.timer);
    clearTimeout(this.retryTimer);
    if (this.active && this.session?.state === 'ready') {
      this.active = undefined;
      await this.session.cancel(0).catch(() => {});
    }
    this.active = undefined;
    this.updateState();
  }

  /** Mines `job` (its whole nonce range, in chunks) from now on; undefined idles the board. */
  setJob(job: MiningJob | undefined): void {
    this.assign(job, job === undefined ? undefined : new NonceCursor(job), true);
  }

  /**
   * Mines `job` taking chunks from a shared cursor (the fleet's). `own` marks a cursor that
   * only this board uses.
   */
  assign(job: MiningJob | undefined, cursor: NonceCursor | undefined, own = false): void {
    if (job !== undefined && !this.supports(job)) job = undefined;
    this.current = job;
    this.cursor = job === undefined ? undefined : cursor;
    this.ownCursor = own;
    this.exhaustedFor = undefined;
    if (this.leftover && this.leftover.job !== job) this.leftover = undefined;
    this.updateState();
    this.pump();
  }

  /** Pauses: the board's job is cancelled (what it had left is kept for `resume`), the board idles. */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.updateState();
    this.pump();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.updateState();
    this.pump();
  }

  hashrate(): DeviceHashrate {
    return { total: this.meter.windows(), workers: [] };
  }

  totalHashes(): number {
    return this.hashBase + this.lastBootHashes;
  }

  expectedHashrate(): number | undefined {
    return this.best60 ?? this.meter.max ?? (this.hello.hexRate > 0 ? this.hello.hexRate : undefined);
  }

  /** Everything `miner devices` shows. */
  info(): BoardInfo {
    return {
      id: this.id,
      chipId: this.chipId,
      port: this.session?.path,
      state: this.boardState,
      firmware: this.hello.firmware,
      board: this.hello.board,
      capabilities: capabilityNames(this.hello.capabilities),
      maxDim: this.hello.maxDim,
      maxFilters: this.hello.maxFilters,
      hexRate: this.hello.hexRate,
      tensorRate: this.hello.tensorRate,
      maxBaud: this.hello.maxBaud,
      baudRate: this.session?.baudRate,
      rate: this.lastRate,
      hashrate: this.meter.windows(),
      totalHashes: this.totalHashes(),
      lastFoundAtMs: this.lastFoundAtMs,
      lastValidWork: this.lastValidWork,
      selfTest: this.session?.lastSelfTest,
      stats: { ...this.stats },
      counters: this.counters(),
      link: this.session?.stats(),
    };
  }

  /** The board's counters over all its connections. */
  counters(): DeviceUnitCounters {
    const link = this.link.totals(this.session?.stats());
    return {
      found: this.stats.found,
      hardwareErrors: this.stats.wrongResults,
      crcErrors: link.crcErrors,
      resyncs: link.resyncs,
      retransmissions: link.retransmissions,
      reboots: this.stats.reboots,
      linkLosses: this.stats.linkLosses,
    };
  }

  /** The board as a unit of the fleet (the miner's stats and control API). */
  unitInfo(): DeviceUnitInfo {
    return {
      id: this.id,
      kind: this.kind,
      state: this.state,
      chipId: this.chipId,
      ...(this.port === undefined ? {} : { port: this.port }),
      firmware: this.hello.firmware,
      board: this.hello.board,
      hashrate: this.meter.windows(),
      totalHashes: this.totalHashes(),
      expectedHashrate: this.expectedHashrate(),
      lastFoundAtMs: this.lastFoundAtMs,
      counters: this.counters(),
      ...(this.selfTestProblem() ?? {}),
    };
  }

  /** Why the self-test did not pass, in the states that show it (`self-test failed`, `self-test`). */
  private selfTestProblem(): { selfTest: DeviceSelfTest } | undefined {
    const report = this.session?.lastSelfTest;
    if (report === undefined || report.ok) return undefined;
    if (this.stateValue !== 'self-test failed' && this.stateValue !== 'self-test') return undefined;
    const reason = report.reason ?? 'wrong answer';
    return {
      selfTest: report.retryAtMs === undefined ? { reason } : { reason, retryAtMs: report.retryAtMs },
    };
  }

  private notice(kind: DeviceNotice['kind'], message: string): void {
    const port = this.session?.path ?? this.lastPort;
    this.emit('notice', {
      kind,
      unit: this.id,
      chipId: this.chipId,
      ...(port === undefined ? {} : { port }),
      message,
    });
  }

  /** The board is gone (link lost, port removed): once until it is back. */
  private markLost(reason: string): void {
    if (!this.present) return;
    this.present = false;
    // The session's messages start with its path; the notice carries the port already.
    const port = this.session?.path ?? this.lastPort;
    this.notice(
      'lost',
      port !== undefined && reason.startsWith(`${port}: `) ? reason.slice(port.length + 2) : reason,
    );
  }

  /** Attaches the board's session (replacing any previous one); the board mines through it once it is `ready`. */
  attach(session: BoardSession): void {
    if (this.session === session) return;
    this.detach();
    this.session = session;
    this.lastPort = session.path;
    this.link.attach(session.stats());
    const onState = (state: SessionState) => this.onSessionState(state);
    const onResult = (result: ResultMessage, ack: () => void) => void this.onResult(result, ack);
    const onProgress = (progress: ProgressMessage) => this.onProgress(progress);
    const onJobDone = (done: { jobId: number; reason: number }) => this.onJobDone(done.jobId);
    const onDeviceError = (e: { code: number; jobId: number; message: string }) => {
      this.stats.deviceErrors++;
      this.report(
        new SerialError(
          'device_error',
          `${this.id}: board error ${e.code} (${ERROR_NAMES[e.code] ?? 'unknown'})${e.jobId ? ` for job ${e.jobId}` : ''}: ${e.message}`,
          { code: e.code, jobId: e.jobId },
        ),
      );
      if (e.code === 6 && this.active?.jobId === e.jobId) this.active = undefined;
    };
    const onHello = (hello: HelloMessage) => {
      if (chipIdHex(hello) === this.chipId) this.hello = hello;
    };
    const onBoot = (boot: { reason: number }) => {
      const s = session.state;
      if (s !== 'ready' && s !== 'self-test' && s !== 'self-test failed') return; // the handshake's own BOOT
      this.stats.reboots++;
      this.saveResume();
      this.notice('rebooted', `reset reason: ${RESET_REASONS[boot.reason] ?? `code ${boot.reason}`}`);
    };
    const onLost = (error: Error) => {
      this.stats.linkLosses++;
      this.saveResume();
      this.markLost(error.message);
    };
    const onSelfTest = (report: SelfTestReport) => {
      // A test that only timed out runs again (the session's `self_test_timeout` error says when;
      // the state `self-test` shows it meanwhile).
      if (!report.ok && report.retryInMs === undefined)
        this.notice('self-test-failed', report.reason ?? 'wrong answer');
      // The session stays `self-test` while the test waits to run again: the state changes here.
      if (report.retryAtMs !== undefined) this.updateState();
    };
    const onError = (error: Error) => {
      // A failed self-test is the `self-test-failed` notice (with its reason), not an error too.
      if (error instanceof SerialError && error.code === 'self_test_failed') return;
      this.report(error);
    };
    session.on('state', onState);
    session.on('result', onResult);
    session.on('progress', onProgress);
    session.on('jobDone', onJobDone);
    session.on('deviceError', onDeviceError);
    session.on('hello', onHello);
    session.on('boot', onBoot);
    session.on('lost', onLost);
    session.on('selfTest', onSelfTest);
    session.on('error', onError);
    this.detachSession = () => {
      session.off('state', onState);
      session.off('result', onResult);
      session.off('progress', onProgress);
      session.off('jobDone', onJobDone);
      session.off('deviceError', onDeviceError);
      session.off('hello', onHello);
      session.off('boot', onBoot);
      session.off('lost', onLost);
      session.off('selfTest', onSelfTest);
      session.off('error', onError);
    };
    this.onSessionState(session.state);
  }

  /** Detaches the session (the board is `no device` until another is attached). */
  detach(): void {
    if (!this.session) return;
    this.link.detach(this.session.stats());
    this.markLost(`${this.session.path} is gone`);
    this.saveResume();
    this.detachSession?.();
    this.detachSession = undefined;
    this.session = undefined;
    this.updateState();
  }

  // ---- work ----

  private onSessionState(state: SessionState): void {
    if (state === 'ready' || state === 'self-test' || state === 'self-test failed') {
      if (!this.seen) {
        this.seen = true;
        this.present = true;
        this.notice('attached', `${this.hello.board} fw ${this.hello.firmware}`);
      } else if (!this.present) {
        this.present = true;
        this.notice('back', `${this.hello.board} fw ${this.hello.firmware}, same chip id`);
      }
    }
    if (state !== 'ready') this.saveResume();
    this.updateState();
    this.pump();
  }

  /** Keeps what the board had left of its job, to resume it when the board is back. */
  private saveResume(): void {
    const a = this.active;
    if (!a) return;
    this.active = undefined;
    const left = a.chunk.count - a.done;
    if (left > 0 && a.job === this.current) {
      this.leftover = { job: a.job, chunk: { start: a.chunk.start + a.done, count: left } };
    }
  }

  /** Brings the board's job in line with what it should do. */
  private pump(): void {
    const session = this.session;
    if (this.sending || !session || session.state !== 'ready') return;
    const job = this.running && !this.paused ? this.current : undefined;
    if (job === undefined) {
      if (this.active) {
        this.saveResume(); // paused: resume where the board stopped
        this.active = undefined;
        this.sending = true;
        session
          .cancel(0)
          .catch((error: Error) => this.report(error))
          .finally(() => {
            this.sending = false;
            this.pump();
          });
      }
      return;
    }
    if (this.active?.job === job) return;
    let chunk: NonceChunk | undefined;
    if (this.leftover?.job === job) {
      chunk = this.leftover.chunk;
      this.leftover = undefined;
    } else {
      chunk = this.cursor?.take(this.chunkSize(job));
    }
    if (chunk === undefined) {
      if (this.active) {
        // Nothing left for this board: stop its stale job.
        this.active = undefined;
        this.sending = true;
        session
          .cancel(0)
          .catch(() => {})
          .finally(() => {
            this.sending = false;
            this.pump();
          });
        return;
      }
      if (this.exhaustedFor !== job) {
        this.exhaustedFor = job;
        if (this.ownCursor) this.current = undefined;
        this.updateState();
        this.emit('exhausted', job.challengeId);
      }
      return;
    }
    const jobId = session.nextJobId();
    const boardJob: BoardJob = { jobId, job, chunk, done: 0 };
    this.remember(boardJob);
    this.active = boardJob;
    this.sending = true;
    this.stats.jobsSent++;
    let refused = false;
    session
      .sendJob(jobMessage(job, jobId, chunk))
      .then(
        () => {},
        (error: Error) => {
          if (this.active === boardJob) {
            this.active = undefined;
            if (boardJob.job === this.current) this.leftover = { job, chunk };
          }
          if (error instanceof SerialError && error.code === 'device_error') {
            this.stats.deviceErrors++;
            this.report(error);
            // Busy or refused: try again in a moment rather than spin.
            refused = true;
            clearTimeout(this.retryTimer);
            this.retryTimer = setTimeout(() => this.pump(), 1000);
            this.retryTimer.unref();
          }
        },
      )
      .finally(() => {
        this.sending = false;
        if (!refused) this.pump();
      });
  }

  private chunkSize(job: MiningJob): number {
    const rate = this.rates.get(rateKey(job)) ?? helloRate(this.hello, job);
    const n = Math.round((Math.max(rate, 1) * this.jobMs) / 1000);
    return Math.max(1, Math.min(n, MAX_CHUNK));
  }

  private remember(boardJob: BoardJob): void {
    this.boardJobs.set(boardJob.jobId, boardJob);
    if (this.boardJobs.size > RECENT_BOARD_JOBS) this.boardJobs.delete(this.boardJobs.keys().next().value!);
  }

  private onJobDone(jobId: number): void {
    if (this.active?.jobId !== jobId) return;
    this.active.done = this.active.chunk.count;
    this.active = undefined;
    this.pump();
  }

  private onProgress(p: ProgressMessage): void {
    const now = this.now();
    const hashes = Number(p.hashesSinceBoot);
    if (hashes < this.lastBootHashes) this.hashBase += this.lastBootHashes; // the board rebooted
    this.lastBootHashes = hashes;
    this.meter.record(now, this.totalHashes());
    this.lastProgressAtMs = now;
    const a = this.active;
    if (p.jobId !== 0 && a?.jobId === p.jobId) {
      a.done = Math.min(a.chunk.count, Number(p.noncesDone));
      if (p.rate > 0) this.rates.set(rateKey(a.job), p.rate);
      this.lastValidWork = { challengeId: a.job.challengeId, atMs: now };
    }
    this.lastRate = p.rate;
  }

  // ---- results ----

  private async onResult(result: ResultMessage, ack: () => void): Promise<void> {
    this.stats.results++;
    const entry = this.boardJobs.get(result.jobId);
    if (!entry) {
      this.stats.unknownJobs++;
      this.report(
        new SerialError(
          'unknown_job',
          `${this.id}: RESULT for job ${result.jobId} (nonce ${result.nonce}), which this host did not send; it cannot be verified`,
          { jobId: result.jobId, nonce: result.nonce },
        ),
      );
      ack();
      return;
    }
    const verdict = this.verify(entry, result);
    if (!verdict.ok) {
      this.stats.wrongResults++;
      this.report(
        new SerialError(
          'wrong_result',
          `${this.id}: wrong RESULT for challenge ${entry.job.challengeId}, nonce ${result.nonce}: ${verdict.message}; not submitted`,
          { challengeId: entry.job.challengeId, nonce: result.nonce, jobId: result.jobId },
        ),
      );
      ack();
      return;
    }
    const found = verdict.found;
    this.advancePast(entry, result.nonce);
    if (this.foundIds.has(found.id)) {
      this.stats.duplicates++;
      ack();
      return;
    }
    const solo = entry.job.stopOnFound ?? true;
    if (solo && this.solved.has(found.challengeId)) {
      this.stats.staleResults++;
      ack();
      return;
    }
    this.foundIds.add(found.id);
    if (this.foundIds.size > RECENT_FOUND) this.foundIds.delete(this.foundIds.values().next().value!);
    const journal = typeof this.journalOption === 'function' ? this.journalOption() : this.journalOption;
    if (journal) {
      try {
        await journal.add(found);
      } catch (error) {
        // Not durable: leave the RESULT unacknowledged so the board sends it again.
        this.foundIds.delete(found.id);
        this.report(error as Error);
        return;
      }
    }
    if (solo) {
      this.solved.add(found.challengeId);
      if (this.solved.size > RECENT_FOUND) this.solved.delete(this.solved.values().next().value!);
    }
    this.stats.found++;
    this.lastFoundAtMs = found.foundAtMs;
    this.lastValidWork = { challengeId: found.challengeId, atMs: found.foundAtMs };
    if (solo && entry.job === this.current && this.ownCursor) {
      this.current = undefined;
      this.cursor = undefined;
      this.updateState();
      this.pump();
    }
    this.emit('found', found);
    ack();
  }

  /**
   * A board mines its range in order: a result at `nonce` means it is done up to there, even
   * when no PROGRESS said so yet. What is left to resume after a replug or a pause starts
   * after it, so a board unplugged soon after each result still moves forward.
   */
  private advancePast(entry: BoardJob, nonce: number): void {
    entry.done = Math.max(entry.done, Math.min(entry.chunk.count, nonce - entry.chunk.start + 1));
    const left = this.leftover;
    if (
      left &&
      left.job === entry.job &&
      nonce >= left.chunk.start &&
      nonce < left.chunk.start + left.chunk.count
    ) {
      const skip = nonce - left.chunk.start + 1;
      this.leftover =
        skip >= left.chunk.count
          ? undefined
          : { job: left.job, chunk: { start: nonce + 1, count: left.chunk.count - skip } };
    }
  }

  private verify(
    entry: BoardJob,
    r: ResultMessage,
  ): { readonly ok: true; readonly found: FoundResult } | { readonly ok: false; readonly message: string } {
    const { job, chunk } = entry;
    if ((r.kind === 'hex') !== (job.kind === 'hexchain')) {
      return { ok: false, message: `a ${r.kind} result for a ${job.kind} job` };
    }
    if (r.nonce < chunk.start || r.nonce >= chunk.start + chunk.count) {
      return {
        ok: false,
        message: `nonce outside the job's range [${chunk.start}, ${chunk.start + chunk.count})`,
      };
    }
    const verdict = resultFromNonce(job, r.nonce, { device: this.id, now: this.now() });
    if (!verdict.ok) return { ok: false, message: `${verdict.code}: ${verdict.message}` };
    const found = verdict.found;
    if (found.kind === 'hexchain' && r.kind === 'hex') {
      if (toHex(r.powHash) !== found.submission.block.pow_hash) {
        return {
          ok: false,
          message: 'the board pow_hash differs from the reference (the nonce itself is valid)',
        };
      }
    } else if (found.kind === 'tensor' && r.kind === 'tensor') {
      const p = found.proof;
      const differs =
        toHex(r.tensorResultHash) !== p.tensor_result_hash
          ? 'tensor_result_hash'
          : q16ToNumber(r.mmlScoreQ16) !== p.mml_score
            ? 'mml_score'
            : toHex(r.pathSignature) !== p.path_signature
              ? 'path_signature'
              : r.pathDistance !== p.path_distance
                ? 'path_distance'
                : toHex(r.computationHash) !== p.computation_hash
                  ? 'computation_hash'
                  : undefined;
      if (differs) {
        return {
          ok: false,
          message: `the board ${differs} differs from the reference (the nonce itself is valid)`,
        };
      }
    }
    return { ok: true, found };
  }

  // ---- state and reporting ----

  private sample(): void {
    const now = this.now();
    // A board that stopped reporting (lost, unplugged, rebooting) hashes nothing: its rate decays to zero.
    if (now - this.lastProgressAtMs > 2 * this.sampleIntervalMs + 1000)
      this.meter.record(now, this.totalHashes());
    const degraded = this.link.watch(now, this.session?.stats());
    if (degraded !== undefined) this.notice('link-degraded', degraded);
    const r60 = this.meter.rate(WINDOW_MS['60s']);
    if (r60 !== undefined && (this.best60 === undefined || r60 > this.best60)) this.best60 = r60;
    this.emit('hashrate', this.hashrate());
  }

  private updateState(): void {
    let state: DeviceState;
    const s = this.session?.state;
    if (!this.running) state = 'stopped';
    else if (s === undefined || s === 'no device' || s === 'closed') state = 'no device';
    else if (s === 'self-test' && this.session?.lastSelfTest?.retryAtMs !== undefined)
      state = 'self-test'; // waiting to try again (or trying again) after a test that timed out
    else if (s === 'connecting' || s === 'self-test') state = 'starting';
    else if (s === 'self-test failed') state = 'self-test failed';
    else if (this.paused) state = 'paused';
    else state = this.current === undefined ? 'idle' : 'ok';
    if (state === this.stateValue) return;
    this.stateValue = state;
    this.emit('state', state);
  }

  private report(error: Error): void {
    this.lastError = error;
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }
}
