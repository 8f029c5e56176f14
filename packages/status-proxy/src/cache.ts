/**
 * The proxy's read cache: each answer is kept for `ttlMs` as the exact bytes to send, and
 * concurrent misses of one key share one upstream request (a thousand dashboards polling the
 * status cost the validator one request per ttl). `clear()` drops everything (a new block).
 * Refusals that say "not now" (429, 408, and every 5xx: a rate limit, a timeout, an unreachable
 * or busy validator) are passed on but never kept, so one refusal never reaches every reader.
 * Beyond `maxEntries` keys the oldest entry goes first.
 */

/** Whether an answer of this status may be kept and given to other readers. */
export function cacheable(status: number): boolean {
  return status < 500 && status !== 429 && status !== 408;
}

export interface CachedAnswer {
  readonly status: number;
  /** The JSON body: a string, or bytes when it is long (keptBody of @tensormine/protocol). */
  readonly body: string | Buffer;
  /** Headers to send with it (a refusal's Retry-After). */
  readonly headers?: Readonly<Record<string, string>>;
}

export class ReadCache {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, { expires: number; answer: CachedAnswer }>();
  readonly #inFlight = new Map<string, Promise<CachedAnswer>>();
  #generation = 0;
  hits = 0;
  misses = 0;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  /** The kept answer of `key` while it is fresh (counted as a hit); no promise, no allocation. */
  peek(key: string): CachedAnswer | undefined {
    const hit = this.#entries.get(key);
    if (hit === undefined || hit.expires <= Date.now()) return undefined;
    this.hits++;
    return hit.answer;
  }

  /**
   * The fresh answer of `key`, the one being loaded, or a new load. `admit` runs only when a new
   * load would start (the request that costs an upstream call): an answer from it is returned
   * instead, not kept (a budget refusal).
   */
  async get(
    key: string,
    load: () => Promise<CachedAnswer>,
    admit?: () => CachedAnswer | undefined,
  ): Promise<CachedAnswer> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit;
    const pending = this.#inFlight.get(key);
    if (pending !== undefined) {
      this.hits++;
      return pending;
    }
    const refused = admit?.();
    if (refused !== undefined) return refused;
    this.misses++;
    const generation = this.#generation;
    const promise = load()
      .then((answer) => {
        // An answer loaded before a clear() may be older than the change: do not keep it.
        if (this.#ttlMs > 0 && generation === this.#generation && cacheable(answer.status)) {
          this.#entries.delete(key);
          if (this.#entries.size >= this.#maxEntries) {
            const oldest = this.#entries.keys().next();
            if (oldest.done !== true) this.#entries.delete(oldest.value);
          }
          this.#entries.set(key, { expires: Date.now() + this.#ttlMs, answer });
        }
        return answer;
      })
      .finally(() => {
        if (this.#inFlight.get(key) === promise) this.#inFlight.delete(key);
      });
    this.#inFlight.set(key, promise);
    return promise;
  }

  /** How many answers are kept. */
  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#inFlight.clear();
  }
}
