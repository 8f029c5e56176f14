import type { CoordRecord, HexChallengeRecord } from './hexchain.js';

// Mining pool (services/pool/): part of the storage interface (../types.ts).

export interface PoolMemberRecord {
  readonly pubkey: string;
  /** PTM minor units escrowed in the `@pool` account (0 when not a member). */
  readonly stake: bigint;
  /** Unix seconds; null when the key is not a member (it left, or only has history). */
  readonly joinedAt: number | null;
  /** The share difficulty of its next challenge; null before its first pooled challenge. */
  readonly shareDifficulty: bigint | null;
  /** Vardiff window: start (Unix ms; -1 until its first challenge after joining) and accepted shares since. */
  readonly vardiffSinceMs: number;
  readonly vardiffShares: number;
  readonly sharesAccepted: number;
  readonly sharesStale: number;
  readonly sharesRejected: number;
  readonly blocksFound: number;
  readonly lastShareAt: number | null;
}

/** The share terms a pooled challenge was issued with. */
export interface PoolChallengeTerms {
  readonly challengeId: string;
  readonly pubkey: string;
  readonly shareDifficulty: bigint;
}

export interface PoolShareRecord {
  readonly pubkey: string;
  readonly challengeId: string;
  /** 64 hex digits; unique: the same header is one share. */
  readonly powHash: string;
  /** The share difficulty it was mined at. */
  readonly difficulty: bigint;
  /** The block difficulty of its challenge (its PPLNS score is difficulty / blockDifficulty). */
  readonly blockDifficulty: bigint;
  /** Stale shares are kept (to refuse duplicates) but never paid. */
  readonly stale: boolean;
  readonly createdAtMs: number;
}

export interface StoredPoolShare extends PoolShareRecord {
  readonly id: number;
}

export interface PoolBlockRecord {
  readonly blockHash: string;
  readonly height: number;
  readonly coord: CoordRecord;
  readonly finder: string;
  readonly reward: bigint;
  readonly fee: bigint;
  readonly window: bigint;
  /** The newest share when the block was paid (a proportional round starts after it). */
  readonly lastShareId: number;
  readonly payees: number;
  readonly foundAtMs: number;
  /** What the finder was paid: its PPLNS payout, remainder included (null: unknown, older rows). */
  readonly finderPayout: bigint | null;
}

/** An accepted share, the member as it was read and the member advanced by it (`recordShares`). */
export interface ShareToRecord {
  readonly share: PoolShareRecord;
  readonly from: PoolMemberRecord;
  readonly next: PoolMemberRecord;
}

/** What `recordShares` did with one share. */
export interface RecordedShare {
  readonly busy: boolean;
  readonly inserted: boolean;
  readonly advanced: boolean;
}

/** The invalid-share back-off of one client address and key (protocol 4.16). */
export interface PoolBackoffRecord {
  /** `<address>|<pubkey>`. */
  readonly key: string;
  /** Invalid shares in a row. */
  readonly invalid: number;
  readonly lastInvalidMs: number;
  /** Shares are refused until then (Unix ms; 0: not in back-off). */
  readonly untilMs: number;
}

export interface PoolRepo {
  /**
   * `lock`: locks the member's row until the transaction ends (PostgreSQL; a `row-locks`
   * transaction that writes the member after reading it must lock it). Refused in `read`.
   */
  getMember(pubkey: string, options?: { readonly lock?: boolean }): Promise<PoolMemberRecord | undefined>;
  putMember(member: PoolMemberRecord): Promise<void>;
  /** Current members and the sum of their stakes. */
  totals(): Promise<{ readonly members: number; readonly stake: bigint }>;
  /** Members with an accepted share at or after `sinceS` (Unix seconds). */
  countActive(sinceS: number): Promise<number>;
  putChallengeTerms(terms: PoolChallengeTerms): Promise<void>;
  getChallengeTerms(challengeId: string): Promise<PoolChallengeTerms | undefined>;
  /** `getMember(pubkey)` and `getChallengeTerms(challengeId)` in one statement (no lock). */
  getMemberAndTerms(
    pubkey: string,
    challengeId: string,
  ): Promise<{ readonly member?: PoolMemberRecord; readonly terms?: PoolChallengeTerms }>;
  /** False (nothing written) when a share with this pow hash exists. */
  insertShare(share: PoolShareRecord): Promise<boolean>;
  /**
   * Accepted (not stale) shares and their members' advances, in one statement on PostgreSQL
   * that never waits for a lock (docs/storage.md, "Pool shares"); at most one share per member.
   * For each, in order: `busy` when another transaction holds its member's row (PostgreSQL;
   * nothing written for it); else inserts `share` (`inserted` false, nothing written for it,
   * when a share with its pow hash exists) and, if the member's vardiff state is still the one
   * `next` was computed from (`from`: share difficulty, vardiff window start and count), writes
   * `next`'s vardiff state and last share time and adds one accepted share (`advanced`).
   * `inserted` without `advanced`: the member changed meanwhile; the caller advances it itself
   * (`getMember` with `lock`: the row is already this transaction's), in the same transaction.
   */
  recordShares(shares: readonly ShareToRecord[]): Promise<RecordedShare[]>;
  /** Paid (non-stale) shares with afterId < id < beforeId, newest first. */
  sharesBefore(beforeId: number, afterId: number, limit: number): Promise<StoredPoolShare[]>;
  /** The id of the newest share (0 when none). */
  lastShareId(): Promise<number>;
  /** False (nothing written) when this block was already paid. */
  insertBlock(block: PoolBlockRecord): Promise<boolean>;
  lastBlock(): Promise<PoolBlockRecord | undefined>;
  countBlocks(): Promise<number>;
  /** Sum of pool_payout credits of a key. */
  paidTotal(pubkey: string, token: string): Promise<bigint>;
  /** The paid pool block of this hash. */
  getBlock(blockHash: string): Promise<PoolBlockRecord | undefined>;
  /**
   * Deletes at most `limit` shares, oldest first, with id < `beforeId` whose challenge expired
   * before `expiredBeforeS` (Unix seconds). Returns how many.
   */
  pruneShares(beforeId: number, expiredBeforeS: number, limit: number): Promise<number>;
  /**
   * Deletes at most `limit` share terms of challenges that expired before `expiredBeforeS`
   * (a share or block for them is refused as expired anyway). Returns how many.
   */
  pruneChallengeTerms(expiredBeforeS: number, limit: number): Promise<number>;
  getBackoff(key: string): Promise<PoolBackoffRecord | undefined>;
  /**
   * What a share is checked against, in one statement: its challenge, the share terms it was
   * issued with (none when the challenge is unknown), the back-off of the sender's address and
   * key, and the member.
   */
  shareContext(
    challengeId: string,
    backoffKey: string,
    pubkey: string,
  ): Promise<{
    readonly challenge: HexChallengeRecord | undefined;
    readonly terms: PoolChallengeTerms | undefined;
    readonly backoff: PoolBackoffRecord | undefined;
    readonly member: PoolMemberRecord | undefined;
  }>;
  putBackoff(entry: PoolBackoffRecord): Promise<void>;
  deleteBackoff(key: string): Promise<void>;
  /** Deletes at most `limit` back-off entries whose last invalid share is older than `beforeMs`. */
  pruneBackoff(beforeMs: number, limit: number): Promise<number>;
}
