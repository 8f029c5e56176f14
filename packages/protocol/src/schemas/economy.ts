import Type, { type Static } from 'typebox';
import {
  AccountSchema,
  AmountSchema,
  CursorSchema,
  FractionSchema,
  IdSchema,
  nullable,
  PageLimitSchema,
  PriceSchema,
  PublicKeyHexSchema,
  pageProperties,
  SafeUintSchema,
  SignedAmountSchema,
  TokenAmountSchema,
  TokenSymbolSchema,
  UnixSecondsSchema,
  withDescription,
} from './common.js';
import { PoolStrategySchema } from './validator.js';

/**
 * Economy schemas: staking, swaps, vaults, marketplace, ledger and pool membership. Every POST
 * acts for `pubkey` and is signed with the x-tm-* signed-request headers; the body's pubkey must
 * equal x-tm-pubkey (pubkey_mismatch otherwise).
 */

const Actor = withDescription(
  PublicKeyHexSchema,
  'The account the operation acts for; must equal the x-tm-pubkey header that signs the request.',
);

// ---------------------------------------------------------------------------------------------
// Staking
// ---------------------------------------------------------------------------------------------

export const LOCK_PERIODS_DAYS = [0, 7, 30] as const;

export const LockPeriodDaysSchema = Type.Enum(LOCK_PERIODS_DAYS, {
  type: 'integer',
  description:
    "Lock period in days: 0 (flexible: no lock, lowest yield), 7 or 30 (the web terminal's choices). Unstaking before lock_expiry costs a penalty.",
});
export type LockPeriodDays = Static<typeof LockPeriodDaysSchema>;

export const StakeRequestSchema = Type.Object(
  {
    amount: withDescription(AmountSchema, 'Amount to stake, in PTM; debited from the PTM balance.'),
    lock_period_days: LockPeriodDaysSchema,
    pubkey: Actor,
  },
  { title: 'StakeRequest', description: 'POST /stake body (signed).' },
);
export type StakeRequest = Static<typeof StakeRequestSchema>;

export const StakeCreatedSchema = Type.Object(
  {
    stake_id: withDescription(IdSchema, 'The new stake position.'),
    amount: withDescription(AmountSchema, 'The amount staked.'),
    token: withDescription(TokenSymbolSchema, 'The staked token (PTM).'),
    lock_period_days: LockPeriodDaysSchema,
    lock_expiry: withDescription(
      UnixSecondsSchema,
      'When the lock ends (Unix seconds); equal to created_at for a flexible (0-day) stake.',
    ),
    yield_rate: withDescription(
      FractionSchema,
      'Annual yield rate as a fraction (APR, 0.12 = 12 %), fixed for the position.',
    ),
    created_at: withDescription(UnixSecondsSchema, 'When the position was created.'),
  },
  { title: 'StakeCreated', description: 'POST /stake response.' },
);
export type StakeCreated = Static<typeof StakeCreatedSchema>;

export const UnstakeRequestSchema = Type.Object(
  {
    stake_id: withDescription(IdSchema, 'The stake position to close.'),
    pubkey: Actor,
  },
  { title: 'UnstakeRequest', description: 'POST /unstake body (signed).' },
);
export type UnstakeRequest = Static<typeof UnstakeRequestSchema>;

export const UnstakeResultSchema = Type.Object(
  {
    stake_id: withDescription(IdSchema, 'The closed position.'),
    returned: withDescription(AmountSchema, 'Principal credited back to the balance: amount minus penalty.'),
    penalty: withDescription(
      AmountSchema,
      'Penalty kept for unstaking before lock_expiry; "0" at or after it.',
    ),
    yield_paid: withDescription(AmountSchema, 'Unclaimed yield paid out with the principal.'),
    token: withDescription(TokenSymbolSchema, 'The token of every amount (PTM).'),
    unstaked_at: withDescription(UnixSecondsSchema, 'When the position was closed.'),
  },
  {
    title: 'UnstakeResult',
    description: 'POST /unstake response. The position no longer exists afterwards.',
  },
);
export type UnstakeResult = Static<typeof UnstakeResultSchema>;

