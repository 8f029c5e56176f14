// Economy (issue 10): part of the storage interface (../types.ts).

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
