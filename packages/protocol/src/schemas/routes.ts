import Type, { type Static, type TSchema } from 'typebox';
import {
  AdminConfigRequestSchema,
  AdminConfigResultSchema,
  AdminConfigSchema,
  AdminMetricsSchema,
} from './admin.js';
import { PubkeyParamsSchema } from './common.js';
import {
  ClaimRequestSchema,
  ClaimResultSchema,
  LedgerPageSchema,
  LedgerQuerySchema,
  OrdersQuerySchema,
  OrdersResponseSchema,
  PlaceOrderRequestSchema,
  PlaceOrderResultSchema,
  PoolJoinRequestSchema,
  PoolJoinResultSchema,
  PoolLeaveRequestSchema,
  PoolLeaveResultSchema,
  PoolStatusSchema,
  StakeCreatedSchema,
  StakeListResponseSchema,
  StakeRequestSchema,
  SwapExecuteRequestSchema,
  SwapExecuteResultSchema,
  SwapPoolsResponseSchema,
  SwapQuoteRequestSchema,
  SwapQuoteSchema,
  UnstakeRequestSchema,
  UnstakeResultSchema,
  VaultDepositRequestSchema,
  VaultListResponseSchema,
  VaultSchema,
  VaultWithdrawRequestSchema,
} from './economy.js';
import { ErrorResponseSchema } from './error.js';
import {
  CoordParamsSchema,
  HexBlockSchema,
  HexChallengeRequestSchema,
  HexChallengeSchema,
  HexStatusSchema,
  HexSubmitRequestSchema,
  HexSubmitResultSchema,
  LatticePageSchema,
  LatticeQuerySchema,
} from './hexchain.js';
import { GameIdParamsSchema, GameStatusSchema, GamesResponseSchema } from './hub.js';
import { DashboardSummarySchema, LiveStateSchema } from './status-proxy.js';
import {
  PurchaseRequestSchema,
  PurchaseResultSchema,
  RedirectResponseSchema,
  StakingOptionsSchema,
  VaultOptionsSchema,
  XAuthAuthorizeQuerySchema,
  XAuthCallbackQuerySchema,
  XAuthClaimRequestSchema,
  XAuthClaimResultSchema,
} from './terminal.js';
import {
  ChallengeRequestSchema,
  ChallengeSchema,
  DeviceRegisterRequestSchema,
  DeviceRegisterResultSchema,
  DevicesQuerySchema,
  DevicesResponseSchema,
  HealthSchema,
  MinerAccountSchema,
  NodeStatusSchema,
  PeersResponseSchema,
  PoolInfoSchema,
  ServiceHealthSchema,
  SubmitRequestSchema,
  SubmitResultSchema,
} from './validator.js';

/**
 * Every endpoint of every service, keyed by operationId. The validator (and the companion
 * services) register their Fastify routes from this table, @fastify/swagger builds the OpenAPI
 * document from it, and the client derives its method types from it, so the three never drift.
 *
 * `schema` is a Fastify route schema: pass it as is (`{ schema: route.schema }`), together with
 * operationId, summary, tags and deprecated for OpenAPI.
 */

export type Service = 'validator' | 'status' | 'terminal' | 'hub';
export type HttpMethod = 'GET' | 'POST';
/** none: public; signed: x-tm-* signed-request headers by the acting key; admin: bearer token. */
export type RouteAuth = 'none' | 'signed' | 'admin';
/** Protocol generation of the route: v4.0 root paths, v4.1 hexchain paths, or both. */
export type RouteVersion = '4.0' | '4.1' | 'any';

export interface RouteResponses {
  readonly 200?: TSchema;
  readonly 302?: TSchema;
  readonly '4xx': TSchema;
  readonly '5xx': TSchema;
}

export interface RouteSchemas {
  readonly body?: TSchema;
  readonly querystring?: TSchema;
  readonly params?: TSchema;
  readonly response: RouteResponses;
}

export interface RouteDefinition {
  readonly service: Service;
  readonly method: HttpMethod;
  /** Fastify-style path, e.g. '/miners/:pubkey'. */
  readonly url: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly auth: RouteAuth;
  readonly version: RouteVersion;
  /** Served but superseded (the seed's versioning section). */
  readonly deprecated?: boolean;
  /** Content types of the 200 response when it is not JSON. */
  readonly produces?: readonly string[];
  readonly schema: RouteSchemas;
}

/** Identity function that checks every entry and that each key equals its operationId. */
function defineRoutes<
  const T extends { readonly [K in keyof T]: RouteDefinition & { readonly operationId: K } },