export const ClaimRequestSchema = Type.Object(
  {
    stake_id: withDescription(IdSchema, 'The stake position whose accumulated yield to harvest.'),
    pubkey: Actor,
  },
  { title: 'ClaimRequest', description: 'POST /claim body (signed).' },
);
export type ClaimRequest = Static<typeof ClaimRequestSchema>;

export const ClaimResultSchema = Type.Object(
  {
    stake_id: withDescription(IdSchema, 'The position.'),
    claimed: withDescription(AmountSchema, 'Yield credited to the balance now ("0" if nothing had accrued).'),
    token: withDescription(TokenSymbolSchema, 'The token of claimed (PTM).'),
    claimed_at: withDescription(
      UnixSecondsSchema,
      "When the yield was harvested. Accrual does not restart here: the yield earned is always recomputed from the position's created_at, and a later claim pays it less what was already paid (docs/economy.md, Staking).",
    ),
  },
  { title: 'ClaimResult', description: 'POST /claim response. The position stays open.' },
);
export type ClaimResult = Static<typeof ClaimResultSchema>;

export const StakePositionSchema = Type.Object(
  {
    stake_id: withDescription(IdSchema, 'The position.'),
    amount: withDescription(AmountSchema, 'The principal staked.'),
    token: withDescription(TokenSymbolSchema, 'The staked token (PTM).'),
    yield_earned: withDescription(
      AmountSchema,
      'What a claim would pay now: the yield accrued since created_at less what was already paid, capped by the reserve.',
    ),
    lock_expiry: withDescription(
      UnixSecondsSchema,
      'When the lock ends; unstaking before it costs a penalty.',
    ),
    lock_period_days: LockPeriodDaysSchema,
    yield_rate: withDescription(FractionSchema, 'Annual yield rate as a fraction (APR).'),
    created_at: withDescription(UnixSecondsSchema, 'When the position was created.'),
  },
  { title: 'StakePosition', description: 'An open stake position.' },
);
export type StakePosition = Static<typeof StakePositionSchema>;

export const StakeListResponseSchema = Type.Object(
  {
    stakes: Type.Array(StakePositionSchema, { maxItems: 1000, description: 'Open positions, oldest first.' }),
  },
  { title: 'StakeListResponse', description: 'GET /stake/:pubkey.' },
);
export type StakeListResponse = Static<typeof StakeListResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Swaps
// ---------------------------------------------------------------------------------------------

export const SwapQuoteRequestSchema = Type.Object(
  {
    from_token: withDescription(TokenSymbolSchema, 'The token given.'),
    to_token: withDescription(TokenSymbolSchema, 'The token received; must differ from from_token.'),
    amount: withDescription(AmountSchema, 'Amount of from_token to swap.'),
  },
  { title: 'SwapQuoteRequest', description: 'POST /swap/quote body.' },
);
export type SwapQuoteRequest = Static<typeof SwapQuoteRequestSchema>;

export const SwapQuoteSchema = Type.Object(
  {
    from_token: withDescription(TokenSymbolSchema, 'The token given.'),
    to_token: withDescription(TokenSymbolSchema, 'The token received.'),
    from_amount: withDescription(AmountSchema, 'Amount of from_token given (the request amount).'),
    to_amount: withDescription(AmountSchema, 'Amount of to_token the swap would yield now, after the fee.'),
    price: Type.Number({
      minimum: 0,
      description:
        "Effective price: to_token received per 1 from_token. A number for display (the seed's type); exact value in price_decimal.",
    }),
    price_decimal: withDescription(PriceSchema, 'The same effective price as an exact decimal string.'),
    slippage: withDescription(
      FractionSchema,
      "Price impact as a fraction: how much worse the effective price is than the pool's spot price (0.003 = 0.3 %).",
    ),
    fee: withDescription(AmountSchema, 'Fee taken, in fee_token.'),
    fee_token: withDescription(TokenSymbolSchema, 'The token of fee (from_token).'),
    expires_at: withDescription(
      UnixSecondsSchema,
      'Indicative until this time; execute with min_received to bound the result.',
    ),
  },
  { title: 'SwapQuote', description: 'POST /swap/quote response. A quote reserves nothing.' },
);
export type SwapQuote = Static<typeof SwapQuoteSchema>;

