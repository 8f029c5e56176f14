import { ApiError } from './api-error.js';

export interface RateLimitRule {
  /** Requests allowed in a burst. */
  readonly burst: number;
  /** Sustained requests per second. */
  readonly perSecond: number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date, Unix ms. */
  at: number;
}

/**
 * Token buckets keyed by client address or public key.
 *
 * Memory is bounded by two generations of buckets: a key is looked up in the current one, then
 * in the previous one (and moved to the current); when the current generation holds
 * `maxKeys / 2` keys it becomes the previous one and the old previous one is dropped. A dropped
 * bucket was not used during a whole generation (at least `maxKeys / 2` other keys were seen
 * since), so at most `maxKeys` buckets are kept, and a request of a known key costs one map
 * lookup and no allocation: this runs on every request.
 */
export class RateLimiter {
  #current = new Map<string, Bucket>();
  #previous = new Map<string, Bucket>();
  readonly #generationSize: number;

  constructor(
    readonly rule: RateLimitRule,
    private readonly now: () => number,
    maxKeys = 50_000,
  ) {
    this.#generationSize = Math.max(1, Math.floor(maxKeys / 2));
  }

  /** How many buckets are kept (at most `maxKeys`). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  /**
   * Takes one token for `key`: undefined when taken, otherwise the `rate_limited` error to answer
   * with (the delay until the next token in its details and `Retry-After`).
   */
  refuse(key: string, what: string): ApiError | undefined {
    const now = this.now();
    let bucket = this.#current.get(key);
    if (bucket === undefined) {
      bucket = this.#previous.get(key);
      if (bucket === undefined) bucket = { tokens: this.rule.burst, at: now };
      else this.#previous.delete(key);
      if (this.#current.size >= this.#generationSize) {
        this.#previous = this.#current;
        this.#current = new Map();
      }
      this.#current.set(key, bucket);
    }
    if (now > bucket.at) {
      bucket.tokens = Math.min(
        this.rule.burst,
        bucket.tokens + ((now - bucket.at) / 1000) * this.rule.perSecond,
      );
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    const retryAfterS = Math.ceil((1 - bucket.tokens) / this.rule.perSecond);
    return new ApiError(
      'rate_limited',
      `too many requests from this ${what}: at most ${this.rule.perSecond}/s with bursts of ${this.rule.burst}; retry in ${retryAfterS} s`,
      { retry_after_s: retryAfterS },
      { 'retry-after': String(retryAfterS) },
    );
  }

  /** Takes one token for `key` or throws `rate_limited` with the delay until the next one. */
  take(key: string, what: string): void {
    const refused = this.refuse(key, what);
    if (refused !== undefined) throw refused;
  }
}
