/**
 * Module accounts: funds held by the economy itself are balances of accounts whose names cannot
 * be public keys (they start with `@`), so the ledger's rules (append-only entries, balances never
 * negative, one transaction per movement) protect them like any user's, and the supply of a
 * token is the sum of all its balances.
 */

/** Principal of open stake positions (PTM). */
export const STAKE_ACCOUNT = '@stake';
/** The funded yield reserve (PTM): pays staking yield, receives early-unstake penalties. */
export const RESERVE_ACCOUNT = '@reserve';
/** Fees taken from swaps, in the token they were paid in. */
export const FEES_ACCOUNT = '@fees';
/** Tokens locked in vaults. */
export const VAULT_ACCOUNT = '@vault';
/** Escrow of resting marketplace orders (sell: the token; buy: the quote token). */
export const MARKET_ACCOUNT = '@market';
/**
 * The marketplace's rounding (quote token): what buyers paid beyond what sellers received,
 * less than 2 minor units per order (economy/orders.ts).
 */
export const MARKET_ROUNDING_ACCOUNT = '@market:rounding';

/** The account holding the reserves of the swap pool of `pair` ("PTM/USDC"). */
export function swapPoolAccount(pair: string): string {
  return `@swap:${pair}`;
}

/** True for a module account name (not a public key). */
export function isModuleAccount(name: string): boolean {
  return name.startsWith('@');
}

/**
 * The signed operations that execute at most once per signed request: the validator stores
 * each one's result with the request, so resending the identical signed request (same headers,
 * same body) to the same validator returns that result and moves nothing again. The SDK resends
 * these (and only these) with the same signature after a network failure.
 */
export const EXACTLY_ONCE_OPERATIONS: ReadonlySet<string> = new Set([
  'transfer',
  'stake',
  'unstake',
  'claimYield',
  'swapExecute',
  'vaultDeposit',
  'vaultWithdraw',
  'placeOrder',
  'cancelOrder',
]);
