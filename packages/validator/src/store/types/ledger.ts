// Ledger: part of the storage interface (../types.ts).

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