export const SwapExecuteRequestSchema = Type.Object(
  {
    from_token: withDescription(TokenSymbolSchema, 'The token given.'),
    to_token: withDescription(TokenSymbolSchema, 'The token received.'),
    amount: withDescription(AmountSchema, 'Amount of from_token to swap.'),
    min_received: withDescription(
      AmountSchema,
      'The smallest acceptable amount of to_token; otherwise the swap fails with slippage_exceeded and nothing moves.',
    ),
    pubkey: Actor,
  },
  { title: 'SwapExecuteRequest', description: 'POST /swap/execute body (signed).' },
);
export type SwapExecuteRequest = Static<typeof SwapExecuteRequestSchema>;

export const SwapExecuteResultSchema = Type.Object(
  {
    swap_id: withDescription(IdSchema, 'The executed swap (ledger entries reference it).'),
    from_token: withDescription(TokenSymbolSchema, 'The token given.'),
    to_token: withDescription(TokenSymbolSchema, 'The token received.'),
    from_amount: withDescription(AmountSchema, 'Amount of from_token debited.'),
    to_amount: withDescription(AmountSchema, 'Amount of to_token credited (at least min_received).'),
    fee: withDescription(AmountSchema, 'Fee taken, in fee_token.'),
    fee_token: withDescription(TokenSymbolSchema, 'The token of fee (from_token).'),
    executed_at: withDescription(UnixSecondsSchema, 'When the swap was executed.'),
  },
  { title: 'SwapExecuteResult', description: 'POST /swap/execute response.' },
);
export type SwapExecuteResult = Static<typeof SwapExecuteResultSchema>;

export const SwapPoolSchema = Type.Object(
  {
    pair: Type.String({
      pattern: '^[A-Z0-9]{2,10}/[A-Z0-9]{2,10}$',
      maxLength: 21,
      description: 'The two token symbols joined by a slash, base first, e.g. "PTM/USDC".',
    }),
    liquidity: withDescription(
      AmountSchema,
      'Total value of both reserves, in the quote token (the second symbol of pair).',
    ),
    volume_24h: withDescription(AmountSchema, 'Value swapped in the last 24 hours, in the quote token.'),
    reserves: Type.Array(TokenAmountSchema, {
      minItems: 2,
      maxItems: 2,
      description: 'The pool reserves, base token first.',
    }),
    fee_rate: withDescription(
      FractionSchema,
      'Fee taken from each swap as a fraction of the input (0.003 = 0.3 %).',
    ),
  },
  { title: 'SwapPool', description: 'A liquidity pool.' },
);
export type SwapPool = Static<typeof SwapPoolSchema>;

export const SwapPoolsResponseSchema = Type.Object(
  { pools: Type.Array(SwapPoolSchema, { maxItems: 100, description: 'Every liquidity pool.' }) },
  { title: 'SwapPoolsResponse', description: 'GET /swap/pools.' },
);
export type SwapPoolsResponse = Static<typeof SwapPoolsResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Vaults
// ---------------------------------------------------------------------------------------------

export const VaultDepositRequestSchema = Type.Object(
  {
    token: withDescription(TokenSymbolSchema, 'The token to lock.'),
    amount: withDescription(AmountSchema, 'Amount to lock; debited from the balance.'),
    unlock_at: withDescription(
      UnixSecondsSchema,
      'When the vault may be withdrawn (Unix seconds, in the future).',
    ),
    pubkey: Actor,
  },
  { title: 'VaultDepositRequest', description: 'POST /vault/deposit body (signed).' },
);
export type VaultDepositRequest = Static<typeof VaultDepositRequestSchema>;

export const VaultSchema = Type.Object(
  {
    vault_id: withDescription(IdSchema, 'The vault.'),
    pubkey: withDescription(PublicKeyHexSchema, 'The owner.'),
    token: withDescription(TokenSymbolSchema, 'The locked token.'),
    amount: withDescription(AmountSchema, 'The locked amount.'),
    unlock_at: withDescription(
      UnixSecondsSchema,
      'From this time on the vault may be withdrawn (vault_locked before).',
    ),
    withdrawn: Type.Boolean({ description: 'false while locked or unclaimed; true once withdrawn (final).' }),
    created_at: withDescription(UnixSecondsSchema, 'When the deposit was made.'),
    withdrawn_at: nullable(UnixSecondsSchema, 'When the vault was withdrawn; null while withdrawn is false.'),
  },
  {
    title: 'Vault',
    description:
      'A time-locked vault. POST /vault/deposit returns it with withdrawn false; POST /vault/withdraw with withdrawn true.',
  },
);
export type Vault = Static<typeof VaultSchema>;

