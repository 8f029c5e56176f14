import { EventEmitter } from 'node:events';
import type { DeviceBackend, DeviceHashrate, DeviceNotice, DeviceState, DeviceUnitInfo } from './device.js';
import { MinerError } from './errors.js';
import { type FoundResult, verifyFound } from './found.js';
import { type HashrateWindows, sumWindows } from './hashrate.js';
import {
  checkJob,
  expectedHashes,
  type MiningJob,
  NONCE_SPACE_END,
  nonceRange,
  protocolVersion,
  withNonceRange,
} from './job.js';
import { Journal } from './journal.js';
import { type MiningStrategy, SOLO, type SubmitOutcome, type WorkSource } from './work-source.js';

/** The longest delay setTimeout takes (a longer one fires at once, with a warning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  /** The clock, Unix ms (tests). */
  readonly now?: () => number;
}

interface ResultFields {
  readonly found: FoundResult;
  /** Counts after this result, for the `accepted (120/1)` line. */
  readonly accepted: number;
  readonly rejected: number;
  /** Expected hashes per result of the job (the share's difficulty). */
  readonly difficulty: number;
  /** Submission round trip, ms. */
  readonly latencyMs: number;
}

/** Why pool shares were dropped unsent (the `shares-dropped` event). */
export type ShareDropReason = 'queue-full' | 'expired' | 'stopped';

/** What the Miner reports. The CLI prints them (plain lines) or shows them (the TUI). */
export type MinerLogEvent =
  | {
      readonly type: 'job';
      readonly challengeId: string;
      readonly protocolVersion: '4.0' | '4.1';
      readonly difficulty: number;
      readonly expiresAtMs: number;
      readonly devices: readonly string[];
    }
  | { readonly type: 'found'; readonly found: FoundResult }
  | ({ readonly type: 'accepted'; readonly details?: Readonly<Record<string, unknown>> } & ResultFields)
  | ({ readonly type: 'rejected'; readonly code: string; readonly message: string } & ResultFields)
  /** A result could not be delivered; it stays in the journal and will be resubmitted. */
  | { readonly type: 'journaled'; readonly found: FoundResult; readonly reason: string }
  | { readonly type: 'resubmitting'; readonly count: number }
  /** A journaled result whose challenge expired before it could be delivered: dropped. */
  | { readonly type: 'expired'; readonly found: FoundResult }
  /** A validator (`url`, when the source names it) stopped answering; each has its own state. */
  | {
      readonly type: 'connection-lost';
      readonly url?: string;
      readonly reason: string;
      readonly retryInMs: number;
    }
  | { readonly type: 'connection-restored'; readonly url?: string; readonly downMs: number }
  | { readonly type: 'stale'; readonly reason: string }
  /**
   * Pool shares were dropped without being sent: the queue behind the in-flight submissions was
   * full (the oldest queued share goes), a queued share's challenge expired before its turn, or
   * the miner stopped with shares still queued.
   */
  | {
      readonly type: 'shares-dropped';
      readonly reason: ShareDropReason;
      /** Dropped by this event. */
      readonly count: number;
      /** Dropped since the start. */
      readonly total: number;
      /** Shares waiting in the queue now. */
      readonly queued: number;
    }
  | { readonly type: 'device-error'; readonly device: string; readonly message: string }
  | { readonly type: 'device-state'; readonly device: string; readonly state: DeviceState }
  /** A unit of a backend (a board) attached, lost, back, rebooted, failed its self-test, or its link degraded. */
  | ({ readonly type: 'device-notice'; readonly device: string } & Omit<DeviceNotice, 'unit' | 'message'> & {
        readonly backend: string;
        readonly reason: string;
      })
  | { readonly type: 'paused' }
  | { readonly type: 'resumed' }
  | { readonly type: 'error'; readonly message: string };

/** Pool mode: at most this many share submissions in flight; more found meanwhile queue. */
export const POOL_MAX_IN_FLIGHT = 32;
/**
 * Pool mode: at most this many shares wait behind the in-flight ones. Beyond it the oldest
 * queued share is dropped and reported (`shares-dropped`): a miner that finds shares faster
 * than the validator answers is at a share difficulty far too easy for it (a new member before
 * vardiff), and the newest shares are the likeliest to still be current.
 */
export const POOL_QUEUE_MAX = 4096;
/** `shares-dropped` events are at most one a second (the counts add up in `total`). */
const DROP_REPORT_MS = 1_000;

