import { EventEmitter } from 'node:events';
import type { DeviceBackend, DeviceNotice, DeviceState } from './device.js';
import { MinerError } from './errors.js';
import { type FoundResult, verifyFound } from './found.js';
import { sumWindows } from './hashrate.js';
import { expectedHashes, type MiningJob, protocolVersion } from './job.js';
import { Journal } from './journal.js';
import { Backoff, RetrySchedule } from './miner/backoff.js';
import { Connections } from './miner/connections.js';
import { JobDispatcher } from './miner/dispatch.js';
import { DropReporter } from './miner/drops.js';
import type { MinerEvents, MinerLogEvent } from './miner/events.js';
import { POOL_MAX_IN_FLIGHT, POOL_QUEUE_MAX, ShareQueue } from './miner/share-queue.js';
import type { DeviceSummary, MinerStats } from './miner/stats.js';
import { MinerStatistics } from './miner/stats.js';
import { Submissions } from './miner/submissions.js';
import { type MiningStrategy, SOLO, type WorkSource } from './work-source.js';

export type { MinerEvents, MinerLogEvent, ShareDropReason } from './miner/events.js';
export { POOL_MAX_IN_FLIGHT, POOL_QUEUE_MAX } from './miner/share-queue.js';
export type { DeviceOutcomes, DeviceSummary, MinerStats } from './miner/stats.js';

/**
 * The mining loop: gets work from a WorkSource, gives every backend a disjoint slice of the
 * job's nonce range, verifies and submits what they find, and asks for new work when the job
 * expires, when a solo result has been submitted (accepted, rejected or journaled), when a
 * backend exhausts its range and when the source says the work went stale. Results go through the journal, so a result that cannot be
 * delivered is resubmitted when the validator is back (or dropped once expired), also after a
 * restart. Everything that happens is a `log` event carrying data, not text.
 */
export interface MinerOptions {
  readonly source: WorkSource;
  readonly backends: readonly DeviceBackend[];
  /** A journal or the path of its file (default: in memory, lost on exit). */
  readonly journal?: Journal | string;
  /** First retry delay after a failed getWork or submit, ms (default 1000; doubles up to the max). */
  readonly retryDelayMs?: number;
  /** Longest retry delay, ms (default 30 000). */
  readonly maxRetryDelayMs?: number;
  /** Fetch new work this long before the job expires, ms (default 2000). */
  readonly expiryMarginMs?: number;
  /** Start paused. */
  readonly paused?: boolean;
  /**
   * Pool mode: how many shares may wait behind the in-flight ones (default POOL_QUEUE_MAX,
   * 4096); beyond it the oldest waiting share is dropped and reported.
   */
  readonly shareQueueMax?: number;
  /** The clock, Unix ms (tests). */
  readonly now?: () => number;
}

/**
 * The Miner composes its parts, one job each (in miner/, as xmrig keeps network, miner and
 * strategies apart): JobDispatcher (getWork, nonce slices, expiry), Submissions (the journal,
 * submitting, resubmitting on a back-off), Connections (each validator's state), ShareQueue and
 * DropReporter (pool shares beyond the in-flight limit), MinerStatistics. This class wires the
 * backends' events to them and owns the lifecycle (start, stop, pause, resume).
 */
export class Miner extends EventEmitter<MinerEvents> {
  readonly source: WorkSource;
  readonly backends: readonly DeviceBackend[];
  readonly strategy: MiningStrategy;
  private journalValue: Journal | undefined;
  private readonly journalOption: Journal | string | undefined;
  private readonly now: () => number;

  private running = false;
  private pausedValue: boolean;
  private startedAtMs = 0;
  private stoppedAtMs = 0;
  private readonly detach: (() => void)[] = [];

  private readonly statistics = new MinerStatistics();
  private readonly connections: Connections;
  private readonly dispatcher: JobDispatcher;
  private readonly submissions: Submissions;
  private readonly drops: DropReporter;
  private readonly shares: ShareQueue;