export const VaultWithdrawRequestSchema = Type.Object(
  {
    vault_id: withDescription(IdSchema, 'The vault to withdraw; its amount is credited back.'),
    pubkey: Actor,
  },
  {
    title: 'VaultWithdrawRequest',
    description: 'POST /vault/withdraw body (signed). Allowed at or after unlock_at.',
  },
);
export type VaultWithdrawRequest = Static<typeof VaultWithdrawRequestSchema>;

export const VaultListResponseSchema = Type.Object(
  {
    vaults: Type.Array(VaultSchema, { maxItems: 1000, description: 'Every vault of the key, oldest first.' }),
  },
  { title: 'VaultListResponse', description: 'GET /vault/:pubkey.' },
);
export type VaultListResponse = Static<typeof VaultListResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Marketplace
// ---------------------------------------------------------------------------------------------

export const OrderTypeSchema = Type.Enum(['buy', 'sell'], {
  type: 'string',
  description: 'buy: acquire token paying quote_token; sell: give token for quote_token.',
});
export type OrderType = Static<typeof OrderTypeSchema>;

export const OrderStatusSchema = Type.Enum(['open', 'filled', 'partially_filled', 'cancelled'], {
  type: 'string',
  description:
    'open: nothing filled yet, resting in the book; partially_filled: part filled, the rest resting; filled: completely filled; cancelled: cancelled by its owner, or closed by the market because what was left is worth less than the minimum order value at its limit (the unfilled escrow was returned in both cases).',
});
export type OrderStatus = Static<typeof OrderStatusSchema>;

const QuoteToken = withDescription(
  TokenSymbolSchema,
  'The token prices are paid in (USDC unless the validator configures another).',
);

export const MarketOrderSchema = Type.Object(
  {
    id: withDescription(IdSchema, 'The order.'),
    type: OrderTypeSchema,
    token: withDescription(TokenSymbolSchema, 'The token bought or sold.'),
    quote_token: QuoteToken,
    amount: withDescription(AmountSchema, 'The order size, in token.'),
    price: withDescription(PriceSchema, 'Limit price: quote_token per 1 token.'),
    pubkey: withDescription(PublicKeyHexSchema, 'The account that placed it.'),
    created_at: withDescription(UnixSecondsSchema, 'When it was placed.'),
    filled: withDescription(AmountSchema, 'How much of amount is already filled, in token.'),
    remaining: withDescription(AmountSchema, 'amount - filled: what still rests in the book, in token.'),
    status: OrderStatusSchema,
  },
  { title: 'MarketOrder', description: 'An open (or partially filled) order of the book.' },
);
export type MarketOrder = Static<typeof MarketOrderSchema>;

export const OrdersQuerySchema = Type.Object(
  {
    token: Type.Optional(withDescription(TokenSymbolSchema, 'Only orders for this token.')),
    type: Type.Optional(withDescription(OrderTypeSchema, 'Only buy or only sell orders.')),
    pubkey: Type.Optional(withDescription(PublicKeyHexSchema, 'Only orders placed by this key.')),
    limit: Type.Optional(PageLimitSchema),
    cursor: Type.Optional(CursorSchema),
  },
  { title: 'OrdersQuery', description: 'GET /marketplace/orders query.' },
);
export type OrdersQuery = Static<typeof OrdersQuerySchema>;

export const OrdersResponseSchema = Type.Object(
  pageProperties('orders', MarketOrderSchema, 'Open orders, oldest first.'),
  { title: 'OrdersResponse', description: 'GET /marketplace/orders.' },
);
export type OrdersResponse = Static<typeof OrdersResponseSchema>;

export const PlaceOrderRequestSchema = Type.Object(
  {
    type: OrderTypeSchema,
    token: withDescription(TokenSymbolSchema, 'The token to buy or sell.'),
    amount: withDescription(AmountSchema, 'Order size, in token.'),
    price: withDescription(PriceSchema, 'Limit price: quote_token per 1 token.'),
    pubkey: Actor,
    quote_token: Type.Optional(QuoteToken),
  },
  {
    title: 'PlaceOrderRequest',
    description:
      'POST /marketplace/order body (signed). The funds an order needs are reserved while it rests.',
  },
);
export type PlaceOrderRequest = Static<typeof PlaceOrderRequestSchema>;

