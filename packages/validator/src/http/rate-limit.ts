import { ApiError } from './errors.js';

export interface RateLimitRule {
  /** Requests allowed in a burst. */
  readonly burst: number;
  /** Sustained requests per second. */
  readonly perSecond: number;
}

/**
 * Token buckets keyed by client address or public key. Memory is bounded: the least recently
 * used buckets are dropped past `maxKeys` (a dropped bucket was idle, so it would be full
 * anyway).
 */
export class RateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly rule: RateLimitRule,
    private readonly now: () => number,
    private readonly maxKeys = 50_000,
  ) {}

  /** Takes one token for `key` or throws `rate_limited` with the delay until the next one. */
  take(key: string, what: string): void {
    const now = this.now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.rule.burst, at: now };
    this.#buckets.delete(key);
    const elapsed = Math.max(0, now - bucket.at) / 1000;
    bucket.tokens = Math.min(this.rule.burst, bucket.tokens + elapsed * this.rule.perSecond);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > this.maxKeys) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    if (bucket.tokens < 1) {
      const retryAfterS = Math.ceil((1 - bucket.tokens) / this.rule.perSecond);
      throw new ApiError(
        'rate_limited',
        `too many requests from this ${what}: at most ${this.rule.perSecond}/s with bursts of ${this.rule.burst}; retry in ${retryAfterS} s`,
        { retry_after_s: retryAfterS },
        { 'retry-after': String(retryAfterS) },
      );
    }
    bucket.tokens -= 1;
  }
}