  constructor(options: MinerOptions) {
    super();
    this.source = options.source;
    this.backends = options.backends;
    this.strategy = options.source.strategy ?? SOLO;
    this.journalOption = options.journal;
    this.now = options.now ?? Date.now;
    this.pausedValue = options.paused ?? false;
    const queueMax = options.shareQueueMax ?? POOL_QUEUE_MAX;
    if (!Number.isSafeInteger(queueMax) || queueMax < 1) {
      throw new MinerError('invalid_option', `shareQueueMax: expected a positive integer, got ${queueMax}`);
    }
    const ids = new Set(this.backends.map((b) => b.id));
    if (ids.size !== this.backends.length) {
      throw new MinerError(
        'invalid_option',
        `backends: expected distinct ids, got ${this.backends.map((b) => b.id).join(', ')}`,
      );
    }
    const backoff = new Backoff(options.retryDelayMs ?? 1000, options.maxRetryDelayMs ?? 30_000);
    const log = (event: MinerLogEvent) => this.log(event);
    const running = () => this.running;
    const now = this.now;
    this.connections = new Connections(this.source, now, log, (url) => this.submissions.validatorBack(url));
    this.dispatcher = new JobDispatcher({
      source: this.source,
      backends: this.backends,
      strategy: this.strategy,
      backoff,
      expiryMarginMs: options.expiryMarginMs ?? 2000,
      connections: this.connections,
      now,
      log,
      running,
    });
    this.submissions = new Submissions({
      source: this.source,
      journal: () => this.journalValue,
      retries: new RetrySchedule(backoff, now),
      connections: this.connections,
      stats: this.statistics,
      now,
      log,
      running,
    });
    this.drops = new DropReporter(now, log, () => this.shares.length);
    this.shares = new ShareQueue(this.drops, now, queueMax);
  }

  get paused(): boolean {
    return this.pausedValue;
  }

  get journal(): Journal | undefined {
    return this.journalValue;
  }

  /** The job being mined. */
  get currentJob(): MiningJob | undefined {
    return this.dispatcher.job;
  }

