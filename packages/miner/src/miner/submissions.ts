import type { FoundResult } from '../found.js';
import type { Journal } from '../journal.js';
import type { SubmitOutcome, WorkSource } from '../work-source.js';
import type { RetrySchedule } from './backoff.js';
import type { Connections } from './connections.js';
import { MAX_TIMER_MS } from './dispatch.js';
import { errorMessage, type Log } from './events.js';
import type { MinerStatistics } from './stats.js';

/** Error codes a WorkSource may pass as rejections that are really "try again later". */
const TRANSIENT_CODES = new Set(['service_unavailable', 'rate_limited', 'internal_error']);

export interface SubmissionsOptions {
  readonly source: WorkSource;
  /** The journal (open while the Miner runs). */
  readonly journal: () => Journal | undefined;
  /** When each undelivered result is due again. */
  readonly retries: RetrySchedule;
  readonly connections: Connections;
  readonly stats: MinerStatistics;
  readonly now: () => number;
  readonly log: Log;
  readonly running: () => boolean;
}

/**
 * The network side of the Miner: submits verified results through the source, write-ahead in
 * the journal, sorts the outcomes (accepted, rejected, undelivered), and resubmits what the
 * journal holds when it is due, each result on its own back-off.
 */
export class Submissions {
  /** Ids of the results whose submission is under way (the journal flush skips them). */
  readonly #submitting = new Set<string>();
  readonly #inFlight = new Set<Promise<void>>();
  #flushing = false;
  #flushTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: SubmissionsOptions) {}

  /** Submissions under way. */
  get size(): number {
    return this.#submitting.size;
  }

  /** Journals (write-ahead, in parallel with the request) and submits one result. */
  async submit(found: FoundResult): Promise<'settled' | 'unavailable'> {
    if (this.#submitting.has(found.id)) return 'settled';
    this.#submitting.add(found.id);
    try {
      return await this.#submitOnce(found);
    } finally {
      this.#submitting.delete(found.id);
    }
  }

  /** Keeps a submission's promise until it settles (stop waits for them); logs its failure. */
  track(p: Promise<unknown>): void {
    const settled = p.then(
      () => undefined,
      (error: unknown) => this.o.log({ type: 'error', message: errorMessage(error) }),
    );
    this.#inFlight.add(settled);
    void settled.finally(() => this.#inFlight.delete(settled));
  }

  /** Stops the flush timer (the Miner stops). */
  stopTimer(): void {
    clearTimeout(this.#flushTimer);
  }

  /** Waits up to `graceMs` for the submissions in flight to settle. */
  async settle(graceMs: number): Promise<void> {
    await Promise.race([Promise.allSettled([...this.#inFlight]), delay(graceMs)]);
  }

  /**
   * Resubmits the journal's results that are due, oldest first; drops the expired ones. Each
   * result that cannot be delivered waits out its own back-off (retryDelayMs, doubling up to
   * maxRetryDelayMs); once a validator failed in a pass, its other results wait too. A
   * validator coming back makes its results due at once.
   */
  async flushJournal(): Promise<void> {
    const { source, retries, now, log, running } = this.o;
    const journal = this.o.journal();
    if (!running() || journal === undefined || this.#flushing) return;
    this.#flushing = true;
    clearTimeout(this.#flushTimer);
    try {
      const at = now();
      const due = journal
        .entries()
        .filter(({ found }) => !this.#submitting.has(found.id) && retries.dueAt(found.id) <= at);
      if (due.length === 0) return;
      if (due.some(({ found }) => !retries.has(found.id))) log({ type: 'resubmitting', count: due.length });
      const failed = new Set<string>();
      for (const { found } of due) {
        if (!running()) return;
        if (!journal.has(found.id) || this.#submitting.has(found.id)) continue;
        if (now() >= found.expiresAtMs) {
          retries.forget(found.id);
          await journal.remove(found.id);
          log({ type: 'expired', found });
          continue;
        }
        const target = source.endpointOf?.(found);
        if (target !== undefined && failed.has(target)) {
          retries.defer(found.id);
          continue;
        }
        const done = this.submit(found);
        this.track(done.then(() => undefined));
        if ((await done) === 'unavailable' && target !== undefined) failed.add(target);
      }
    } finally {
      this.#flushing = false;
      this.#scheduleFlush();
    }
  }

  /** A validator is back (`url`): its journaled results are due now. */
  validatorBack(url: string): void {
    for (const { found } of this.o.journal()?.entries() ?? []) {
      const target = this.o.source.endpointOf?.(found);
      if (target === undefined || target === url) this.o.retries.forget(found.id);
    }
    void this.flushJournal();
  }

  async #submitOnce(found: FoundResult): Promise<'settled' | 'unavailable'> {
    const { source, retries, connections, stats, now, log } = this.o;
    const journal = this.o.journal()!;
    const journaled = journal
      .add(found)
      .catch((error: Error) => log({ type: 'error', message: error.message }));
    const started = now();
    let outcome: SubmitOutcome;
    try {
      outcome = await source.submit(found);
    } catch (error) {
      outcome = { status: 'unavailable', reason: errorMessage(error) };
    }
    if (outcome.status === 'rejected' && TRANSIENT_CODES.has(outcome.code)) {
      outcome = { status: 'unavailable', reason: `${outcome.code}: ${outcome.message}` };
    }
    const latencyMs = now() - started;
    await journaled;
    const endpoint = connections.key(
      outcome.status === 'unavailable'
        ? (outcome.endpoint ?? source.endpointOf?.(found))
        : source.endpointOf?.(found),
    );
    if (outcome.status === 'unavailable') {
      if (now() >= found.expiresAtMs) {
        retries.forget(found.id);
        await journal.remove(found.id);
        log({ type: 'expired', found });
      } else {
        // Its own back-off: the first retry after retryDelayMs, doubling up to maxRetryDelayMs.
        const { delayMs, first } = retries.defer(found.id);
        if (first) log({ type: 'journaled', found, reason: outcome.reason });
        connections.lost(endpoint, outcome.reason, delayMs);
        this.#scheduleFlush();
      }
      return 'unavailable';
    }
    retries.forget(found.id);
    connections.restored(endpoint);
    stats.latency(latencyMs);
    const difficulty = found.difficulty;
    // Settled: off the journal first, so that a reported result is never resubmitted.
    await journal.remove(found.id);
    if (outcome.status === 'accepted') {
      stats.accept(found);
      log({
        type: 'accepted',
        found,
        accepted: stats.accepted,
        rejected: stats.rejected,
        difficulty,
        latencyMs,
        ...(outcome.details === undefined ? {} : { details: outcome.details }),
      });
    } else {
      stats.reject(found, outcome.code);
      log({
        type: 'rejected',
        found,
        code: outcome.code,
        message: outcome.message,
        accepted: stats.accepted,
        rejected: stats.rejected,
        difficulty,
        latencyMs,
      });
    }
    return 'settled';
  }

  /** The next flush: when the earliest journaled result is due. */
  #scheduleFlush(): void {
    if (!this.o.running()) return;
    clearTimeout(this.#flushTimer);
    const next = this.o.retries.earliest((id) => this.o.journal()?.has(id) === true);
    if (next === undefined) return;
    this.#flushTimer = setTimeout(
      () => void this.flushJournal(),
      Math.min(MAX_TIMER_MS, Math.max(0, next - this.o.now())),
    );
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
