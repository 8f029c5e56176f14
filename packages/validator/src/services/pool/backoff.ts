/**
 * The invalid-share back-off of a pool member (docs/protocol.md section 4.16): after
 * `threshold` invalid shares in a row from one key at one client address, its shares are
 * refused (`share_backoff`) for 1 s, then 2 s, 4 s... up to `maxMs`, doubling with each further
 * invalid share; an accepted share clears it, and so do `forgetMs` without an invalid share.
 * Keyed by address and key, so that nobody can put another member's key in back-off by sending
 * garbage in its name.
 */
export interface ShareBackoffOptions {
  readonly threshold?: number;
  readonly baseMs?: number;
  readonly maxMs?: number;
  readonly forgetMs?: number;
  /** Entries kept at most (the oldest are dropped first). */
  readonly maxEntries?: number;
  readonly now: () => number;
}

interface Entry {
  invalid: number;
  lastInvalidMs: number;
  until: number;
}

export const SHARE_BACKOFF_THRESHOLD = 8;
export const SHARE_BACKOFF_BASE_MS = 1_000;
export const SHARE_BACKOFF_MAX_MS = 300_000;

export class ShareBackoff {
  readonly #entries = new Map<string, Entry>();
  readonly #threshold: number;
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #forgetMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: ShareBackoffOptions) {
    this.#threshold = options.threshold ?? SHARE_BACKOFF_THRESHOLD;
    this.#baseMs = options.baseMs ?? SHARE_BACKOFF_BASE_MS;
    this.#maxMs = options.maxMs ?? SHARE_BACKOFF_MAX_MS;
    this.#forgetMs = options.forgetMs ?? 600_000;
    this.#maxEntries = options.maxEntries ?? 100_000;
    this.#now = options.now;
  }

  /** Milliseconds to wait before `key` may send a share again; 0 when it may now. */
  waitMs(key: string): number {
    const entry = this.#entries.get(key);
    if (entry === undefined) return 0;
    const now = this.#now();
    if (now - entry.lastInvalidMs >= this.#forgetMs) {
      this.#entries.delete(key);
      return 0;
    }
    return Math.max(0, entry.until - now);
  }

  /** Records an invalid share. */
  invalid(key: string): void {
    const now = this.#now();
    let entry = this.#entries.get(key);
    if (entry === undefined || now - entry.lastInvalidMs >= this.#forgetMs) {
      entry = { invalid: 0, lastInvalidMs: now, until: 0 };
    }
    this.#entries.delete(key);
    entry.invalid += 1;
    entry.lastInvalidMs = now;
    const over = entry.invalid - this.#threshold;
    if (over >= 0) entry.until = now + Math.min(this.#maxMs, this.#baseMs * 2 ** Math.min(over, 30));
    this.#entries.set(key, entry);
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  /** Records an accepted share: the count starts again. */
  valid(key: string): void {
    this.#entries.delete(key);
  }
}
