import type { PoolBackoffRecord, Storage, StorageTx } from '../../store/types.js';

/**
 * The invalid-share back-off of a pool member (docs/protocol.md section 4.16): after
 * `threshold` invalid shares in a row from one key at one client address, its shares are
 * refused (`share_backoff`) for 1 s, then 2 s, 4 s... up to `maxMs`, doubling with each further
 * invalid share; an accepted share clears it, and so do `forgetMs` without an invalid share.
 * Keyed by address and key, so that nobody can put another member's key in back-off by sending
 * garbage in its name. The state lives in the storage (`pool_backoff`), so it holds across
 * restarts and across validator nodes sharing one database; entries older than `forgetMs` are
 * pruned with the shares (prune.ts).
 */
export interface ShareBackoffOptions {
  readonly threshold?: number;
  readonly baseMs?: number;
  readonly maxMs?: number;
  readonly forgetMs?: number;
  readonly now: () => number;
}

export const SHARE_BACKOFF_THRESHOLD = 8;
export const SHARE_BACKOFF_BASE_MS = 1_000;
export const SHARE_BACKOFF_MAX_MS = 300_000;
export const SHARE_BACKOFF_FORGET_MS = 600_000;

/** The back-off key of a client address and a key. */
export function backoffKey(address: string, pubkey: string): string {
  return `${address}|${pubkey}`;
}

export class ShareBackoff {
  readonly #threshold: number;
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly forgetMs: number;
  readonly #now: () => number;

  constructor(
    private readonly storage: Storage,
    options: ShareBackoffOptions,
  ) {
    this.#threshold = options.threshold ?? SHARE_BACKOFF_THRESHOLD;
    this.#baseMs = options.baseMs ?? SHARE_BACKOFF_BASE_MS;
    this.#maxMs = options.maxMs ?? SHARE_BACKOFF_MAX_MS;
    this.forgetMs = options.forgetMs ?? SHARE_BACKOFF_FORGET_MS;
    this.#now = options.now;
  }

  /** Milliseconds `entry` must still wait (0: it may send now; a forgotten entry waits 0). */
  waitOf(entry: PoolBackoffRecord | undefined): number {
    if (entry === undefined) return 0;
    const now = this.#now();
    if (now - entry.lastInvalidMs >= this.forgetMs) return 0;
    return Math.max(0, entry.untilMs - now);
  }

  /** Milliseconds to wait before `key` may send a share again; 0 when it may now. */
  async waitMs(key: string): Promise<number> {
    return this.waitOf(await this.storage.read((tx) => tx.pool.getBackoff(key)));
  }

  /** Records an invalid share (its own transaction: read, count, write). */
  invalid(key: string): Promise<void> {
    return this.storage.transaction(async (tx) => {
      const now = this.#now();
      let entry = await tx.pool.getBackoff(key);
      if (entry === undefined || now - entry.lastInvalidMs >= this.forgetMs) {
        entry = { key, invalid: 0, lastInvalidMs: now, untilMs: 0 };
      }
      const invalid = entry.invalid + 1;
      const over = invalid - this.#threshold;
      const untilMs =
        over >= 0 ? now + Math.min(this.#maxMs, this.#baseMs * 2 ** Math.min(over, 30)) : entry.untilMs;
      await tx.pool.putBackoff({ key, invalid, lastInvalidMs: now, untilMs });
    });
  }

  /** Records an accepted share inside its transaction: the count starts again. */
  async valid(tx: StorageTx, key: string): Promise<void> {
    await tx.pool.deleteBackoff(key);
  }
}