export interface MinerEvents {
  log: [event: MinerLogEvent];
}

/** Submission outcomes of the results a device (or unit) found. */
export interface DeviceOutcomes {
  readonly accepted: number;
  readonly rejected: number;
  /** Rejections by validator error code, most frequent first. */
  readonly rejectedReasons: readonly { readonly code: string; readonly count: number }[];
}

export interface DeviceSummary extends DeviceOutcomes {
  readonly id: string;
  readonly kind: string;
  readonly state: DeviceState;
  readonly hashrate: DeviceHashrate;
  readonly totalHashes: number;
  readonly expectedHashrate: number | undefined;
  readonly lastFoundAtMs: number | undefined;
  /** Its units (the boards of the serial fleet), each with its counters and outcomes. */
  readonly units?: readonly (DeviceUnitInfo & DeviceOutcomes)[];
}

export interface MinerStats {
  readonly running: boolean;
  readonly paused: boolean;
  readonly connected: boolean;
  readonly accepted: number;
  readonly rejected: number;
  /** Rejections by validator error code, most frequent first. */
  readonly rejectedReasons: readonly { readonly code: string; readonly count: number }[];
  /** The highest achievedDifficulty of any verified result. */
  readonly bestDifficulty: number | undefined;
  readonly lastLatencyMs: number | undefined;
  readonly averageLatencyMs: number | undefined;
  readonly journalSize: number;
  /** Pool shares waiting for a submission slot. */
  readonly sharesQueued: number;
  /** Pool shares dropped unsent since the start (each drop was reported: `shares-dropped`). */
  readonly sharesDropped: number;
  /** Seconds since start; once stopped, how long it ran (0 before the first start). */
  readonly uptimeSeconds: number;
  readonly job:
    | {
        readonly challengeId: string;
        readonly protocolVersion: '4.0' | '4.1';
        readonly difficulty: number;
        readonly expiresAtMs: number;
      }
    | undefined;
  readonly hashrate: HashrateWindows;
  readonly expectedHashrate: number | undefined;
  readonly devices: readonly DeviceSummary[];
  readonly validatorUrl: string | undefined;
}

/** Error codes a WorkSource may pass as rejections that are really "try again later". */
const TRANSIENT_CODES = new Set(['service_unavailable', 'rate_limited', 'internal_error']);
const RECENT_JOBS = 32;

export class Miner extends EventEmitter<MinerEvents> {
  readonly source: WorkSource;
  readonly backends: readonly DeviceBackend[];
  readonly strategy: MiningStrategy;
  private journalValue: Journal | undefined;
  private readonly journalOption: Journal | string | undefined;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly expiryMarginMs: number;
  private readonly now: () => number;

  private running = false;
  private pausedValue: boolean;
  private startedAtMs = 0;
  private stoppedAtMs = 0;
  private job: MiningJob | undefined;
  private readonly recentJobs = new Map<string, MiningJob>();
  private accepted = 0;
  private rejected = 0;
  private readonly reasons = new Map<string, number>();
  /** Outcomes per device id (a found result's `device`: a backend, or a board of the fleet). */
  private readonly outcomes = new Map<
    string,
    { accepted: number; rejected: number; reasons: Map<string, number> }
  >();
  private bestDifficulty: number | undefined;
  private lastLatencyMs: number | undefined;
  private latencyTotal = 0;
  private latencyCount = 0;

  private refreshing = false;
  private refreshAgain = false;
  private flushing = false;
  /** The validators that are down, by URL, and since when. */
  private readonly down = new Map<string, number>();
  /** Journaled results waiting for their retry: when, and the current back-off. */
  private readonly retryAt = new Map<string, { atMs: number; delayMs: number }>();
  /** The connection-state key under which a failed getWork was reported. */
  private workDownKey: string | undefined;
  private workDelay: number;
  private expiryTimer: NodeJS.Timeout | undefined;
  private workRetryTimer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** Ids of the results whose submission is under way (the journal flush skips them). */
  private readonly submitting = new Set<string>();
  /** Pool shares waiting for a free submission slot (POOL_MAX_IN_FLIGHT), oldest first. */
  private readonly shareQueue: FoundResult[] = [];
  /** Pool shares dropped (queue full or expired while queued), and those not yet reported. */
  private sharesDropped = 0;
  private readonly unreported: Record<ShareDropReason, number> = { 'queue-full': 0, expired: 0, stopped: 0 };
  private lastDropReportMs = 0;
  private dropReportTimer: NodeJS.Timeout | undefined;
  private readonly detach: (() => void)[] = [];

