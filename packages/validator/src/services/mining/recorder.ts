import { signReceipt } from '@tensormine/protocol';
import type { AcceptedProof, NewLedgerEntry, Storage, TransactionOptions } from '../../store/types.js';
import { GroupCommit, type Pending } from '../group-commit.js';
import { COUNTERS } from '../metrics.js';
import { REWARD_TOKEN, rewardIdempotencyKey } from './rules.js';

/**
 * Group commit of accepted v4.0 proofs (docs/storage.md, "Few round trips"; the queue is
 * ../group-commit.ts): the proofs a node has verified while its previous group is being written
 * go together in the next group: one transaction, one `ledger.apply` for all their rewards (the accounts locked in one statement,
 * in one order), one statement for their rows, miners and devices on PostgreSQL
 * (`proofs.insertAllOrFail`), one counter add, one COMMIT. At most one proof per key goes in a
 * group (a second waits for the next). Nothing is answered before its group has committed.
 *
 * Each proof's answer is what a transaction of its own would have answered: when the group's
 * transaction fails (a proof of the group was accepted meanwhile, through this node or
 * another: its row's unique key refuses the group; or anything else), nothing of it was
 * written, and every proof of the group is written again in a transaction of its own, which
 * accepts it or refuses it alone. A group of one is that transaction.
 */

/** What a group may hold (keys). */
const GROUP_MAX = 64;

/** A verified proof to record: its reward is credited and its receipt signed in the transaction. */
export interface ProofToWrite {
  readonly challengeId: string;
  readonly pubkey: string;
  readonly nonce: number;
  readonly computationHash: string;
  readonly reward: bigint;
  readonly acceptedAt: number;
}

/** What a recorded proof is answered with (and what a resubmission of it is answered). */
export interface ProofReceipt {
  readonly acceptedAt: number;
  readonly ledgerEntryId: number;
  readonly txSig: string;
}

/** The receipt, or undefined: refused by the key's earlier proof of the challenge (nothing written). */
export type ProofWritten = ProofReceipt | undefined;

export class ProofRecorder {
  readonly #groups: GroupCommit<ProofToWrite, ProofWritten>;

  constructor(
    private readonly storage: Storage,
    /** The validator's secret key: it signs the receipts. */
    private readonly secretKey: Uint8Array,
    /** The transaction options (row locks). */
    private readonly options: TransactionOptions,
  ) {
    this.#groups = new GroupCommit(
      GROUP_MAX,
      (item) => item.pubkey,
      (group) => this.#writeGroup(group),
    );
  }

  /** Records the proof in the next group; resolves once it is committed (or refused). */
  write(item: ProofToWrite): Promise<ProofWritten> {
    return this.#groups.write(item);
  }

  async #writeGroup(group: readonly Pending<ProofToWrite, ProofWritten>[]): Promise<undefined> {
    // A group's transaction that failed wrote nothing: each proof is then written alone.
    const written =
      group.length === 1
        ? undefined
        : await this.#transaction(group.map((w) => w.item)).catch((error: unknown) => {
            if (error instanceof CommittedWithoutRows) throw error;
            return undefined;
          });
    if (written !== undefined) {
      for (const [i, w] of group.entries()) w.resolve(written[i]);
    } else {
      // Each alone (a group of one, or a group that failed and wrote nothing).
      await Promise.all(
        group.map((w) => this.#transaction([w.item]).then((one) => w.resolve(one?.[0]), w.reject)),
      );
    }
    return undefined;
  }

  /**
   * The proofs in one transaction, their receipts in their order; undefined when an earlier
   * acceptance refused it (nothing written), a throw for any other failure. Two round trips on
   * PostgreSQL: the accounts' locks with the rewards' ledger ids (each receipt signs its own),
   * then the writes with the COMMIT. An earlier acceptance by a key (committed since the proof's
   * read, through this node or another) is found by the proof's unique key: the insert fails,
   * and with it the transaction.
   */
  async #transaction(items: readonly ProofToWrite[]): Promise<ProofReceipt[] | undefined> {
    let inserted: Promise<boolean> | undefined;
    const receipts = await this.storage
      .transaction(async (tx) => {
        inserted = undefined;
        const entries = await tx.ledger.apply(items.map(rewardEntry));
        const receipts = items.map((item, i) => {
          const entry = entries[i];
          if (entry === undefined) throw new Error('ledger.apply returned fewer entries than it was given');
          return this.#receipt(item, entry.id);
        });
        // Not awaited: they travel with the COMMIT, and the transaction fails if one fails. The
        // proofs, their miners' rows and their devices' touch: one statement on PostgreSQL.
        const rows = items.map((item, i) => row(item, receipts[i] as ProofReceipt));
        inserted =
          rows.length === 1
            ? tx.proofs.insertOrFail(rows[0] as AcceptedProof, { recordMiner: true })
            : tx.proofs.insertAllOrFail(rows);
        inserted.catch(() => undefined);
        tx.inFlight(tx.counters.add(COUNTERS.proofsValid, items.length));
        return receipts;
      }, this.options)
      .catch(async (error: unknown) => {
        if ((await inserted?.catch(() => true)) !== false) throw error;
        return undefined;
      });
    if (receipts !== undefined && (await inserted) !== true) {
      throw new CommittedWithoutRows(items);
    }
    return receipts;
  }

  #receipt(item: ProofToWrite, ledgerEntryId: number): ProofReceipt {
    const txSig = signReceipt(
      {
        challengeId: item.challengeId,
        minerPubkey: item.pubkey,
        computationHash: item.computationHash,
        ledgerEntryId,
        rewardMinor: item.reward,
        acceptedAt: item.acceptedAt,
      },
      this.secretKey,
    );
    return { acceptedAt: item.acceptedAt, ledgerEntryId, txSig };
  }
}

/** The proof's reward: credited once per (challenge, key), whatever runs it again. */
function rewardEntry(item: ProofToWrite): NewLedgerEntry {
  return {
    type: 'mining_reward',
    pubkey: item.pubkey,
    token: REWARD_TOKEN,
    amount: item.reward,
    timestamp: item.acceptedAt,
    ref: item.challengeId,
    idempotencyKey: rewardIdempotencyKey(item.challengeId, item.pubkey),
  };
}

function row(item: ProofToWrite, receipt: ProofReceipt) {
  return {
    challengeId: item.challengeId,
    pubkey: item.pubkey,
    nonce: item.nonce,
    acceptedAt: item.acceptedAt,
    ledgerEntryId: receipt.ledgerEntryId,
    txSig: receipt.txSig,
  };
}

/** A transaction that committed without its proofs' rows: a broken invariant, never retried. */
class CommittedWithoutRows extends Error {
  constructor(items: readonly ProofToWrite[]) {
    super(
      `proofs of ${items.map((i) => `${i.challengeId} by ${i.pubkey}`).join(', ')}: committed without their rows`,
    );
  }
}
