/**
 * The storage interface of the validator. Every method is asynchronous so that a PostgreSQL
 * adapter can implement it; the embedded implementation is node:sqlite (sqlite.ts).
 *
 * All writes happen inside `transaction`, which is atomic and isolated: either every write of
 * the callback is committed (and survives a crash once the promise resolves) or none is.
 * Callbacks must not do slow work (no proof verification, no network): verify first, then
 * open a short transaction that re-checks state and writes.
 *
 * Conventions: public keys are 64 lowercase hex digits; amounts are bigint minor units
 * (stored as decimal text, because a balance may exceed a signed 64-bit integer); timestamps
 * are Unix seconds unless a name ends in `Ms`.
 */

export interface Storage {
  /**
   * Runs `fn` in one atomic, isolated transaction: the outcome is as if transactions ran one at
   * a time (SQLite runs them one at a time; PostgreSQL runs them SERIALIZABLE and re-runs a
   * callback that lost a serialization conflict, so `fn` may run more than once: it must only
   * act through `tx` and return a value, never change memory or the world outside, see
   * docs/storage.md).
   */
  transaction<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T>;
  /** Runs read-only `fn` against a consistent view (it must not write). */
  read<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T>;
  /**
   * Calls handler with each payload notified on channel by a committed transaction of ANY node
   * sharing this database (this one included). Resolves once listening; the returned function
   * stops it.
   *
   * SQLite: one process owns the file, so "any node" is this storage object: payloads are
   * delivered in process, in commit order, right after the COMMIT of their transaction.
   * PostgreSQL: `LISTEN` on a dedicated connection, reconnected when lost; payloads notified
   * while it was down are NOT delivered, so a consumer re-reads the state it follows after a
   * gap (see `PostgresStorage.onListenReconnect`). The handler must not throw (a throw is
   * reported with `process.emitWarning` and ignored).
   */
  listen(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>;
  /** Where the data lives, for logs: a file path, ':memory:' or a postgres:// URL without its password. */
  readonly location: string;
  close(): Promise<void>;
}

export interface StorageTx {
  readonly meta: MetaRepo;
  readonly counters: CounterRepo;
  readonly ledger: LedgerRepo;
  readonly devices: DeviceRepo;
  readonly challenges: ChallengeRepo;
  readonly proofs: ProofRepo;
  readonly miners: MinerRepo;
  readonly hexChallenges: HexChallengeRepo;
  readonly blocks: BlockRepo;
  readonly economy: EconomyRepos;
  readonly pool: PoolRepo;
  readonly requestNonces: RequestNonceRepo;
  /** The validator nodes sharing the database (heartbeats; services/cluster.ts). */
  readonly nodes: NodeRepo;
  /**
   * Queues a notification, delivered to every listener if and only if the transaction commits.
   * Payload <= 7000 bytes. `channel`: 1 to 63 characters among a-z, 0-9 and _, starting with
   * a letter. Refused in `read`.
   */
  notify(channel: string, payload: string): Promise<void>;
}

/**
 * The (public key, nonce) pairs of accepted signed requests, remembered until their replay
 * window has closed. A pair is claimed in the transaction of the request's effect, after every
 * check passed, so a rolled-back request leaves no pair behind and a committed one leaves
 * exactly one.
 */
export interface RequestNonceRepo {
  /**
   * Records the pair, valid until `expiresAtMs`; false when it is already recorded (a replay).
   * Also forgets a bounded batch of pairs whose window closed before `forgetBeforeMs`.
   */
  claim(pubkey: string, nonce: string, expiresAtMs: number, forgetBeforeMs: number): Promise<boolean>;
  /** Pairs currently stored (expired ones included until they are forgotten). */
  count(): Promise<number>;
}

/** Small key/value settings that must survive a restart (validator seed, config overrides). */
export interface MetaRepo {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
}

/** Monotonic counters (challenges issued, proofs valid, rejections by reason...). */
export interface CounterRepo {
  add(name: string, delta: number): Promise<void>;
  get(name: string): Promise<number>;
  /** Every counter whose name starts with `prefix`. */
  list(prefix: string): Promise<Record<string, number>>;
}

// ---------------------------------------------------------------------------------------------
// Ledger
// ---------------------------------------------------------------------------------------------

export type LedgerEntryType =
  | 'genesis'
  | 'mining_reward'
  | 'transfer'
  | 'stake'
  | 'unstake'
  | 'yield'
  | 'penalty'
  | 'swap'
  | 'vault_deposit'
  | 'vault_withdraw'
  | 'order'
  | 'pool_join'
  | 'pool_leave'
  | 'fee'
  | 'pool_payout';

export interface NewLedgerEntry {
  readonly type: LedgerEntryType;
  readonly pubkey: string;
  readonly token: string;
  /** Signed: positive credits the account, negative debits it. */
  readonly amount: bigint;
  readonly timestamp: number;
  /** What the entry is about (a challenge id, a block hash, a stake id...). */
  readonly ref: string | null;
  /**
   * Makes the write idempotent: a second entry with the same key is not written and
   * `apply` returns the first one instead.
   */
  readonly idempotencyKey?: string;
}

export interface LedgerEntry extends NewLedgerEntry {
  /** Increasing with time; opaque to clients. */
  readonly id: number;
}

export interface Balance {
  readonly token: string;
  readonly amount: bigint;
}

export interface LedgerFilter {
  readonly pubkey?: string;
  readonly token?: string;
  readonly type?: LedgerEntryType;
  /** Only entries with id < beforeId (newest first pagination). */
  readonly beforeId?: number;
  readonly limit: number;
}

export interface LedgerRepo {
  /**
   * Applies entries atomically with the enclosing transaction, updating balances. Rejects
   * with `InsufficientBalanceError` (and writes nothing of this call) when a debit would take
   * a balance below zero.
   */
  apply(entries: readonly NewLedgerEntry[]): Promise<LedgerEntry[]>;
  balance(pubkey: string, token: string): Promise<bigint>;
  balances(pubkey: string): Promise<Balance[]>;
  /** Newest first. */
  list(filter: LedgerFilter): Promise<LedgerEntry[]>;
  /** Sum of positive mining_reward entries of a key, per token. */
  rewardsTotal(pubkey: string, token: string): Promise<bigint>;
}

export class InsufficientBalanceError extends Error {
  override readonly name = 'InsufficientBalanceError';
  constructor(
    readonly pubkey: string,
    readonly token: string,
    readonly balance: bigint,
    readonly required: bigint,
  ) {
    super(`balance of ${token} is ${balance} minor units, ${required} required`);
  }
}

// ---------------------------------------------------------------------------------------------
// Devices and miners
// ---------------------------------------------------------------------------------------------

/** How a device is called back (docs/protocol.md 4.17). */
export type DeviceCallbackMode = 'none' | 'on' | 'relayed' | 'off';

export interface DeviceRecord {
  readonly deviceId: string;
  readonly pubkey: string;
  readonly deviceType: string;
  readonly port: number | null;
  readonly registeredAt: number;
  readonly lastSeen: number;
  /** The source address of the registration, where callbacks go; null without one. */
  readonly callbackAddress: string | null;
  readonly callbackMode: DeviceCallbackMode;
  /** The hash rate the device reported (nonces per second); null when it did not. */
  readonly hashrate: number | null;
}

export interface DeviceRepo {
  /** Registers or updates (same pubkey: new type, port, callback and hash rate; registeredAt kept). */
  upsert(device: DeviceRecord): Promise<DeviceRecord>;
  get(pubkey: string): Promise<DeviceRecord | undefined>;
  touch(pubkey: string, lastSeen: number): Promise<void>;
  /** Ordered by registeredAt, then pubkey. */
  list(filter: { deviceType?: string; limit: number; offset: number }): Promise<DeviceRecord[]>;
  countByType(): Promise<Record<string, number>>;
  /** Devices other than `exceptPubkey` called back at `address`. */
  countAtAddress(address: string, exceptPubkey: string): Promise<number>;
  /** Devices called back (mode `on`), oldest registration first, at most `limit`. */
  listCallbacks(limit: number): Promise<DeviceRecord[]>;
}

export interface MinerStats {
  readonly pubkey: string;
  readonly proofsAccepted: number;
  readonly proofsRejected: number;
  readonly blocksAccepted: number;
  readonly lastSeen: number | null;
}

export interface MinerRepo {
  get(pubkey: string): Promise<MinerStats | undefined>;
  record(
    pubkey: string,
    change: { proofsAccepted?: number; proofsRejected?: number; blocksAccepted?: number; seenAt: number },
  ): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// v4.0 challenges and accepted proofs
// ---------------------------------------------------------------------------------------------

/** Everything needed to rebuild a TensorChallenge (protocol `buildChallenge`) and serve it. */
export interface ChallengeRecord {
  readonly id: string;
  readonly serial: number;
  readonly slot: number;
  readonly slotHash: string;
  readonly deviceType: string;
  readonly difficulty: number;
  readonly dim: number;
  /** 64 hex digits. */
  readonly entropy: string;
  /** 64 hex digits. */
  readonly challengeHash: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface ChallengeRepo {
  insert(challenge: ChallengeRecord): Promise<void>;
  get(id: string): Promise<ChallengeRecord | undefined>;
  /** The next serial number (starts at 0, never reused). */
  nextSerial(): Promise<number>;
  /** Challenges still answerable at `now` (Unix seconds): expiresAt >= now. */
  countOpen(now: number): Promise<number>;
}

export interface AcceptedProof {
  readonly challengeId: string;
  readonly pubkey: string;
  readonly nonce: number;
  readonly acceptedAt: number;
  readonly ledgerEntryId: number;
  /** The validator's receipt signature (128 hex digits). */
  readonly txSig: string;
}

export interface ProofRepo {
  /** False (and nothing written) when this challenge already has an accepted proof from this key. */
  insert(proof: AcceptedProof): Promise<boolean>;
  get(challengeId: string, pubkey: string): Promise<AcceptedProof | undefined>;
}

// ---------------------------------------------------------------------------------------------
// v4.1 hexchain
// ---------------------------------------------------------------------------------------------

export interface CoordRecord {
  readonly q: number;
  readonly r: number;
  readonly s: number;
}

export interface HexParentRecord {
  readonly coord: CoordRecord;
  /** 64 hex digits. */
  readonly blockHash: string;
  readonly depth: number;
}

export interface HexChallengeRecord {
  readonly id: string;
  readonly serial: number;
  readonly coord: CoordRecord;
  readonly slot: number;
  readonly slotHash: string;
  readonly challengeHash: string;
  /** 64 hex digits, big-endian. */
  readonly target: string;
  readonly difficulty: bigint;
  readonly entropy: string;
  readonly parents: readonly HexParentRecord[];
  readonly depth: number;
  readonly minerPubkey: string | null;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface HexChallengeRepo {
  insert(challenge: HexChallengeRecord): Promise<void>;
  get(id: string): Promise<HexChallengeRecord | undefined>;
  nextSerial(): Promise<number>;
  /** Challenges still answerable at `now` (Unix seconds): expiresAt >= now. */
  countOpen(now: number): Promise<number>;
  /** The expiry times (Unix seconds) of the challenges still answerable at `now` (expiresAt >= now), in any order. */
  openExpiries(now: number): Promise<number[]>;
}

export interface BlockRecord {
  readonly coord: CoordRecord;
  readonly blockHash: string;
  readonly powHash: string;
  readonly depth: number;
  readonly parents: readonly CoordRecord[];
  readonly minerPubkey: string;
  readonly nonce: number;
  readonly challengeId: string;
  readonly slot: number;
  readonly difficulty: bigint;
  /** Acceptance time in milliseconds (the retarget rule needs sub-second spans). */
  readonly timestampMs: number;
  /** 1 for the first mined block, then 2, 3...; genesis is not stored. */
  readonly height: number;
}

export interface BlockRepo {
  /** False (and nothing written) when the coordinate is already occupied. */
  insert(block: BlockRecord): Promise<boolean>;
  get(coord: CoordRecord): Promise<BlockRecord | undefined>;
  /** Blocks in height order with height > afterHeight. */
  list(afterHeight: number, limit: number): Promise<BlockRecord[]>;
  /** Every block in height order (to rebuild the lattice at start). */
  all(): Promise<BlockRecord[]>;
  byHeight(height: number): Promise<BlockRecord | undefined>;
  count(): Promise<number>;
}

// ---------------------------------------------------------------------------------------------
// Mining pool (services/pool/)
// ---------------------------------------------------------------------------------------------

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
  getMember(pubkey: string): Promise<PoolMemberRecord | undefined>;
  putMember(member: PoolMemberRecord): Promise<void>;
  /** Current members and the sum of their stakes. */
  totals(): Promise<{ readonly members: number; readonly stake: bigint }>;
  /** Members with an accepted share at or after `sinceS` (Unix seconds). */
  countActive(sinceS: number): Promise<number>;
  putChallengeTerms(terms: PoolChallengeTerms): Promise<void>;
  getChallengeTerms(challengeId: string): Promise<PoolChallengeTerms | undefined>;
  /** False (nothing written) when a share with this pow hash exists. */
  insertShare(share: PoolShareRecord): Promise<boolean>;
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
  putBackoff(entry: PoolBackoffRecord): Promise<void>;
  deleteBackoff(key: string): Promise<void>;
  /** Deletes at most `limit` back-off entries whose last invalid share is older than `beforeMs`. */
  pruneBackoff(beforeMs: number, limit: number): Promise<number>;
}

// ---------------------------------------------------------------------------------------------
// Economy (issue 10)
// ---------------------------------------------------------------------------------------------

/**
 * The storage interface of the economy (issue 10): one repository per product, reached as
 * `tx.economy.*`. Amounts are bigint minor units; prices bigint 10^-18 units of the quote token
 * per whole token; times Unix seconds. The money itself moves only through `tx.ledger.apply`
 * (balances of keys and of module accounts such as `@stake`); these tables hold the state of
 * each product and point at the ledger through `ref`.
 */

export interface EconomyRepos {
  readonly requests: EconomyRequestRepo;
  readonly transfers: TransferRepo;
  readonly stakes: StakeRepo;
  readonly vaults: VaultRepo;
  readonly swapPools: SwapPoolRepo;
  readonly orders: OrderRepo;
  /** Per token: the sum of every balance (keys and module accounts). */
  supply(): Promise<Map<string, bigint>>;
  /** Per token: the sum of the credits of the entry types that create money (genesis, mining_reward). */
  issued(): Promise<Map<string, bigint>>;
}

/** The stored result of a signed state-changing economy request. */
export interface EconomyRequestRecord {
  readonly pubkey: string;
  /** The x-tm-nonce of the request (32 hex digits). */
  readonly nonce: string;
  /** SHA-256 (hex) of method, path, timestamp, nonce, signature and body: the identical request. */
  readonly requestHash: string;
  readonly operation: string;
  /** The JSON of the 200 response. */
  readonly result: string;
  readonly createdAt: number;
}

export interface EconomyRequestRepo {
  get(pubkey: string, nonce: string): Promise<EconomyRequestRecord | undefined>;
  insert(record: EconomyRequestRecord): Promise<void>;
  /** Deletes the results stored before `before` (Unix seconds); returns how many. */
  prune(before: number): Promise<number>;
}

export interface TransferRecord {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly token: string;
  readonly amount: bigint;
  readonly memo: string | null;
  readonly timestamp: number;
}

export interface TransferRepo {
  insert(transfer: TransferRecord): Promise<void>;
  get(id: string): Promise<TransferRecord | undefined>;
}

export interface StakeRecord {
  readonly id: string;
  readonly serial: number;
  readonly pubkey: string;
  readonly token: string;
  readonly amount: bigint;
  readonly lockDays: 0 | 7 | 30;
  readonly yieldBps: bigint;
  readonly penaltyBps: bigint;
  readonly createdAt: number;
  readonly lockExpiry: number;
  /** Yield paid so far (claims and the payout at unstake). */
  readonly yieldPaid: bigint;
  readonly lastClaimAt: number;
  readonly closedAt: number | null;
}

export interface StakeRepo {
  nextSerial(): Promise<number>;
  insert(stake: StakeRecord): Promise<void>;
  get(id: string): Promise<StakeRecord | undefined>;
  /** Open positions of a key, oldest first. */
  listOpen(pubkey: string, limit: number): Promise<StakeRecord[]>;
  /** Every open position (for checks), oldest first. */
  allOpen(): Promise<StakeRecord[]>;
  recordClaim(id: string, yieldPaid: bigint, at: number): Promise<void>;
  close(id: string, yieldPaid: bigint, at: number): Promise<void>;
}

export interface VaultRecord {
  readonly id: string;
  readonly serial: number;
  readonly pubkey: string;
  readonly token: string;
  readonly amount: bigint;
  readonly unlockAt: number;
  readonly createdAt: number;
  readonly withdrawnAt: number | null;
}

export interface VaultRepo {
  nextSerial(): Promise<number>;
  insert(vault: VaultRecord): Promise<void>;
  get(id: string): Promise<VaultRecord | undefined>;
  /** Vaults of a key, oldest first. */
  list(pubkey: string, limit: number): Promise<VaultRecord[]>;
  /** Every vault not withdrawn (for checks). */
  allLocked(): Promise<VaultRecord[]>;
  markWithdrawn(id: string, at: number): Promise<void>;
}

export interface SwapPoolRecord {
  /** `BASE/QUOTE`. */
  readonly pair: string;
  readonly base: string;
  readonly quote: string;
  readonly feeBps: bigint;
  readonly createdAt: number;
}

export interface SwapPoolRepo {
  insert(pool: SwapPoolRecord): Promise<void>;
  /** The pool trading these two tokens, in either order. */
  find(a: string, b: string): Promise<SwapPoolRecord | undefined>;
  list(): Promise<SwapPoolRecord[]>;
  nextSwapSerial(): Promise<number>;
  /** Sum of the magnitudes of `type` entries of `account` in `token` with timestamp >= since. */
  movedSince(account: string, type: 'swap', token: string, since: number): Promise<bigint>;
}

export type OrderSide = 'buy' | 'sell';
export type OrderState = 'open' | 'partially_filled' | 'filled' | 'cancelled';

export interface OrderRecord {
  readonly id: string;
  readonly serial: number;
  readonly pubkey: string;
  readonly side: OrderSide;
  readonly token: string;
  readonly quoteToken: string;
  readonly price: bigint;
  readonly amount: bigint;
  readonly filled: bigint;
  /** Escrow still held for the order (sell: token; buy: quote token). */
  readonly escrow: bigint;
  readonly status: OrderState;
  readonly createdAt: number;
  readonly closedAt: number | null;
}

export interface OrderFillRecord {
  readonly takerOrderId: string;
  readonly makerOrderId: string;
  readonly amount: bigint;
  readonly price: bigint;
  readonly quoteAmount: bigint;
  readonly executedAt: number;
}

export interface OrderRepo {
  nextSerial(): Promise<number>;
  insert(order: OrderRecord): Promise<void>;
  get(id: string): Promise<OrderRecord | undefined>;
  update(
    id: string,
    change: { filled: bigint; escrow: bigint; status: OrderState; closedAt: number | null },
  ): Promise<void>;
  /**
   * Resting orders of `side` in the book of (token, quoteToken) not placed by `excludePubkey`,
   * best price first (sells: lowest; buys: highest), then oldest first.
   */
  book(
    token: string,
    quoteToken: string,
    side: OrderSide,
    excludePubkey: string,
    limit: number,
  ): Promise<OrderRecord[]>;
  /** Resting orders, oldest first, with serial > afterSerial. */
  listResting(filter: {
    token?: string;
    side?: OrderSide;
    pubkey?: string;
    afterSerial: number;
    limit: number;
  }): Promise<OrderRecord[]>;
  insertFill(fill: OrderFillRecord): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Validator nodes (a cluster on PostgreSQL)
// ---------------------------------------------------------------------------------------------

/**
 * The validator nodes sharing one database (a cluster on PostgreSQL): one row per node, written
 * by its heartbeats (services/cluster.ts). A node is live while its heartbeat is recent.
 */

export interface NodeRecord {
  /** The node's identifier (`--node-id`, or generated once per data directory). */
  readonly nodeId: string;
  /** Random per process start: tells a restarted node, or a second process using the same id. */
  readonly instance: string;
  /** The base URL the node serves at; null before it listens. */
  readonly url: string | null;
  readonly softwareVersion: string;
  /** Unix ms when this process started. */
  readonly startedAtMs: number;
  /** Unix ms of the last heartbeat (the node's clock). */
  readonly heartbeatAtMs: number;
  /** Height of the newest block its in-memory lattice has applied. */
  readonly appliedHeight: number;
  /** Whether the lattice had applied every committed block at that heartbeat. */
  readonly synced: boolean;
  /** Unix ms when the process stopped cleanly; null while it runs (or after a crash). */
  readonly stoppedAtMs: number | null;
}

export interface NodeRepo {
  /** Writes the node's row (insert, or replace its fields). */
  put(node: NodeRecord): Promise<void>;
  get(nodeId: string): Promise<NodeRecord | undefined>;
  /** Every row, by node id. */
  list(): Promise<NodeRecord[]>;
  /** Deletes rows whose last heartbeat is older than `beforeMs`; returns how many. */
  forget(beforeMs: number): Promise<number>;
}
