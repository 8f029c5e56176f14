/**
 * Group commit (docs/storage.md, "Few round trips"): the items a node accepts while its previous
 * group is being written go together in the next group, so that they share one transaction, its
 * statements and one COMMIT. At most `max` items go in a group and at most one per key (a second
 * item of a key waits for the next group), so each item's answer can be exactly what a
 * transaction of its own would have answered. One group is written at a time; the next forms
 * from what arrived meanwhile. The v4.0 proofs (mining/recorder.ts) and the pool's shares
 * (pool/recorder.ts) are written this way; what a group's transaction does, and what an item
 * that could not be written with its group becomes, is theirs.
 */

/** An item waiting for its group, and how its caller is answered. */
export interface Pending<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Writes one group: answers each of its items (resolve or reject), and returns the items to put
 * first in the next group (none: every item was answered). A throw answers that error to every
 * item of the group.
 */
export type GroupWriter<T, R> = (
  group: readonly Pending<T, R>[],
) => Promise<readonly Pending<T, R>[] | undefined>;

export class GroupCommit<T, R> {
  #queue: Pending<T, R>[] = [];
  #writing = false;
  #scheduled = false;

  constructor(
    /** The most items a group holds. */
    private readonly max: number,
    /** The key an item holds locks on: at most one item of a key per group. */
    private readonly keyOf: (item: T) => string,
    private readonly writeGroup: GroupWriter<T, R>,
  ) {}

  /** Queues the item for the next group; settles once its group has answered it. */
  write(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#writing || this.#scheduled) return;
    this.#scheduled = true;
    // The items accepted in this turn of the event loop join the group.
    setImmediate(() => {
      this.#scheduled = false;
      void this.#next();
    });
  }

  async #next(): Promise<void> {
    const group: Pending<T, R>[] = [];
    const rest: Pending<T, R>[] = [];
    const keys = new Set<string>();
    for (const pending of this.#queue) {
      const key = this.keyOf(pending.item);
      if (group.length < this.max && !keys.has(key)) {
        keys.add(key);
        group.push(pending);
      } else {
        rest.push(pending);
      }
    }
    this.#queue = rest;
    if (group.length === 0) return;
    this.#writing = true;
    try {
      const again = await this.writeGroup(group);
      // First in the next group (which starts once this one is done).
      if (again !== undefined && again.length > 0) this.#queue.unshift(...again);
    } catch (error) {
      for (const pending of group) pending.reject(error);
    } finally {
      this.#writing = false;
      if (this.#queue.length > 0) this.#schedule();
    }
  }
}