export const OrderFillSchema = Type.Object(
  {
    counter_order_id: withDescription(IdSchema, 'The resting order it matched.'),
    amount: withDescription(AmountSchema, 'Amount of token exchanged.'),
    price: withDescription(PriceSchema, "Execution price (the resting order's price)."),
    executed_at: withDescription(UnixSecondsSchema, 'When the fill happened.'),
  },
  { title: 'OrderFill', description: 'One match of the new order against a resting one; balances moved.' },
);
export type OrderFill = Static<typeof OrderFillSchema>;

export const PlaceOrderResultSchema = Type.Object(
  {
    order_id: withDescription(IdSchema, 'The new order.'),
    status: OrderStatusSchema,
    filled_amount: withDescription(AmountSchema, 'Total of fills[].amount, in token.'),
    fills: Type.Array(OrderFillSchema, {
      maxItems: 1000,
      description: 'Matches made on placement, in order.',
    }),
  },
  { title: 'PlaceOrderResult', description: 'POST /marketplace/order response.' },
);
export type PlaceOrderResult = Static<typeof PlaceOrderResultSchema>;

// ---------------------------------------------------------------------------------------------
// Ledger
// ---------------------------------------------------------------------------------------------

export const LEDGER_ENTRY_TYPES = [
  'genesis',
  'mining_reward',
  'transfer',
  'stake',
  'unstake',
  'yield',
  'penalty',
  'swap',
  'vault_deposit',
  'vault_withdraw',
  'order',
  'pool_join',
  'pool_leave',
  'fee',
  'pool_payout',
] as const;

export const LedgerEntryTypeSchema = Type.Enum(LEDGER_ENTRY_TYPES, {
  type: 'string',
  description:
    'What moved the balance: genesis (the initial supply written once at the first start: pool seeds, the yield reserve, configured allocations), mining_reward (accepted proof or block), transfer, stake / unstake (principal), yield (claimed or paid yield), penalty (early unstake), swap (one leg of a swap), vault_deposit / vault_withdraw, order (a marketplace fill), pool_join / pool_leave (pool stake), fee, pool_payout (a PPLNS share of a pool block reward).',
});
export type LedgerEntryType = Static<typeof LedgerEntryTypeSchema>;

export const LedgerEntrySchema = Type.Object(
  {
    id: withDescription(IdSchema, 'The entry; entries are immutable.'),
    type: LedgerEntryTypeSchema,
    amount: withDescription(
      SignedAmountSchema,
      'Change of the balance of pubkey in token: positive credit, negative debit.',
    ),
    token: withDescription(TokenSymbolSchema, 'The token.'),
    timestamp: withDescription(UnixSecondsSchema, 'When the entry was recorded.'),
    pubkey: withDescription(
      AccountSchema,
      'The account whose balance changed: a public key, or a module account (`@pool:rewards`, `@stake`...).',
    ),
    ref: nullable(
      Type.String({ maxLength: 128 }),
      'The id of what caused it (challenge_id, block hash, stake_id, swap_id, vault_id, order_id); null if none.',
    ),
  },
  { title: 'LedgerEntry', description: 'One balance change.' },
);
export type LedgerEntry = Static<typeof LedgerEntrySchema>;

export const LedgerQuerySchema = Type.Object(
  {
    pubkey: Type.Optional(
      withDescription(
        AccountSchema,
        'Only entries of this account: a public key or a module account (`@pool:fees`).',
      ),
    ),
    token: Type.Optional(withDescription(TokenSymbolSchema, 'Only entries in this token.')),
    type: Type.Optional(withDescription(LedgerEntryTypeSchema, 'Only entries of this type.')),
    limit: Type.Optional(PageLimitSchema),
    cursor: Type.Optional(CursorSchema),
  },
  { title: 'LedgerQuery', description: 'GET /ledger/entries query.' },
);
export type LedgerQuery = Static<typeof LedgerQuerySchema>;