  constructor(options: MinerOptions) {
    super();
    this.source = options.source;
    this.backends = options.backends;
    this.strategy = options.source.strategy ?? SOLO;
    this.journalOption = options.journal;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.expiryMarginMs = options.expiryMarginMs ?? 2000;
    this.now = options.now ?? Date.now;
    this.pausedValue = options.paused ?? false;
    this.workDelay = this.retryDelayMs;
    const ids = new Set(this.backends.map((b) => b.id));
    if (ids.size !== this.backends.length) {
      throw new MinerError(
        'invalid_option',
        `backends: expected distinct ids, got ${this.backends.map((b) => b.id).join(', ')}`,
      );
    }
  }

  get paused(): boolean {
    return this.pausedValue;
  }

  get journal(): Journal | undefined {
    return this.journalValue;
  }

  /** The job being mined. */
  get currentJob(): MiningJob | undefined {
    return this.job;
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
        if (challengeId === this.job?.challengeId) void this.refresh();
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
    for (const timer of [this.expiryTimer, this.workRetryTimer, this.flushTimer]) clearTimeout(timer);
    const queued = this.shareQueue.splice(0).length;
    if (queued > 0 || this.dropReportTimer !== undefined) this.dropped('stopped', queued, true);
    for (const d of this.detach.splice(0)) d();
    await Promise.all(this.backends.map((b) => b.stop()));
    await Promise.race([Promise.allSettled([...this.inFlight]), delay(graceMs)]);
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
    const devices = this.backends.map((b): DeviceSummary => {
      const units = b.units?.().map((u) => ({ ...u, ...this.outcomeSummary([u.id]) }));
      return {
        id: b.id,
        kind: b.kind,
        state: b.state,
        hashrate: b.hashrate(),
        totalHashes: b.totalHashes(),
        expectedHashrate: b.expectedHashrate(),
        lastFoundAtMs: b.lastFoundAtMs,
        ...this.outcomeSummary([b.id, ...(units ?? []).map((u) => u.id)]),
        ...(units === undefined ? {} : { units }),
      };
    });
    const expected = devices.reduce<number | undefined>(
      (sum, d) => (d.expectedHashrate === undefined ? sum : (sum ?? 0) + d.expectedHashrate),
      undefined,
    );
    const job = this.job;
    return {
      running: this.running,
      paused: this.pausedValue,
      // Work comes (no failed getWork outstanding) and the validator in use is not down.
      connected: this.workDownKey === undefined && !this.down.has(this.endpointKey(undefined)),
      accepted: this.accepted,
      rejected: this.rejected,
      rejectedReasons: [...this.reasons]
        .map(([code, count]) => ({ code, count }))
        .sort((a, b) => b.count - a.count),
      bestDifficulty: this.bestDifficulty,
      lastLatencyMs: this.lastLatencyMs,
      averageLatencyMs: this.latencyCount === 0 ? undefined : this.latencyTotal / this.latencyCount,
      journalSize: this.journalValue?.size ?? 0,
      sharesQueued: this.shareQueue.length,
      sharesDropped: this.sharesDropped,
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

  private outcomesOf(device: string) {
    let o = this.outcomes.get(device);
    if (!o) {
      o = { accepted: 0, rejected: 0, reasons: new Map() };
      this.outcomes.set(device, o);
    }
    return o;
  }

  /** The outcomes of these device ids together. */
  private outcomeSummary(ids: readonly string[]): DeviceOutcomes {
    let accepted = 0;
    let rejected = 0;
    const reasons = new Map<string, number>();
    for (const id of ids) {
      const o = this.outcomes.get(id);
      if (!o) continue;
      accepted += o.accepted;
      rejected += o.rejected;
      for (const [code, n] of o.reasons) reasons.set(code, (reasons.get(code) ?? 0) + n);
    }
    return {
      accepted,
      rejected,
      rejectedReasons: [...reasons]
        .map(([code, count]) => ({ code, count }))
        .sort((a, b) => b.count - a.count),
    };
  }

  /** Fetches new work and dispatches it (one fetch at a time; a request during one repeats it). */
  async refresh(): Promise<void> {
    if (!this.running) return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    clearTimeout(this.workRetryTimer);
    try {
      do {
        this.refreshAgain = false;
        let job: MiningJob;
        try {
          job = await this.source.getWork();
          checkJob(job);
        } catch (error) {
          if (!this.running) return;
          this.workDownKey ??= this.endpointKey(undefined);
          this.lost(this.workDownKey, errorMessage(error), this.workDelay);
          this.workRetryTimer = setTimeout(() => void this.refresh(), this.workDelay);
          this.workDelay = Math.min(this.workDelay * 2, this.maxRetryDelayMs);
          for (const b of this.backends) b.setJob(undefined);
          this.job = undefined;
          return;
        }
        if (!this.running) return;
        this.workDelay = this.retryDelayMs;
        // Work again: the validator that failed, or the one the source moved to, answers.
        const failed = this.workDownKey;
        this.workDownKey = undefined;
        this.restored(failed ?? this.endpointKey(undefined), this.endpointKey(undefined));
        this.dispatch(job);
      } while (this.refreshAgain && this.running);
    } finally {
      this.refreshing = false;
    }
  }

  private dispatch(job: MiningJob): void {
    this.job = job;
    this.recentJobs.set(job.challengeId, job);
    if (this.recentJobs.size > RECENT_JOBS) this.recentJobs.delete(this.recentJobs.keys().next().value!);
    const able = this.backends.filter((b) => b.supports(job));
    const { start, end } = nonceRange(job);
    const span = Math.floor((end - start) / Math.max(1, able.length));
    const stopOnFound = !this.strategy.continueAfterFound;
    able.forEach((b, i) => {
      const to = i === able.length - 1 ? end : start + (i + 1) * span;
      b.setJob({ ...withNonceRange(job, start + i * span, Math.min(to, NONCE_SPACE_END)), stopOnFound });
    });
    for (const b of this.backends) if (!able.includes(b)) b.setJob(undefined);
    this.log({
      type: 'job',
      challengeId: job.challengeId,
      protocolVersion: protocolVersion(job),
      difficulty: expectedHashes(job),
      expiresAtMs: job.expiresAtMs,
      devices: able.map((b) => b.id),
    });
    clearTimeout(this.expiryTimer);
    const wait = job.expiresAtMs - this.expiryMarginMs - this.now();
    // A job that is (nearly) expired already: wait a retry delay rather than spin on getWork.
    this.expiryTimer = setTimeout(
      () => void this.refresh(),
      wait > 0 ? Math.min(wait, MAX_TIMER_MS) : this.retryDelayMs,
    );
  }

  private onFound(backend: DeviceBackend, found: FoundResult): void {
    if (!this.running) return;
    const job = this.recentJobs.get(found.challengeId);
    const verdict = job ? verifyFound(job, found) : undefined;
    if (verdict === undefined || !verdict.ok) {
      this.log({
        type: 'device-error',
        device: backend.id,
        message: `result ${found.id} not submitted: ${verdict === undefined ? 'unknown challenge' : `${verdict.code}: ${verdict.message}`}`,
      });
      return;
    }
    if (this.bestDifficulty === undefined || found.achievedDifficulty > this.bestDifficulty) {
      this.bestDifficulty = found.achievedDifficulty;
    }
    if (this.strategy.continueAfterFound && this.submitting.size >= POOL_MAX_IN_FLIGHT) {
      // Pool shares found faster than the validator answers (a share target far too easy for
      // this miner, before vardiff has moved): they wait their turn, in a bounded queue.
      if (this.shareQueue.length === 0) void this.refresh(); // new work brings the new share difficulty
      this.shareQueue.push(found);
      if (this.shareQueue.length > POOL_QUEUE_MAX) {
        this.shareQueue.shift();
        this.dropped('queue-full', 1);
      }
      this.log({ type: 'found', found });
      return;
    }
    this.log({ type: 'found', found });
    this.sendFound(found);
  }

  /** Submits a verified result, then (pool) the next queued share. */
  private sendFound(found: FoundResult): void {
    this.track(
      this.submit(found)
        .finally(() => this.nextQueuedShare())
        .then(() => {
          // Solo: the challenge takes one result, so new work once it is settled (not before:
          // a challenge issued while the block is in flight may name the same cell).
          if (!this.strategy.continueAfterFound && found.challengeId === this.job?.challengeId)
            void this.refresh();
        }),
    );
  }

  /** Sends queued shares while submission slots are free; drops the expired ones. */
  private nextQueuedShare(): void {
    let expired = 0;
    while (this.running && this.submitting.size < POOL_MAX_IN_FLIGHT && this.shareQueue.length > 0) {
      const next = this.shareQueue.shift()!;
      if (this.now() >= next.expiresAtMs) {
        expired++;
        continue;
      }
      this.sendFound(next);
    }
    if (expired > 0) this.dropped('expired', expired);
  }

  /** Counts dropped shares and reports them (at most one event a second; never silently). */
  private dropped(reason: ShareDropReason, count: number, now = false): void {
    this.sharesDropped += count;
    this.unreported[reason] += count;
    const report = () => {
      clearTimeout(this.dropReportTimer);
      this.dropReportTimer = undefined;
      this.lastDropReportMs = this.now();
      for (const r of ['queue-full', 'expired', 'stopped'] as const) {
        const n = this.unreported[r];
        if (n === 0) continue;
        this.unreported[r] = 0;
        this.log({
          type: 'shares-dropped',
          reason: r,
          count: n,
          total: this.sharesDropped,
          queued: this.shareQueue.length,
        });
      }
    };
    if (now || this.now() - this.lastDropReportMs >= DROP_REPORT_MS) report();
    else if (this.dropReportTimer === undefined) {
      this.dropReportTimer = setTimeout(report, DROP_REPORT_MS);
      this.dropReportTimer.unref();
    }
  }

  /** Journals (write-ahead, in parallel with the request) and submits one result. */
  private async submit(found: FoundResult): Promise<'settled' | 'unavailable'> {
    if (this.submitting.has(found.id)) return 'settled';
    this.submitting.add(found.id);
    try {
      return await this.submitOnce(found);
    } finally {
      this.submitting.delete(found.id);
    }
  }

  private async submitOnce(found: FoundResult): Promise<'settled' | 'unavailable'> {
    const journal = this.journalValue!;
    const journaled = journal
      .add(found)
      .catch((error: Error) => this.log({ type: 'error', message: error.message }));
    const started = this.now();
    let outcome: SubmitOutcome;
    try {
      outcome = await this.source.submit(found);
    } catch (error) {
      outcome = { status: 'unavailable', reason: errorMessage(error) };
    }
    if (outcome.status === 'rejected' && TRANSIENT_CODES.has(outcome.code)) {
      outcome = { status: 'unavailable', reason: `${outcome.code}: ${outcome.message}` };
    }
    const latencyMs = this.now() - started;
    await journaled;
    const endpoint = this.endpointKey(
      outcome.status === 'unavailable'
        ? (outcome.endpoint ?? this.source.endpointOf?.(found))
        : this.source.endpointOf?.(found),
    );
    if (outcome.status === 'unavailable') {
      if (this.now() >= found.expiresAtMs) {
        this.retryAt.delete(found.id);
        await journal.remove(found.id);
        this.log({ type: 'expired', found });
      } else {
        // Its own back-off: the first retry after retryDelayMs, doubling up to maxRetryDelayMs.
        const previous = this.retryAt.get(found.id);
        const delayMs =
          previous === undefined ? this.retryDelayMs : Math.min(previous.delayMs * 2, this.maxRetryDelayMs);
        this.retryAt.set(found.id, { atMs: this.now() + delayMs, delayMs });
        if (previous === undefined) this.log({ type: 'journaled', found, reason: outcome.reason });
        this.lost(endpoint, outcome.reason, delayMs);
        this.scheduleFlush();
      }
      return 'unavailable';
    }
    this.retryAt.delete(found.id);
    this.restored(endpoint);
    this.lastLatencyMs = latencyMs;
    this.latencyTotal += latencyMs;
    this.latencyCount++;
    const difficulty = found.difficulty;
    // Settled: off the journal first, so that a reported result is never resubmitted.
    await journal.remove(found.id);
    const mine = this.outcomesOf(found.device);
    if (outcome.status === 'accepted') {
      this.accepted++;
      mine.accepted++;
      this.log({
        type: 'accepted',
        found,
        accepted: this.accepted,
        rejected: this.rejected,
        difficulty,
        latencyMs,
        ...(outcome.details === undefined ? {} : { details: outcome.details }),
      });
    } else {
      this.rejected++;
      this.reasons.set(outcome.code, (this.reasons.get(outcome.code) ?? 0) + 1);
      mine.rejected++;
      mine.reasons.set(outcome.code, (mine.reasons.get(outcome.code) ?? 0) + 1);
      this.log({
        type: 'rejected',
        found,
        code: outcome.code,
        message: outcome.message,
        accepted: this.accepted,
        rejected: this.rejected,
        difficulty,
        latencyMs,
      });
    }
    return 'settled';
  }

  /**
   * Resubmits the journal's results that are due, oldest first; drops the expired ones. Each
   * result that cannot be delivered waits out its own back-off (retryDelayMs, doubling up to
   * maxRetryDelayMs); once a validator failed in a pass, its other results wait too. A
   * validator coming back makes its results due at once.
   */
  async flushJournal(): Promise<void> {
    const journal = this.journalValue;
    if (!this.running || journal === undefined || this.flushing) return;
    this.flushing = true;
    clearTimeout(this.flushTimer);
    try {
      const now = this.now();
      const due = journal
        .entries()
        .filter(
          ({ found }) => !this.submitting.has(found.id) && (this.retryAt.get(found.id)?.atMs ?? 0) <= now,
        );
      if (due.length === 0) return;
      if (due.some(({ found }) => !this.retryAt.has(found.id)))
        this.log({ type: 'resubmitting', count: due.length });
      const failed = new Set<string>();
      for (const { found } of due) {
        if (!this.running) return;
        if (!journal.has(found.id) || this.submitting.has(found.id)) continue;
        if (this.now() >= found.expiresAtMs) {
          this.retryAt.delete(found.id);
          await journal.remove(found.id);
          this.log({ type: 'expired', found });
          continue;
        }
        const target = this.source.endpointOf?.(found);
        if (target !== undefined && failed.has(target)) {
          const previous = this.retryAt.get(found.id);
          const delayMs =
            previous === undefined ? this.retryDelayMs : Math.min(previous.delayMs * 2, this.maxRetryDelayMs);
          this.retryAt.set(found.id, { atMs: this.now() + delayMs, delayMs });
          continue;
        }
        const done = this.submit(found);
        this.track(done.then(() => undefined));
        if ((await done) === 'unavailable' && target !== undefined) failed.add(target);
      }
    } finally {
      this.flushing = false;
      this.scheduleFlush();
    }
  }

  /** The next flush: when the earliest journaled result is due. */
  private scheduleFlush(): void {
    if (!this.running) return;
    clearTimeout(this.flushTimer);
    let next: number | undefined;
    for (const [id, { atMs }] of this.retryAt) {
      if (!this.journalValue?.has(id)) {
        this.retryAt.delete(id);
        continue;
      }
      if (next === undefined || atMs < next) next = atMs;
    }
    if (next === undefined) return;
    this.flushTimer = setTimeout(
      () => void this.flushJournal(),
      Math.min(MAX_TIMER_MS, Math.max(0, next - this.now())),
    );
  }

  /** The key of a validator's connection state: its URL, else the source's label. */
  private endpointKey(endpoint: string | undefined): string {
    return endpoint ?? this.source.url ?? 'validator';
  }

  private lost(url: string, reason: string, retryInMs: number): void {
    if (this.down.has(url)) return;
    this.down.set(url, this.now());
    this.log({ type: 'connection-lost', ...(url === 'validator' ? {} : { url }), reason, retryInMs });
  }

  /** `url` is back (or `serving` answers in its place). */
  private restored(url: string, serving = url): void {
    const since = this.down.get(url);
    if (since === undefined) return;
    this.down.delete(url);
    this.down.delete(serving);
    this.log({
      type: 'connection-restored',
      ...(serving === 'validator' ? {} : { url: serving }),
      downMs: this.now() - since,
    });
    // Its journaled results are due now.
    for (const { found } of this.journalValue?.entries() ?? []) {
      const target = this.source.endpointOf?.(found);
      if (target === undefined || target === url) this.retryAt.delete(found.id);
    }
    void this.flushJournal();
  }

  private track(p: Promise<unknown>): void {
    const settled = p.then(
      () => undefined,
      (error: unknown) => this.log({ type: 'error', message: errorMessage(error) }),
    );
    this.inFlight.add(settled);
    void settled.finally(() => this.inFlight.delete(settled));
  }

  private log(event: MinerLogEvent): void {
    this.emit('log', event);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
