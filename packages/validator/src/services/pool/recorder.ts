import type { PoolMemberRecord, PoolShareRecord, Storage, StorageTx } from '../../store/types.js';
import { GroupCommit, type Pending } from '../group-commit.js';

/**
 * Group commit of accepted shares (docs/storage.md, "Pool shares"; the queue is
 * ../group-commit.ts): the shares a node accepts
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

export class ShareRecorder {
  readonly #groups: GroupCommit<ShareToWrite, ShareWritten>;
  /** Groups a share was left out of, its member's row held by another transaction. */
  readonly #busy = new WeakMap<ShareToWrite, number>();

  constructor(
    private readonly storage: Storage,
    private readonly options: {
      /** The transaction options of a group (row locks). */
      readonly transaction: Parameters<Storage['transaction']>[1];
      /** Counts `n` accepted shares in the group's transaction. */
      readonly count: (tx: StorageTx, n: number) => Promise<void>;
    },
  ) {
    this.#groups = new GroupCommit(
      GROUP_MAX,
      (item) => item.share.pubkey,
      (group) => this.#writeGroup(group),
    );
  }

  /** Records the share in the next group; resolves once that group has committed. */
  write(item: ShareToWrite): Promise<ShareWritten> {
    return this.#groups.write(item);
  }

  /** A group's transaction fails as a whole: the error answers each of its shares (GroupCommit). */
  async #writeGroup(
    group: readonly Pending<ShareToWrite, ShareWritten>[],
  ): Promise<Pending<ShareToWrite, ShareWritten>[]> {
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
    const again: Pending<ShareToWrite, ShareWritten>[] = [];
    for (const [i, w] of group.entries()) {
      const result = written[i];
      if (result !== 'busy' && result !== undefined) {
        w.resolve(result);
        continue;
      }
      const busy = (this.#busy.get(w.item) ?? 0) + 1;
      this.#busy.set(w.item, busy);
      if (busy < BUSY_GROUPS) again.push(w);
      else w.item.alone().then(w.resolve, w.reject);
    }
    // First in the next group (which starts once this one has committed).
    return again;
  }
}