>(routes: T): T {
  return routes;
}

/** Every 4xx and 5xx response has the one ErrorResponse shape. */
const ERRORS = { '4xx': ErrorResponseSchema, '5xx': ErrorResponseSchema } as const;

const TextSchema = Type.String({ maxLength: 1_000_000, description: 'A text document (not JSON).' });

export const ROUTES = defineRoutes({
  // -------------------------------------------------------------------------------------------
  // Validator: node
  // -------------------------------------------------------------------------------------------
  getHealth: {
    service: 'validator',
    method: 'GET',
    url: '/health',
    operationId: 'getHealth',
    summary: 'Liveness, version and the protocol versions served',
    tags: ['node'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: HealthSchema, ...ERRORS } },
  },
  getStatus: {
    service: 'validator',
    method: 'GET',
    url: '/status',
    operationId: 'getStatus',
    summary: 'Node configuration and counters (v4.0; superseded by /health and /api/hexchain/status)',
    tags: ['node', 'v4.0'],
    auth: 'none',
    version: '4.0',
    deprecated: true,
    schema: { response: { 200: NodeStatusSchema, ...ERRORS } },
  },
  getPeers: {
    service: 'validator',
    method: 'GET',
    url: '/network/peers',
    operationId: 'getPeers',
    summary: 'Peer validators (empty in local_only mode)',
    tags: ['node'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: PeersResponseSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: v4.0 mining
  // -------------------------------------------------------------------------------------------
  requestChallenge: {
    service: 'validator',
    method: 'POST',
    url: '/challenge',
    operationId: 'requestChallenge',
    summary: 'Issue a v4.0 tensor challenge for a slot (deprecated: use /api/hexchain/challenge)',
    tags: ['v4.0'],
    auth: 'none',
    version: '4.0',
    deprecated: true,
    schema: { body: ChallengeRequestSchema, response: { 200: ChallengeSchema, ...ERRORS } },
  },
  submitProof: {
    service: 'validator',
    method: 'POST',
    url: '/submit',
    operationId: 'submitProof',
    summary: 'Submit a v4.0 proof; the validator recomputes the work (deprecated: use /api/hexchain/submit)',
    tags: ['v4.0'],
    auth: 'none',
    version: '4.0',
    deprecated: true,
    schema: { body: SubmitRequestSchema, response: { 200: SubmitResultSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: miners, devices, pool info
  // -------------------------------------------------------------------------------------------
  getMiner: {
    service: 'validator',
    method: 'GET',
    url: '/miners/:pubkey',
    operationId: 'getMiner',
    summary: 'A miner account: registration, balances, counters',
    tags: ['miners'],
    auth: 'none',
    version: 'any',
    schema: { params: PubkeyParamsSchema, response: { 200: MinerAccountSchema, ...ERRORS } },
  },
  registerDevice: {
    service: 'validator',
    method: 'POST',
    url: '/devices/register',
    operationId: 'registerDevice',
    summary: 'Register (or update) a miner key with its device type and v4.1 callback port',
    tags: ['devices', 'miners'],
    auth: 'signed',
    version: 'any',
    schema: { body: DeviceRegisterRequestSchema, response: { 200: DeviceRegisterResultSchema, ...ERRORS } },
  },
  listDevices: {
    service: 'validator',
    method: 'GET',
    url: '/devices',
    operationId: 'listDevices',
    summary: 'Registered devices (the fleet), with counts per type',
    tags: ['devices'],
    auth: 'none',
    version: 'any',
    schema: { querystring: DevicesQuerySchema, response: { 200: DevicesResponseSchema, ...ERRORS } },
  },
  getPool: {
    service: 'validator',
    method: 'GET',
    url: '/pool',
    operationId: 'getPool',
    summary: 'Pool info: strategy, members, stake, minimum stake, fee, round length',
    tags: ['pool'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: PoolInfoSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: staking
  // -------------------------------------------------------------------------------------------
  stake: {
    service: 'validator',
    method: 'POST',
    url: '/stake',
    operationId: 'stake',
    summary: 'Stake PTM for a lock period (0, 7 or 30 days)',
    tags: ['stake'],
    auth: 'signed',
    version: 'any',
    schema: { body: StakeRequestSchema, response: { 200: StakeCreatedSchema, ...ERRORS } },
  },
  unstake: {
    service: 'validator',
    method: 'POST',
    url: '/unstake',
    operationId: 'unstake',
    summary: 'Close a stake position (a penalty applies before lock_expiry)',
    tags: ['stake'],
    auth: 'signed',
    version: 'any',
    schema: { body: UnstakeRequestSchema, response: { 200: UnstakeResultSchema, ...ERRORS } },
  },
  claimYield: {
    service: 'validator',
    method: 'POST',
    url: '/claim',
    operationId: 'claimYield',
    summary: 'Harvest the accumulated yield of a stake position',
    tags: ['stake'],
    auth: 'signed',
    version: 'any',
    schema: { body: ClaimRequestSchema, response: { 200: ClaimResultSchema, ...ERRORS } },
  },
  getStakes: {
    service: 'validator',
    method: 'GET',
    url: '/stake/:pubkey',
    operationId: 'getStakes',
    summary: 'Open stake positions of a key',
    tags: ['stake'],
    auth: 'none',
    version: 'any',
    schema: { params: PubkeyParamsSchema, response: { 200: StakeListResponseSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: swaps
  // -------------------------------------------------------------------------------------------
  swapQuote: {
    service: 'validator',
    method: 'POST',
    url: '/swap/quote',
    operationId: 'swapQuote',
    summary: 'Quote a swap (reserves nothing)',
    tags: ['swap'],
    auth: 'none',
    version: 'any',
    schema: { body: SwapQuoteRequestSchema, response: { 200: SwapQuoteSchema, ...ERRORS } },
  },
  swapExecute: {
    service: 'validator',
    method: 'POST',
    url: '/swap/execute',
    operationId: 'swapExecute',
    summary: 'Execute a swap, failing if the output is below min_received',
    tags: ['swap'],
    auth: 'signed',
    version: 'any',
    schema: { body: SwapExecuteRequestSchema, response: { 200: SwapExecuteResultSchema, ...ERRORS } },
  },
  getSwapPools: {
    service: 'validator',
    method: 'GET',
    url: '/swap/pools',
    operationId: 'getSwapPools',
    summary: 'Liquidity pools',
    tags: ['swap'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: SwapPoolsResponseSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: vaults
  // -------------------------------------------------------------------------------------------
  vaultDeposit: {
    service: 'validator',
    method: 'POST',
    url: '/vault/deposit',
    operationId: 'vaultDeposit',
    summary: 'Lock tokens in a vault until unlock_at',
    tags: ['vault'],
    auth: 'signed',
    version: 'any',
    schema: { body: VaultDepositRequestSchema, response: { 200: VaultSchema, ...ERRORS } },
  },
  vaultWithdraw: {
    service: 'validator',
    method: 'POST',
    url: '/vault/withdraw',
    operationId: 'vaultWithdraw',
    summary: 'Withdraw a vault at or after unlock_at',
    tags: ['vault'],
    auth: 'signed',
    version: 'any',
    schema: { body: VaultWithdrawRequestSchema, response: { 200: VaultSchema, ...ERRORS } },
  },
  getVaults: {
    service: 'validator',
    method: 'GET',
    url: '/vault/:pubkey',
    operationId: 'getVaults',
    summary: 'Vaults of a key',
    tags: ['vault'],
    auth: 'none',
    version: 'any',
    schema: { params: PubkeyParamsSchema, response: { 200: VaultListResponseSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: marketplace and ledger
  // -------------------------------------------------------------------------------------------
  listOrders: {
    service: 'validator',
    method: 'GET',
    url: '/marketplace/orders',
    operationId: 'listOrders',
    summary: 'Open marketplace orders',
    tags: ['marketplace'],
    auth: 'none',
    version: 'any',
    schema: { querystring: OrdersQuerySchema, response: { 200: OrdersResponseSchema, ...ERRORS } },
  },
  placeOrder: {
    service: 'validator',
    method: 'POST',
    url: '/marketplace/order',
    operationId: 'placeOrder',
    summary: 'Place a buy or sell limit order; matching fills move balances',
    tags: ['marketplace'],
    auth: 'signed',
    version: 'any',
    schema: { body: PlaceOrderRequestSchema, response: { 200: PlaceOrderResultSchema, ...ERRORS } },
  },
  getLedgerEntries: {
    service: 'validator',
    method: 'GET',
    url: '/ledger/entries',
    operationId: 'getLedgerEntries',
    summary: 'Ledger entries, newest first, filtered by key, token or type',
    tags: ['ledger'],
    auth: 'none',
    version: 'any',
    schema: { querystring: LedgerQuerySchema, response: { 200: LedgerPageSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: pool membership
  // -------------------------------------------------------------------------------------------
  getPoolStatus: {
    service: 'validator',
    method: 'GET',
    url: '/pool/status',
    operationId: 'getPoolStatus',
    summary: 'Pool round state: members online, stake, round, fee',
    tags: ['pool'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: PoolStatusSchema, ...ERRORS } },
  },
  poolJoin: {
    service: 'validator',
    method: 'POST',
    url: '/pool/join',
    operationId: 'poolJoin',
    summary: 'Join the mining pool with a stake',
    tags: ['pool'],
    auth: 'signed',
    version: 'any',
    schema: { body: PoolJoinRequestSchema, response: { 200: PoolJoinResultSchema, ...ERRORS } },
  },
  poolLeave: {
    service: 'validator',
    method: 'POST',
    url: '/pool/leave',
    operationId: 'poolLeave',
    summary: 'Leave the mining pool; the stake is returned',
    tags: ['pool'],
    auth: 'signed',
    version: 'any',
    schema: { body: PoolLeaveRequestSchema, response: { 200: PoolLeaveResultSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: admin
  // -------------------------------------------------------------------------------------------
  getAdminMetrics: {
    service: 'validator',
    method: 'GET',
    url: '/admin/metrics',
    operationId: 'getAdminMetrics',
    summary: 'Counters, response time, uptime and rejections by reason',
    tags: ['admin'],
    auth: 'admin',
    version: 'any',
    schema: { response: { 200: AdminMetricsSchema, ...ERRORS } },
  },
  getAdminConfig: {
    service: 'validator',
    method: 'GET',
    url: '/admin/config',
    operationId: 'getAdminConfig',
    summary: 'The effective runtime configuration',
    tags: ['admin'],
    auth: 'admin',
    version: 'any',
    schema: { response: { 200: AdminConfigSchema, ...ERRORS } },
  },
  setAdminConfig: {
    service: 'validator',
    method: 'POST',
    url: '/admin/config',
    operationId: 'setAdminConfig',
    summary: 'Change difficulty, tensor size, pool strategy, hexchain difficulty or challenge lifetime',
    tags: ['admin'],
    auth: 'admin',
    version: 'any',
    schema: { body: AdminConfigRequestSchema, response: { 200: AdminConfigResultSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: v4.1 hexchain
  // -------------------------------------------------------------------------------------------
  hexChallenge: {
    service: 'validator',
    method: 'POST',
    url: '/api/hexchain/challenge',
    operationId: 'hexChallenge',
    summary: 'Issue a lattice challenge: a free coordinate, its parents and the target',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { body: HexChallengeRequestSchema, response: { 200: HexChallengeSchema, ...ERRORS } },
  },
  hexSubmit: {
    service: 'validator',
    method: 'POST',
    url: '/api/hexchain/submit',
    operationId: 'hexSubmit',
    summary: 'Submit a block for a challenge; the first valid block at a coordinate wins',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { body: HexSubmitRequestSchema, response: { 200: HexSubmitResultSchema, ...ERRORS } },
  },
  hexStatus: {
    service: 'validator',
    method: 'GET',
    url: '/api/hexchain/status',
    operationId: 'hexStatus',
    summary: 'Lattice state: occupancy, depths, difficulty, target',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { response: { 200: HexStatusSchema, ...ERRORS } },
  },
  hexLattice: {
    service: 'validator',
    method: 'GET',
    url: '/api/hexchain/lattice',
    operationId: 'hexLattice',
    summary: 'All blocks, one page at a time',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { querystring: LatticeQuerySchema, response: { 200: LatticePageSchema, ...ERRORS } },
  },
  hexBlock: {
    service: 'validator',
    method: 'GET',
    url: '/api/hexchain/lattice/:q/:r/:s',
    operationId: 'hexBlock',
    summary: 'The block at a coordinate (block_not_found when free)',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { params: CoordParamsSchema, response: { 200: HexBlockSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Status proxy
  // -------------------------------------------------------------------------------------------
  getStatusHealth: {
    service: 'status',
    method: 'GET',
    url: '/health',
    operationId: 'getStatusHealth',
    summary: 'Liveness of the status proxy (degraded when the validator does not answer)',
    tags: ['status'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: ServiceHealthSchema, ...ERRORS } },
  },
  getLive: {
    service: 'status',
    method: 'GET',
    url: '/api/live',
    operationId: 'getLive',
    summary: 'Older mining-state summary (kept for old dashboards)',
    tags: ['status'],
    auth: 'none',
    version: 'any',
    deprecated: true,
    schema: { response: { 200: LiveStateSchema, ...ERRORS } },
  },
  getDashboard: {
    service: 'status',
    method: 'GET',
    url: '/api/dashboard',
    operationId: 'getDashboard',
    summary: 'Validator health, lattice state and peers in one response',
    tags: ['status'],
    auth: 'none',
    version: '4.1',
    schema: { response: { 200: DashboardSummarySchema, ...ERRORS } },
  },
  proxyHexChallenge: {
    service: 'status',
    method: 'POST',
    url: '/api/hexchain/challenge',
    operationId: 'proxyHexChallenge',
    summary: "Forwarded to the validator's POST /api/hexchain/challenge",
    tags: ['status', 'hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { body: HexChallengeRequestSchema, response: { 200: HexChallengeSchema, ...ERRORS } },
  },
  proxyHexSubmit: {
    service: 'status',
    method: 'POST',
    url: '/api/hexchain/submit',
    operationId: 'proxyHexSubmit',
    summary: "Forwarded to the validator's POST /api/hexchain/submit",
    tags: ['status', 'hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { body: HexSubmitRequestSchema, response: { 200: HexSubmitResultSchema, ...ERRORS } },
  },
  proxyHexStatus: {
    service: 'status',
    method: 'GET',
    url: '/api/hexchain/status',
    operationId: 'proxyHexStatus',
    summary: "Forwarded to the validator's GET /api/hexchain/status",
    tags: ['status', 'hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { response: { 200: HexStatusSchema, ...ERRORS } },
  },
  proxyHexLattice: {
    service: 'status',
    method: 'GET',
    url: '/api/hexchain/lattice',
    operationId: 'proxyHexLattice',
    summary: "Forwarded to the validator's GET /api/hexchain/lattice",
    tags: ['status', 'hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { querystring: LatticeQuerySchema, response: { 200: LatticePageSchema, ...ERRORS } },
  },
  proxyHexBlock: {
    service: 'status',
    method: 'GET',
    url: '/api/hexchain/lattice/:q/:r/:s',
    operationId: 'proxyHexBlock',
    summary: "Forwarded to the validator's GET /api/hexchain/lattice/:q/:r/:s",
    tags: ['status', 'hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { params: CoordParamsSchema, response: { 200: HexBlockSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Terminal backend
  // -------------------------------------------------------------------------------------------
  getTerminalHealth: {
    service: 'terminal',
    method: 'GET',
    url: '/api/health',
    operationId: 'getTerminalHealth',
    summary: 'Liveness of the terminal backend',
    tags: ['terminal'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: ServiceHealthSchema, ...ERRORS } },
  },
  xAuthAuthorize: {
    service: 'terminal',
    method: 'GET',
    url: '/api/x-auth/authorize',
    operationId: 'xAuthAuthorize',
    summary: 'Start the social-account OAuth flow: 302 redirect to the provider',
    tags: ['terminal', 'oauth'],
    auth: 'none',
    version: 'any',
    schema: { querystring: XAuthAuthorizeQuerySchema, response: { 302: RedirectResponseSchema, ...ERRORS } },
  },
  xAuthCallback: {
    service: 'terminal',
    method: 'GET',
    url: '/api/x-auth/callback',
    operationId: 'xAuthCallback',
    summary: 'OAuth callback: 302 redirect back to the front end with a claim session (or an error)',
    tags: ['terminal', 'oauth'],
    auth: 'none',
    version: 'any',
    schema: { querystring: XAuthCallbackQuerySchema, response: { 302: RedirectResponseSchema, ...ERRORS } },
  },
  xAuthClaim: {
    service: 'terminal',
    method: 'POST',
    url: '/api/x-auth/claim',
    operationId: 'xAuthClaim',
    summary: 'Send the welcome tokens (two kinds) to the wallet, once per social account and wallet',
    tags: ['terminal', 'oauth'],
    auth: 'none',
    version: 'any',
    schema: { body: XAuthClaimRequestSchema, response: { 200: XAuthClaimResultSchema, ...ERRORS } },
  },
  getTerminalStakingOptions: {
    service: 'terminal',
    method: 'GET',
    url: '/api/staking/options',
    operationId: 'getTerminalStakingOptions',
    summary: 'Staking lock choices and their yield (read-only)',
    tags: ['terminal'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: StakingOptionsSchema, ...ERRORS } },
  },
  getTerminalSwapPools: {
    service: 'terminal',
    method: 'GET',
    url: '/api/swap/pools',
    operationId: 'getTerminalSwapPools',
    summary: 'Liquidity pools, as the validator reports them (read-only)',
    tags: ['terminal'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: SwapPoolsResponseSchema, ...ERRORS } },
  },
  getTerminalSwapQuote: {
    service: 'terminal',
    method: 'GET',
    url: '/api/swap/quote',
    operationId: 'getTerminalSwapQuote',
    summary: 'A swap quote, as the validator gives it (read-only)',
    tags: ['terminal'],
    auth: 'none',
    version: 'any',
    schema: { querystring: SwapQuoteRequestSchema, response: { 200: SwapQuoteSchema, ...ERRORS } },
  },
  getTerminalVaultOptions: {
    service: 'terminal',
    method: 'GET',
    url: '/api/vault/options',
    operationId: 'getTerminalVaultOptions',
    summary: 'Tokens and lock bounds of vaults (read-only)',
    tags: ['terminal'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: VaultOptionsSchema, ...ERRORS } },
  },
  premiumPurchase: {
    service: 'terminal',
    method: 'POST',
    url: '/api/crypto/premium-purchase',
    operationId: 'premiumPurchase',
    summary: 'Record a one-month premium purchase paid in SOL or PTM',
    tags: ['terminal', 'purchase'],
    auth: 'none',
    version: 'any',
    schema: { body: PurchaseRequestSchema, response: { 200: PurchaseResultSchema, ...ERRORS } },
  },
  noAdsPurchase: {
    service: 'terminal',
    method: 'POST',
    url: '/api/crypto/no-ads-purchase',
    operationId: 'noAdsPurchase',
    summary: 'Record a no-ads purchase paid in SOL or PTM',
    tags: ['terminal', 'purchase'],
    auth: 'none',
    version: 'any',
    schema: { body: PurchaseRequestSchema, response: { 200: PurchaseResultSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Hub
  // -------------------------------------------------------------------------------------------
  listGames: {
    service: 'hub',
    method: 'GET',
    url: '/api/games',
    operationId: 'listGames',
    summary: 'The full game list',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: GamesResponseSchema, ...ERRORS } },
  },
  getGameStatus: {
    service: 'hub',
    method: 'GET',
    url: '/api/status/:gameId',
    operationId: 'getGameStatus',
    summary: 'Whether a game is online (HEAD request to its URL)',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    schema: { params: GameIdParamsSchema, response: { 200: GameStatusSchema, ...ERRORS } },
  },
  getHubHealth: {
    service: 'hub',
    method: 'GET',
    url: '/health',
    operationId: 'getHubHealth',
    summary: 'Liveness of the hub',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: ServiceHealthSchema, ...ERRORS } },
  },
  getSitemap: {
    service: 'hub',
    method: 'GET',
    url: '/sitemap.xml',
    operationId: 'getSitemap',
    summary: 'The sitemap (XML, not JSON)',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    produces: ['application/xml'],
    schema: { response: { 200: TextSchema, ...ERRORS } },
  },
  getRobots: {
    service: 'hub',
    method: 'GET',
    url: '/robots.txt',
    operationId: 'getRobots',
    summary: 'robots.txt (plain text, not JSON)',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    produces: ['text/plain'],
    schema: { response: { 200: TextSchema, ...ERRORS } },
  },
});

export type Routes = typeof ROUTES;
export type OperationId = keyof Routes;

/** Every route, in table order. */
export const ROUTE_LIST: readonly RouteDefinition[] = Object.values(ROUTES);

/** The routes one service registers. */
export function routesOf(service: Service): RouteDefinition[] {
  return ROUTE_LIST.filter((route) => route.service === service);
}

type SchemaPart<Id extends OperationId, Part extends string> = Routes[Id]['schema'] extends {
  readonly [P in Part]: infer S extends TSchema;
}
  ? Static<S>
  : undefined;

/** The JSON body a route accepts (undefined when it takes none). */
export type RouteBody<Id extends OperationId> = SchemaPart<Id, 'body'>;
/** The query parameters a route accepts (undefined when it takes none). */
export type RouteQuery<Id extends OperationId> = SchemaPart<Id, 'querystring'>;
/** The path parameters of a route (undefined when it has none). */
export type RouteParams<Id extends OperationId> = SchemaPart<Id, 'params'>;
/** The successful response of a route: the 200 body, or null for a 302 redirect. */
export type RouteReply<Id extends OperationId> = Routes[Id]['schema']['response'] extends {
  readonly 200: infer S extends TSchema;
}
  ? Static<S>
  : null;