  /**
   * Opens the journal (resubmitting what it holds), starts the backends and fetches work.
   * Resolves once the backends run; work and resubmissions continue in the background.
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.journalValue =
      this.journalOption instanceof Journal
        ? this.journalOption
        : await Journal.open({
            ...(this.journalOption === undefined ? {} : { path: this.journalOption }),
            now: this.now,
          });
    this.running = true;
    this.startedAtMs = this.now();
    for (const backend of this.backends) {
      const onFound = (found: FoundResult) => this.onFound(backend, found);
      const onError = (error: Error) =>
        this.log({ type: 'device-error', device: backend.id, message: error.message });
      const onState = (state: DeviceState) => this.log({ type: 'device-state', device: backend.id, state });
      const onExhausted = (challengeId: string) => {
        if (challengeId === this.dispatcher.job?.challengeId) void this.refresh();
      };
      const onNotice = ({ unit, message, ...notice }: DeviceNotice) =>
        this.log({ type: 'device-notice', device: unit, backend: backend.id, reason: message, ...notice });
      backend.on('found', onFound);
      backend.on('error', onError);
      backend.on('state', onState);
      backend.on('exhausted', onExhausted);
      backend.on('notice', onNotice);
      this.detach.push(() => {
        backend.off('notice', onNotice);
        backend.off('found', onFound);
        backend.off('error', onError);
        backend.off('state', onState);
        backend.off('exhausted', onExhausted);
      });
    }
    if (this.source.on) {
      const onStale = (reason: string) => {
        this.log({ type: 'stale', reason });
        void this.refresh();
      };
      this.source.on('stale', onStale);
      this.detach.push(() => this.source.off?.('stale', onStale));
    }
    try {
      await Promise.all(this.backends.map((b) => b.start()));
    } catch (error) {
      await this.stop(0);
      throw error;
    }
    if (this.pausedValue) for (const b of this.backends) b.pause();
    void this.flushJournal();
    void this.refresh();
  }

  /**
   * Stops the backends and the loop. Submissions in flight get `graceMs` to settle; the
   * results stay in the journal either way.
   */
  async stop(graceMs = 2000): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stoppedAtMs = this.now();
    this.dispatcher.stop();
    this.submissions.stopTimer();
    this.drops.stop(this.shares.clear());
    for (const d of this.detach.splice(0)) d();
    await Promise.all(this.backends.map((b) => b.stop()));
    await this.submissions.settle(graceMs);
    await this.journalValue?.flush();
  }

  pause(): void {
    if (this.pausedValue) return;
    this.pausedValue = true;
    for (const b of this.backends) b.pause();
    this.log({ type: 'paused' });
  }

  resume(): void {
    if (!this.pausedValue) return;
    this.pausedValue = false;
    for (const b of this.backends) b.resume();
    this.log({ type: 'resumed' });
  }

  stats(): MinerStats {
    const s = this.statistics;
    const devices = this.backends.map((b): DeviceSummary => {
      const units = b.units?.().map((u) => ({ ...u, ...s.outcomeSummary([u.id]) }));
      return {
        id: b.id,
        kind: b.kind,
        state: b.state,
        hashrate: b.hashrate(),
        totalHashes: b.totalHashes(),
        expectedHashrate: b.expectedHashrate(),
        lastFoundAtMs: b.lastFoundAtMs,
        ...s.outcomeSummary([b.id, ...(units ?? []).map((u) => u.id)]),
        ...(units === undefined ? {} : { units }),
      };
    });
    const expected = devices.reduce<number | undefined>(
      (sum, d) => (d.expectedHashrate === undefined ? sum : (sum ?? 0) + d.expectedHashrate),
      undefined,
    );
    const job = this.dispatcher.job;
    return {
      running: this.running,
      paused: this.pausedValue,
      // Work comes (no failed getWork outstanding) and the validator in use is not down.
      connected: !this.dispatcher.workDown && !this.connections.isDown(this.connections.key(undefined)),
      accepted: s.accepted,
      rejected: s.rejected,
      rejectedReasons: s.rejectedReasons,
      bestDifficulty: s.bestDifficulty,
      lastLatencyMs: s.lastLatencyMs,
      averageLatencyMs: s.averageLatencyMs,
      journalSize: this.journalValue?.size ?? 0,
      sharesQueued: this.shares.length,
      sharesDropped: this.drops.total,
      uptimeSeconds: Math.floor(((this.running ? this.now() : this.stoppedAtMs) - this.startedAtMs) / 1000),
      job:
        job === undefined
          ? undefined
          : {
              challengeId: job.challengeId,
              protocolVersion: protocolVersion(job),
              difficulty: expectedHashes(job),
              expiresAtMs: job.expiresAtMs,
            },
      hashrate: sumWindows(devices.map((d) => d.hashrate.total)),
      expectedHashrate: expected,
      devices,
      validatorUrl: this.source.url,
    };
  }

  /** Fetches new work and dispatches it (one fetch at a time; a request during one repeats it). */
  refresh(): Promise<void> {
    return this.dispatcher.refresh();
  }

  /**
   * Resubmits the journal's results that are due, oldest first; drops the expired ones. Each
   * result that cannot be delivered waits out its own back-off (retryDelayMs, doubling up to
   * maxRetryDelayMs); once a validator failed in a pass, its other results wait too. A
   * validator coming back makes its results due at once.
   */
  flushJournal(): Promise<void> {
    return this.submissions.flushJournal();
  }

  /** A backend found a result: verified against its job, then submitted or (pool) queued. */
  private onFound(backend: DeviceBackend, found: FoundResult): void {
    if (!this.running) return;
    const job = this.dispatcher.jobOf(found.challengeId);
    const verdict = job ? verifyFound(job, found) : undefined;
    if (verdict === undefined || !verdict.ok) {
      this.log({
        type: 'device-error',
        device: backend.id,
        message: `result ${found.id} not submitted: ${verdict === undefined ? 'unknown challenge' : `${verdict.code}: ${verdict.message}`}`,
      });
      return;
    }
    this.statistics.found(found);
    if (this.strategy.continueAfterFound && this.submissions.size >= POOL_MAX_IN_FLIGHT) {
      // Pool shares found faster than the validator answers (a share target far too easy for
      // this miner, before vardiff has moved): they wait their turn, in a bounded queue.
      if (this.shares.length === 0) void this.refresh(); // new work brings the new share difficulty
      this.shares.push(found);
      this.log({ type: 'found', found });
      return;
    }
    this.log({ type: 'found', found });
    this.sendFound(found);
  }

  /** Submits a verified result, then (pool) the next queued shares. */
  private sendFound(found: FoundResult): void {
    this.submissions.track(
      this.submissions
        .submit(found)
        .finally(() =>
          this.shares.drain(
            () => this.running && this.submissions.size < POOL_MAX_IN_FLIGHT,
            (next) => this.sendFound(next),
          ),
        )
        .then(() => {
          // Solo: the challenge takes one result, so new work once it is settled (not before:
          // a challenge issued while the block is in flight may name the same cell).
          if (!this.strategy.continueAfterFound && found.challengeId === this.dispatcher.job?.challengeId)
            void this.refresh();
        }),
    );
  }

  private log(event: MinerLogEvent): void {
    this.emit('log', event);
  }
}
