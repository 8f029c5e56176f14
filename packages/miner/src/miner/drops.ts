import type { Log, ShareDropReason } from './events.js';

/** `shares-dropped` events are at most one a second (the counts add up in `total`). */
const DROP_REPORT_MS = 1_000;

/**
 * Counts the pool shares dropped unsent and reports them (`shares-dropped`): never silently,
 * and at most one event a second per reason (the counts of a quieter second add up).
 */
export class DropReporter {
  /** Dropped since the start. */
  #total = 0;
  /** Dropped and not reported yet, by reason. */
  readonly #unreported: Record<ShareDropReason, number> = { 'queue-full': 0, expired: 0, stopped: 0 };
  #lastReportMs = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly now: () => number,
    private readonly log: Log,
    /** The shares waiting in the queue now (each event says). */
    private readonly queued: () => number,
  ) {}

  get total(): number {
    return this.#total;
  }

  /** Counts `count` dropped shares; reports them now or within a second. */
  dropped(reason: ShareDropReason, count: number, now = false): void {
    this.#total += count;
    this.#unreported[reason] += count;
    if (now || this.now() - this.#lastReportMs >= DROP_REPORT_MS) this.#report();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#report(), DROP_REPORT_MS);
      this.#timer.unref();
    }
  }

  /** On stop: the `queued` shares left are dropped, and everything unreported is reported now. */
  stop(queued: number): void {
    if (queued > 0 || this.#timer !== undefined) this.dropped('stopped', queued, true);
  }

  #report(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastReportMs = this.now();
    for (const r of ['queue-full', 'expired', 'stopped'] as const) {
      const n = this.#unreported[r];
      if (n === 0) continue;
      this.#unreported[r] = 0;
      this.log({ type: 'shares-dropped', reason: r, count: n, total: this.#total, queued: this.queued() });
    }
  }
}
