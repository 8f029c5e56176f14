/**
 * Retry back-off: the first retry after `firstMs`, each next one after twice the previous,
 * up to `maxMs`. The Miner uses one for failed getWork calls and one per undelivered result.
 */
export class Backoff {
  constructor(
    readonly firstMs: number,
    readonly maxMs: number,
  ) {}

  /** The delay after `previousMs` (the first delay when there was none). */
  next(previousMs?: number): number {
    return previousMs === undefined ? this.firstMs : Math.min(previousMs * 2, this.maxMs);
  }
}

/** When each undelivered result is due again, each on its own back-off. */
export class RetrySchedule {
  readonly #due = new Map<string, { atMs: number; delayMs: number }>();

  constructor(
    private readonly backoff: Backoff,
    private readonly now: () => number,
  ) {}

  /** Puts `id` off by its next delay; returns it, and whether it was its first. */
  defer(id: string): { readonly delayMs: number; readonly first: boolean } {
    const previous = this.#due.get(id);
    const delayMs = this.backoff.next(previous?.delayMs);
    this.#due.set(id, { atMs: this.now() + delayMs, delayMs });
    return { delayMs, first: previous === undefined };
  }

  has(id: string): boolean {
    return this.#due.has(id);
  }

  /** When `id` is due (0: now, it was never put off). */
  dueAt(id: string): number {
    return this.#due.get(id)?.atMs ?? 0;
  }

  /** Makes `id` due now and forgets its back-off. */
  forget(id: string): void {
    this.#due.delete(id);
  }

  /** The earliest due time of the results that are still `pending` (the others are forgotten). */
  earliest(pending: (id: string) => boolean): number | undefined {
    let next: number | undefined;
    for (const [id, { atMs }] of this.#due) {
      if (!pending(id)) {
        this.#due.delete(id);
        continue;
      }
      if (next === undefined || atMs < next) next = atMs;
    }
    return next;
  }
}
