import type { FoundResult } from '../found.js';
import type { DropReporter } from './drops.js';

/** Pool mode: at most this many share submissions in flight; more found meanwhile queue. */
export const POOL_MAX_IN_FLIGHT = 32;
/**
 * Pool mode: at most this many shares wait behind the in-flight ones. Beyond it the oldest
 * queued share is dropped and reported (`shares-dropped`): a miner that finds shares faster
 * than the validator answers is at a share difficulty far too easy for it (a new member before
 * vardiff), and the newest shares are the likeliest to still be current.
 */
export const POOL_QUEUE_MAX = 4096;

/** Pool shares waiting for a free submission slot (POOL_MAX_IN_FLIGHT), oldest first. */
export class ShareQueue {
  readonly #shares: FoundResult[] = [];

  constructor(
    private readonly drops: DropReporter,
    private readonly now: () => number,
    /** How many shares may wait (POOL_QUEUE_MAX unless the Miner was told otherwise). */
    private readonly max: number = POOL_QUEUE_MAX,
  ) {}

  get length(): number {
    return this.#shares.length;
  }

  /** Queues a share; when the queue is full the oldest one is dropped (and reported). */
  push(found: FoundResult): void {
    this.#shares.push(found);
    if (this.#shares.length > this.max) {
      this.#shares.shift();
      this.drops.dropped('queue-full', 1);
    }
  }

  /**
   * Hands queued shares to `send` while `free()` says a slot is free; the shares whose
   * challenge expired meanwhile are dropped (and reported).
   */
  drain(free: () => boolean, send: (found: FoundResult) => void): void {
    let expired = 0;
    while (free() && this.#shares.length > 0) {
      const next = this.#shares.shift()!;
      if (this.now() >= next.expiresAtMs) {
        expired++;
        continue;
      }
      send(next);
    }
    if (expired > 0) this.drops.dropped('expired', expired);
  }

  /** Empties the queue; returns how many shares it held. */
  clear(): number {
    return this.#shares.splice(0).length;
  }
}