export const LedgerPageSchema = Type.Object(
  pageProperties('entries', LedgerEntrySchema, 'Entries, newest first.'),
  {
    title: 'LedgerPage',
    description: 'GET /ledger/entries.',
  },
);
export type LedgerPage = Static<typeof LedgerPageSchema>;

// ---------------------------------------------------------------------------------------------
// Pool membership
// ---------------------------------------------------------------------------------------------

export const PoolStatusSchema = Type.Object(
  {
    type: PoolStrategySchema,
    miners_online: withDescription(
      SafeUintSchema,
      'Pool members that submitted work in the current or previous round.',
    ),
    total_stake: withDescription(AmountSchema, 'Total stake of the pool members, in PTM.'),
    round_duration: withDescription(SafeUintSchema, 'Length of a reward round, in seconds.'),
    fee: withDescription(FractionSchema, 'Pool fee taken from each round reward, as a fraction.'),
    round: withDescription(SafeUintSchema, 'Number of the current round (0 is the first).'),
    round_ends_at: withDescription(
      UnixSecondsSchema,
      'When the current round ends and its rewards are paid.',
    ),
    minimum_stake: withDescription(
      AmountSchema,
      'The smallest stake_amount POST /pool/join accepts, in PTM.',
    ),
  },
  { title: 'PoolStatus', description: 'GET /pool/status.' },
);
export type PoolStatus = Static<typeof PoolStatusSchema>;

export const PoolJoinRequestSchema = Type.Object(
  {
    pubkey: Actor,
    stake_amount: withDescription(
      AmountSchema,
      'PTM to stake in the pool (at least minimum_stake: stake_below_minimum); debited from the balance.',
    ),
    hashrate: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1e15,
        description:
          "The member's expected hash rate, hexchain hashes per second: its first share difficulty is one share per share_interval_ms at this rate (then vardiff, protocol 4.14). Without it: the nominal rate of the key's registered device type (native 2 000 000, esp32 150 000, esp8266 40 000), or the share difficulty the key had when it last left.",
      }),
    ),
  },
  { title: 'PoolJoinRequest', description: 'POST /pool/join body (signed).' },
);
export type PoolJoinRequest = Static<typeof PoolJoinRequestSchema>;

export const PoolJoinResultSchema = Type.Object(
  {
    joined: Type.Literal(true, { description: 'Always true; failures are error responses.' }),
    pubkey: withDescription(PublicKeyHexSchema, 'The new member.'),
    stake_amount: withDescription(AmountSchema, 'The stake held by the pool, in PTM.'),
    joined_at: withDescription(UnixSecondsSchema, 'When the key joined.'),
    share_difficulty: withDescription(
      SafeUintSchema,
      "The member's starting share difficulty at the current block difficulty (vardiff moves it from there; protocol 4.14).",
    ),
  },
  { title: 'PoolJoinResult', description: 'POST /pool/join response.' },
);
export type PoolJoinResult = Static<typeof PoolJoinResultSchema>;

export const PoolLeaveRequestSchema = Type.Object(
  { pubkey: Actor },
  { title: 'PoolLeaveRequest', description: 'POST /pool/leave body (signed).' },
);
export type PoolLeaveRequest = Static<typeof PoolLeaveRequestSchema>;

export const PoolLeaveResultSchema = Type.Object(
  {
    left: Type.Literal(true, { description: 'Always true; failures are error responses (pool_not_member).' }),
    pubkey: withDescription(PublicKeyHexSchema, 'The former member.'),
    returned_stake: withDescription(AmountSchema, 'Stake credited back to the balance, in PTM.'),
  },
  { title: 'PoolLeaveResult', description: 'POST /pool/leave response.' },
);
export type PoolLeaveResult = Static<typeof PoolLeaveResultSchema>;

// ---------------------------------------------------------------------------------------------
// Order cancellation
// ---------------------------------------------------------------------------------------------

export const CancelOrderRequestSchema = Type.Object(
  {
    order_id: withDescription(IdSchema, 'The resting order to cancel; only its owner may.'),
    pubkey: Actor,
  },
  { title: 'CancelOrderRequest', description: 'POST /marketplace/cancel body (signed).' },
);
export type CancelOrderRequest = Static<typeof CancelOrderRequestSchema>;

