/**
 * The proxy's read cache: each answer is kept for `ttlMs` as the exact bytes to send, and
 * concurrent misses of one key share one upstream request (a thousand dashboards polling the
 * status cost the validator one request per ttl). `clear()` drops everything (a new block).
 */
export interface CachedAnswer {
  readonly status: number;
  /** The JSON body: a string, or bytes when it is long (keptBody of @tensormine/protocol). */
  readonly body: string | Buffer;
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

  async get(key: string, load: () => Promise<CachedAnswer>): Promise<CachedAnswer> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit;
    const pending = this.#inFlight.get(key);
    if (pending !== undefined) {
      this.hits++;
      return pending;
    }
    this.misses++;
    const generation = this.#generation;
    const promise = load()
      .then((answer) => {
        // An answer loaded before a clear() may be older than the change: do not keep it.
        if (this.#ttlMs > 0 && generation === this.#generation && answer.status < 500) {
          if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
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

  clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#inFlight.clear();
  }
}
