import type { PoolMemberRecord, PoolShareRecord, Storage, StorageTx } from '../../store/types.js';

/**
 * Group commit of accepted shares (docs/storage.md, "Pool shares"): the shares a node accepts
 * while its previous group is being written go together in the next group: one transaction,
 * one statement for all of them on PostgreSQL (`tx.pool.recordShares`), one COMMIT. At most
 * one share per member goes in a group (a second waits for the next), so each share's answer
 * is exactly what its own transaction would have answered: recorded (with its member's new
 * share difficulty) or a duplicate. A group never waits for a member's row another
 * transaction holds: that share goes in the next group (after BUSY_GROUPS, alone). Nothing is
 * answered before its group has committed; a group whose transaction fails answers that
 * failure to each of its shares (none of them written).
 */

/** What a group may hold (members). */
const GROUP_MAX = 64;
/**
 * Groups a share waits for when its member's row is held by another transaction (another
 * node's group, a block, a challenge) before it is written alone, waiting for that row.
 */
const BUSY_GROUPS = 8;

export interface ShareToWrite {
  readonly share: PoolShareRecord;
  /** The member as read before the share was checked. */
  readonly from: PoolMemberRecord;
  /** `from` advanced by this share (vardiff, last share time). */
  readonly next: PoolMemberRecord;
  /**
   * In the group's transaction, when the member changed since `from`: locks it, advances it by
   * the share (and counts it) and returns its share difficulty.
   */
  readonly readvance: (tx: StorageTx) => Promise<bigint | null>;
  /** In the group's transaction, once the share is recorded (e.g. clears a back-off). */
  readonly recorded: (tx: StorageTx) => Promise<void>;
  /** Writes the share in a transaction of its own (its member busy for BUSY_GROUPS groups). */
  readonly alone: () => Promise<ShareWritten>;
}

export type ShareWritten =
  | { readonly duplicate: true }
  | { readonly duplicate: false; readonly shareDifficulty: bigint | null };

interface Waiting {
  readonly item: ShareToWrite;
  /** Groups it was left out of, its member's row held by another transaction. */
  busy: number;
  readonly resolve: (written: ShareWritten) => void;
  readonly reject: (error: unknown) => void;
}

export class ShareRecorder {
  #queue: Waiting[] = [];
  #writing = false;
  #scheduled = false;

  constructor(
    private readonly storage: Storage,
    private readonly options: {
      /** The transaction options of a group (row locks). */
      readonly transaction: Parameters<Storage['transaction']>[1];
      /** Counts `n` accepted shares in the group's transaction. */
      readonly count: (tx: StorageTx, n: number) => Promise<void>;
    },
  ) {}

  /** Records the share in the next group; resolves once that group has committed. */
  write(item: ShareToWrite): Promise<ShareWritten> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, busy: 0, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#writing || this.#scheduled) return;
    this.#scheduled = true;
    // The shares checked in this turn of the event loop join the group.
    setImmediate(() => {
      this.#scheduled = false;
      void this.#writeGroup();
    });
  }

  async #writeGroup(): Promise<void> {
    const group: Waiting[] = [];
    const rest: Waiting[] = [];
    const members = new Set<string>();
    for (const w of this.#queue) {
      const pubkey = w.item.share.pubkey;
      if (group.length < GROUP_MAX && !members.has(pubkey)) {
        members.add(pubkey);
        group.push(w);
      } else {
        rest.push(w);
      }
    }
    this.#queue = rest;
    if (group.length === 0) return;
    this.#writing = true;
    try {
      const written = await this.storage.transaction(async (tx) => {
        const recorded = await tx.pool.recordShares(
          group.map(({ item }) => ({ share: item.share, from: item.from, next: item.next })),
        );
        const out: (ShareWritten | 'busy')[] = [];
        let counted = 0;
        for (const [i, { item }] of group.entries()) {
          const r = recorded[i];
          if (r?.busy === true) {
            out.push('busy');
            continue;
          }
          if (r === undefined || !r.inserted) {
            out.push({ duplicate: true });
            continue;
          }
          let shareDifficulty = item.next.shareDifficulty;
          if (r.advanced) counted++;
          else shareDifficulty = await item.readvance(tx);
          await item.recorded(tx);
          out.push({ duplicate: false, shareDifficulty });
        }
        if (counted > 0) await this.options.count(tx, counted);
        return out;
      }, this.options.transaction);
      const again: Waiting[] = [];
      for (const [i, w] of group.entries()) {
        const result = written[i];
        if (result !== 'busy' && result !== undefined) w.resolve(result);
        else if (++w.busy < BUSY_GROUPS) again.push(w);
        else w.item.alone().then(w.resolve, w.reject);
      }
      // First in the next group (which starts once this one has committed).
      this.#queue.unshift(...again);
    } catch (error) {
      for (const w of group) w.reject(error);
    } finally {
      this.#writing = false;
      if (this.#queue.length > 0) this.#schedule();
    }
  }
}