export const CancelOrderResultSchema = Type.Object(
  {
    order_id: withDescription(IdSchema, 'The cancelled order.'),
    status: Type.Literal('cancelled', { description: 'Always cancelled; failures are error responses.' }),
    filled: withDescription(AmountSchema, 'What had been filled before the cancellation, in token.'),
    returned: withDescription(
      TokenAmountSchema,
      'The escrow credited back: the unfilled token of a sell, the unspent quote token of a buy.',
    ),
    cancelled_at: withDescription(UnixSecondsSchema, 'When the order was cancelled.'),
  },
  { title: 'CancelOrderResult', description: 'POST /marketplace/cancel response.' },
);
export type CancelOrderResult = Static<typeof CancelOrderResultSchema>;

// ---------------------------------------------------------------------------------------------
// Transfers and balances
// ---------------------------------------------------------------------------------------------

export const TransferMemoSchema = Type.String({
  pattern: '^[\\x20-\\x7E]{0,64}$',
  maxLength: 64,
  description: 'A note for the receiver: at most 64 printable ASCII characters.',
});

export const TransferRequestSchema = Type.Object(
  {
    from: withDescription(
      PublicKeyHexSchema,
      'The paying key; must equal the x-tm-pubkey header that signs the request (pubkey_mismatch otherwise).',
    ),
    to: withDescription(PublicKeyHexSchema, 'The receiving key (not from).'),
    token: withDescription(TokenSymbolSchema, 'The token to send: PTM, SOL or USDC.'),
    amount: withDescription(AmountSchema, 'Amount to send, more than 0; debited from the balance of from.'),
    memo: Type.Optional(TransferMemoSchema),
  },
  { title: 'TransferRequest', description: 'POST /transfer body (signed by from).' },
);
export type TransferRequest = Static<typeof TransferRequestSchema>;

export const TransferSchema = Type.Object(
  {
    transfer_id: withDescription(
      IdSchema,
      'The transfer; the ref of its two ledger entries (type transfer, -amount on from, +amount on to).',
    ),
    from: withDescription(PublicKeyHexSchema, 'The paying key.'),
    to: withDescription(PublicKeyHexSchema, 'The receiving key.'),
    token: withDescription(TokenSymbolSchema, 'The token sent.'),
    amount: withDescription(AmountSchema, 'The amount sent.'),
    memo: nullable(TransferMemoSchema, 'The memo, or null when none was sent.'),
    timestamp: withDescription(UnixSecondsSchema, 'When the transfer was applied.'),
  },
  {
    title: 'Transfer',
    description:
      'A completed transfer (POST /transfer response, GET /transfers/:transfer_id). A retry of the identical signed request returns the same transfer and moves nothing again.',
  },
);
export type Transfer = Static<typeof TransferSchema>;

export const TransferParamsSchema = Type.Object(
  { transfer_id: withDescription(IdSchema, 'The transfer id returned by POST /transfer.') },
  { title: 'TransferParams', description: 'Path parameters of GET /transfers/:transfer_id.' },
);
export type TransferParams = Static<typeof TransferParamsSchema>;

export const TokenBalanceSchema = Type.Object(
  {
    token: withDescription(TokenSymbolSchema, 'The token.'),
    available: withDescription(AmountSchema, 'Spendable now (the ledger balance of the key).'),
    staked: withDescription(AmountSchema, 'Principal in open stake positions.'),
    in_vaults: withDescription(AmountSchema, 'Locked in vaults not yet withdrawn.'),
    in_orders: withDescription(AmountSchema, 'Escrowed by resting marketplace orders.'),
    total: withDescription(AmountSchema, 'available + staked + in_vaults + in_orders.'),
  },
  { title: 'TokenBalance', description: 'What a key holds of one token, by where it is.' },
);
export type TokenBalance = Static<typeof TokenBalanceSchema>;

export const BalancesResponseSchema = Type.Object(
  {
    pubkey: withDescription(PublicKeyHexSchema, 'The key.'),
    balances: Type.Array(TokenBalanceSchema, {
      maxItems: 16,
      description: 'One row per listed token (PTM, SOL, USDC), zeros included.',
    }),
  },
  { title: 'BalancesResponse', description: 'GET /balances/:pubkey.' },
);
export type BalancesResponse = Static<typeof BalancesResponseSchema>;
