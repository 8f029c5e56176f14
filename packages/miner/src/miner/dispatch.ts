import type { DeviceBackend } from '../device.js';
import {
  checkJob,
  expectedHashes,
  type MiningJob,
  NONCE_SPACE_END,
  nonceRange,
  protocolVersion,
  withNonceRange,
} from '../job.js';
import type { MiningStrategy, WorkSource } from '../work-source.js';
import type { Backoff } from './backoff.js';
import type { Connections } from './connections.js';
import { errorMessage, type Log } from './events.js';

/** The longest delay setTimeout takes (a longer one fires at once, with a warning). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Jobs remembered after they were replaced (a result of one may still come in). */
const RECENT_JOBS = 32;

export interface DispatchOptions {
  readonly source: WorkSource;
  readonly backends: readonly DeviceBackend[];
  readonly strategy: MiningStrategy;
  /** Between failed getWork calls. */
  readonly backoff: Backoff;
  /** Fetch new work this long before the job expires, ms. */
  readonly expiryMarginMs: number;
  readonly connections: Connections;
  readonly now: () => number;
  readonly log: Log;
  readonly running: () => boolean;
}

/**
 * Job dispatch: fetches work from the source (one fetch at a time, retried on its back-off),
 * gives every backend able to mine it a disjoint slice of the job's nonce range, and fetches
 * new work before the job expires.
 */
export class JobDispatcher {
  #job: MiningJob | undefined;
  readonly #recent = new Map<string, MiningJob>();
  #refreshing = false;
  #again = false;
  /** The connection-state key under which a failed getWork was reported. */
  #downKey: string | undefined;
  /** The last getWork retry delay (undefined: the last getWork succeeded). */
  #retryDelayMs: number | undefined;
  #expiryTimer: NodeJS.Timeout | undefined;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: DispatchOptions) {}

  /** The job being mined. */
  get job(): MiningJob | undefined {
    return this.#job;
  }

  /** Whether the last getWork failed (and is being retried). */
  get workDown(): boolean {
    return this.#downKey !== undefined;
  }

  /** The job of a challenge: the current one or one of the last replaced. */
  jobOf(challengeId: string): MiningJob | undefined {
    return this.#recent.get(challengeId);
  }

  /** Fetches new work and dispatches it (one fetch at a time; a request during one repeats it). */
  async refresh(): Promise<void> {
    const { source, backends, backoff, connections, running } = this.o;
    if (!running()) return;
    if (this.#refreshing) {
      this.#again = true;
      return;
    }
    this.#refreshing = true;
    clearTimeout(this.#retryTimer);
    try {
      do {
        this.#again = false;
        let job: MiningJob;
        try {
          job = await source.getWork();
          checkJob(job);
        } catch (error) {
          if (!running()) return;
          const delayMs = backoff.next(this.#retryDelayMs);
          this.#downKey ??= connections.key(undefined);
          connections.lost(this.#downKey, errorMessage(error), delayMs);
          this.#retryTimer = setTimeout(() => void this.refresh(), delayMs);
          this.#retryDelayMs = delayMs;
          for (const b of backends) b.setJob(undefined);
          this.#job = undefined;
          return;
        }
        if (!running()) return;
        this.#retryDelayMs = undefined;
        // Work again: the validator that failed, or the one the source moved to, answers.
        const failed = this.#downKey;
        this.#downKey = undefined;
        connections.restored(failed ?? connections.key(undefined), connections.key(undefined));
        this.#dispatch(job);
      } while (this.#again && running());
    } finally {
      this.#refreshing = false;
    }
  }

  /** Stops the timers (the Miner stops). */
  stop(): void {
    clearTimeout(this.#expiryTimer);
    clearTimeout(this.#retryTimer);
  }

  #dispatch(job: MiningJob): void {
    const { backends, strategy, backoff, expiryMarginMs, now, log } = this.o;
    this.#job = job;
    this.#recent.set(job.challengeId, job);
    if (this.#recent.size > RECENT_JOBS) this.#recent.delete(this.#recent.keys().next().value!);
    const able = backends.filter((b) => b.supports(job));
    const { start, end } = nonceRange(job);
    const span = Math.floor((end - start) / Math.max(1, able.length));
    const stopOnFound = !strategy.continueAfterFound;
    able.forEach((b, i) => {
      const to = i === able.length - 1 ? end : start + (i + 1) * span;
      b.setJob({ ...withNonceRange(job, start + i * span, Math.min(to, NONCE_SPACE_END)), stopOnFound });
    });
    for (const b of backends) if (!able.includes(b)) b.setJob(undefined);
    log({
      type: 'job',
      challengeId: job.challengeId,
      protocolVersion: protocolVersion(job),
      difficulty: expectedHashes(job),
      expiresAtMs: job.expiresAtMs,
      devices: able.map((b) => b.id),
    });
    clearTimeout(this.#expiryTimer);
    const wait = job.expiresAtMs - expiryMarginMs - now();
    // A job that is (nearly) expired already: wait a retry delay rather than spin on getWork.
    this.#expiryTimer = setTimeout(
      () => void this.refresh(),
      wait > 0 ? Math.min(wait, MAX_TIMER_MS) : backoff.firstMs,
    );
  }
}
