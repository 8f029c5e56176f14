import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  BLOCK_INTERVAL_MS_DEFAULT,
  MAX_DIFFICULTY,
  MAX_FILLS_PER_ORDER,
  MAX_HEX_DIFFICULTY,
  MAX_TENSOR_DIM,
  MIN_DIFFICULTY,
  MIN_HEX_DIFFICULTY,
  MIN_TENSOR_DIM,
  parseAmount,
  SHARE_INTERVAL_MS_DEFAULT,
} from '@tensormine/protocol';
import {
  bigSetting as big,
  boolSetting as bool,
  ConfigError,
  intSetting as int,
  LOG_LEVELS,
  type LogLevel,
  oneOfSetting as oneOf,
  type ResolveSettingsInput,
  resolveSettings,
  type SettingSpec,
  textSetting as text,
  trustedProxies,
  urlSetting,
} from '@tensormine/service-kit';

export { ConfigError, settingFlag } from '@tensormine/service-kit';

/**
 * Validator configuration. Every setting has one entry in SETTINGS: its environment
 * variable, default, parser and meaning. Values resolve with the precedence
 *   flags > environment > config file > defaults
 * and `resolveConfig` records where each value came from. Settings that `POST /admin/config`
 * changes at run time are persisted in the database and apply to challenges issued afterwards;
 * at the next start a persisted value wins over the config file and the defaults, while a
 * flag or an environment variable still wins over it.
 */

export type PoolStrategy = 'solo' | 'pplns' | 'proportional';

export interface ValidatorConfig {
  /** Address to listen on (default loopback only). */
  readonly host: string;
  readonly port: number;
  /** Where the database and the admin token file live; ':memory:' keeps nothing. */
  readonly dataDir: string;
  /**
   * A PostgreSQL database URL (postgres://user:password@host:port/database): the storage of a
   * cluster of validators sharing one database (docs/storage.md). Unset: node:sqlite in dataDir.
   */
  readonly databaseUrl: string | undefined;
  /** Connections to PostgreSQL per process (transactions running at once). */
  readonly databasePoolSize: number;
  /** The admin bearer token; when unset, one is generated at first start and stored in dataDir. */
  readonly adminToken: string | undefined;
  /** v4.0 difficulty level, 1..24. */
  readonly difficulty: number;
  /** Largest tensor side served, 4..64. */
  readonly maxTensorDim: number;
  readonly poolStrategy: PoolStrategy;
  /** Pool fee in basis points of each pool block reward (100 = 1 %). */
  readonly poolFeeBps: number;
  /** The smallest stake POST /pool/join accepts, in PTM minor units. */
  readonly poolMinimumStake: bigint;
  /** The PPLNS window is this many times the block difficulty. */
  readonly poolPplnsWindowFactor: number;
  /** The share interval vardiff aims at per member, in milliseconds. */
  readonly poolShareIntervalMs: bigint;
  /** Initial v4.1 hexchain difficulty (expected hashes per block); the retarget rule moves it. */
  readonly hexDifficulty: bigint;
  /** Target v4.1 block interval in milliseconds. */
  readonly blockIntervalMs: bigint;
  /** Lifetime of a challenge in seconds. */
  readonly challengeTtlS: number;
  /** Require proof and block signatures (the default); false accepts unsigned legacy submissions. */
  readonly requireSignatures: boolean;
  /** Serve the v4.1 /api/hexchain/ endpoints. */
  readonly hexchain: boolean;
  /**
   * The multiply-accumulate core that recomputes v4.0 work: `wasm` (WebAssembly SIMD, checked
   * against the reference at start), `reference`, or `auto` (wasm where supported).
   */
  readonly verifyKernel: 'auto' | 'wasm' | 'reference';
  /** Largest accepted request body in bytes. */
  readonly bodyLimitBytes: number;
  /** Per client address: sustained requests per second and burst. */
  readonly rateLimitPerSecond: number;
  readonly rateLimitBurst: number;
  /**
   * Reverse proxies in front of the node whose X-Forwarded-For is believed (addresses, CIDR
   * ranges): per-address limits then count the client they forward for. Undefined: none.
   */
  readonly trustProxy: readonly string[] | undefined;
  /** Open GET /api/hexchain/events streams: at most this many in all, and per client address. */
  readonly eventStreams: number;
  readonly eventStreamsPerAddress: number;
  /** Per public key (signed operations and submissions): sustained per second and burst. */
  readonly keyRateLimitPerSecond: number;
  readonly keyRateLimitBurst: number;
  /**
   * The most fills one marketplace placement makes (the rest rests): the work one request can
   * do, so the longest another request waits behind it.
   */
  readonly marketMaxFills: number;
  /** Invalid v4.0 proofs a key may send before its back-off (one more per minute). */
  readonly invalidProofBudget: number;
  /** Invalid v4.0 proofs one client address may send before its back-off (one more per 6 s). */
  readonly invalidProofBudgetPerAddress: number;
  /**
   * Which registered devices are called back (docs/protocol.md 4.17): `private` (loopback,
   * private and link-local addresses: a home LAN), `all` (public addresses too), or `off`.
   */
  readonly deviceCallbacks: 'private' | 'all' | 'off';
  /** Devices with a callback port one address may register. */
  readonly deviceCallbacksPerAddress: number;
  /** How long a callback may take, connection included, before the device counts as not answering. */
  readonly deviceCallbackTimeoutMs: number;
  readonly logLevel: LogLevel;
  /** A JSON file with the economy's genesis, read at the first start of a data directory. */
  readonly genesisFile: string | undefined;
  /**
   * This node's identifier among the nodes sharing a database (GET /network/peers); default:
   * generated once per data directory (docs/cluster.md).
   */
  readonly nodeId: string | undefined;
  /** The base URL peers and operators reach this node at; default http://<host>:<port> once listening. */
  readonly advertiseUrl: string | undefined;
}

export type SettingName = keyof ValidatorConfig;
export type ConfigSource = 'flag' | 'env' | 'file' | 'persisted' | 'default';

type Setting<T> = SettingSpec<T, ValidatorConfig>;

function ptmAmount(value: unknown, where: string): bigint {
  if (typeof value === 'bigint' && value >= 0n) return value;
  const raw = typeof value === 'number' ? String(value) : value;
  try {
    if (typeof raw === 'string') return parseAmount(raw.trim(), 'PTM');
  } catch {
    // reported below
  }
  throw new ConfigError(`${where}: expected a PTM amount such as 10 or 2.5, got ${JSON.stringify(value)}`);
}

function token(value: unknown, where: string): string {
  const s = text(value, where);
  if (s.length < 16) throw new ConfigError(`${where}: an admin token needs at least 16 characters`);
  return s;
}

function databaseUrl(value: unknown, where: string): string {
  const s = text(value, where).trim();
  let url: URL | undefined;
  try {
    url = new URL(s);
  } catch {
    // reported below
  }
  if (
    url === undefined ||
    (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') ||
    (!url.hostname && !url.searchParams.get('host'))
  ) {
    // The value itself is not echoed: it may hold a password.
    throw new ConfigError(
      `${where}: expected a PostgreSQL URL such as postgres://user:password@localhost:5432/tensormine`,
    );
  }
  return s;
}

export function defaultDataDir(): string {
  const base = process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share');
  return join(base, 'tensormine', 'validator');
}

export const SETTINGS: { readonly [K in SettingName]: Setting<ValidatorConfig[K]> } = {
  host: {
    env: 'TENSORMINE_HOST',
    description: 'address to listen on',
    default: () => '127.0.0.1',
    parse: text,
  },
  port: {
    env: 'TENSORMINE_PORT',
    description: 'TCP port (0 picks a free one)',
    default: () => 8420,
    parse: int(0, 65535),
  },
  dataDir: {
    env: 'TENSORMINE_DATA_DIR',
    description: 'data directory (database, admin token); :memory: keeps nothing',
    default: defaultDataDir,
    parse: text,
  },
  databaseUrl: {
    env: 'TENSORMINE_DATABASE_URL',
    description:
      'PostgreSQL URL postgres://user:password@host:port/db to share one database between validator nodes (unset: node:sqlite in the data directory)',
    default: () => undefined,
    parse: databaseUrl,
  },
  databasePoolSize: {
    env: 'TENSORMINE_DATABASE_POOL_SIZE',
    description: 'PostgreSQL connections per validator process',
    default: () => 10,
    parse: int(1, 200),
  },
  adminToken: {
    env: 'TENSORMINE_ADMIN_TOKEN',
    description: 'admin bearer token (generated and stored in the data directory when unset)',
    default: () => undefined,
    defaultText: 'generated at first start',
    parse: token,
  },
  difficulty: {
    env: 'TENSORMINE_DIFFICULTY',
    description: 'v4.0 difficulty level',
    default: () => 6,
    parse: int(MIN_DIFFICULTY, MAX_DIFFICULTY),
  },
  maxTensorDim: {
    env: 'TENSORMINE_MAX_TENSOR_DIM',
    description: 'largest tensor side served',
    default: () => MAX_TENSOR_DIM,
    parse: int(MIN_TENSOR_DIM, MAX_TENSOR_DIM),
  },
  poolStrategy: {
    env: 'TENSORMINE_POOL_STRATEGY',
    description: 'pool strategy',
    default: () => 'solo',
    parse: oneOf(['solo', 'pplns', 'proportional'] as const),
  },
  poolFeeBps: {
    env: 'TENSORMINE_POOL_FEE_BPS',
    description: 'pool fee in basis points of each pool block reward (100 = 1 %)',
    default: () => 200,
    parse: int(0, 10_000),
  },
  poolMinimumStake: {
    env: 'TENSORMINE_POOL_MINIMUM_STAKE',
    description: 'smallest pool stake in PTM (a decimal amount, e.g. 2.5)',
    default: () => 0n,
    parse: ptmAmount,
  },
  poolPplnsWindowFactor: {
    env: 'TENSORMINE_POOL_PPLNS_WINDOW_FACTOR',
    description: 'PPLNS window N as a multiple of the block difficulty',
    default: () => 2,
    parse: int(1, 64),
  },
  poolShareIntervalMs: {
    env: 'TENSORMINE_POOL_SHARE_INTERVAL_MS',
    description: 'share interval vardiff aims at per pool member, in milliseconds',
    default: () => SHARE_INTERVAL_MS_DEFAULT,
    parse: big(100n, 3_600_000n),
  },
  hexDifficulty: {
    env: 'TENSORMINE_HEX_DIFFICULTY',
    description: 'initial v4.1 difficulty (expected hashes per block)',
    default: () => 1n << 20n,
    parse: big(MIN_HEX_DIFFICULTY, MAX_HEX_DIFFICULTY),
  },
  blockIntervalMs: {
    env: 'TENSORMINE_BLOCK_INTERVAL_MS',
    description: 'target v4.1 block interval in milliseconds',
    default: () => BLOCK_INTERVAL_MS_DEFAULT,
    parse: big(100n, 86_400_000n),
  },
  challengeTtlS: {
    env: 'TENSORMINE_CHALLENGE_TTL_S',
    description: 'challenge lifetime in seconds',
    default: () => 120,
    parse: int(10, 3600),
  },
  requireSignatures: {
    env: 'TENSORMINE_REQUIRE_SIGNATURES',
    description: 'require signed proofs and blocks (false accepts unsigned legacy submissions)',
    default: () => true,
    parse: bool,
  },
  hexchain: {
    env: 'TENSORMINE_HEXCHAIN',
    description: 'serve the v4.1 hexchain endpoints',
    default: () => true,
    parse: bool,
  },
  verifyKernel: {
    env: 'TENSORMINE_VERIFY_KERNEL',
    description: 'v4.0 recomputation core: auto, wasm (WebAssembly SIMD) or reference',
    default: () => 'auto',
    parse: oneOf(['auto', 'wasm', 'reference'] as const),
  },
  bodyLimitBytes: {
    env: 'TENSORMINE_BODY_LIMIT_BYTES',
    description: 'largest request body in bytes',
    default: () => 65_536,
    parse: int(1024, 16 * 1024 * 1024),
  },
  rateLimitPerSecond: {
    env: 'TENSORMINE_RATE_LIMIT_PER_SECOND',
    description: 'sustained requests per second per client address',
    default: () => 200,
    parse: int(1, 1_000_000),
  },
  rateLimitBurst: {
    env: 'TENSORMINE_RATE_LIMIT_BURST',
    description: 'request burst per client address',
    default: () => 400,
    parse: int(1, 1_000_000),
  },
  trustProxy: {
    env: 'TENSORMINE_TRUST_PROXY',
    description:
      'reverse proxies in front of this node whose X-Forwarded-For is believed (comma-separated addresses or CIDR ranges, or loopback, linklocal, uniquelocal): per-address limits then count the client they forward for; default none',
    default: () => undefined,
    parse: trustedProxies,
  },
  eventStreams: {
    env: 'TENSORMINE_EVENT_STREAMS',
    description: 'most open GET /api/hexchain/events streams in all (503 service_unavailable beyond)',
    default: () => 10_000,
    parse: int(1, 1_000_000),
  },
  eventStreamsPerAddress: {
    env: 'TENSORMINE_EVENT_STREAMS_PER_ADDRESS',
    description:
      'most open GET /api/hexchain/events streams per client address (an IPv6 /64 counts as one; behind trustProxy, per client): 429 too_many_streams beyond',
    default: () => 64,
    parse: int(1, 1_000_000),
  },
  keyRateLimitPerSecond: {
    env: 'TENSORMINE_KEY_RATE_LIMIT_PER_SECOND',
    description: 'sustained signed operations and submissions per second per public key',
    default: () => 50,
    parse: int(1, 1_000_000),
  },
  keyRateLimitBurst: {
    env: 'TENSORMINE_KEY_RATE_LIMIT_BURST',
    description: 'burst of signed operations and submissions per public key',
    default: () => 100,
    parse: int(1, 1_000_000),
  },
  marketMaxFills: {
    env: 'TENSORMINE_MARKET_MAX_FILLS',
    description:
      'most fills one marketplace order makes when placed (the rest rests in the book); bounds how long one placement holds the database (docs/economy.md)',
    default: () => MAX_FILLS_PER_ORDER,
    parse: int(1, 1000),
  },
  invalidProofBudget: {
    env: 'TENSORMINE_INVALID_PROOF_BUDGET',
    description:
      'invalid v4.0 proofs (failing the recomputation) a key may send before a back-off that doubles at each exhaustion; one more per minute',
    default: () => 10,
    parse: int(1, 1_000_000),
  },
  invalidProofBudgetPerAddress: {
    env: 'TENSORMINE_INVALID_PROOF_BUDGET_PER_ADDRESS',
    description:
      'invalid v4.0 proofs one client address may send (whatever the keys) before the same back-off; one more per 6 s',
    default: () => 100,
    parse: int(1, 1_000_000),
  },
  deviceCallbacks: {
    env: 'TENSORMINE_DEVICE_CALLBACKS',
    description:
      'which registered devices get work-stale callbacks on their port: private (loopback, private and link-local addresses), all (public ones too) or off',
    default: () => 'private',
    parse: oneOf(['private', 'all', 'off'] as const),
  },
  deviceCallbacksPerAddress: {
    env: 'TENSORMINE_DEVICE_CALLBACKS_PER_ADDRESS',
    description: 'devices with a callback port one client address may register',
    default: () => 16,
    parse: int(1, 65_536),
  },
  deviceCallbackTimeoutMs: {
    env: 'TENSORMINE_DEVICE_CALLBACK_TIMEOUT_MS',
    description:
      'how long a device callback may take, connection included, before the device counts as not answering',
    default: () => 1000,
    parse: int(50, 10_000),
  },
  logLevel: {
    env: 'TENSORMINE_LOG_LEVEL',
    description: 'log level',
    default: () => 'info',
    parse: oneOf(LOG_LEVELS),
  },
  genesisFile: {
    env: 'TENSORMINE_GENESIS_FILE',
    description:
      "a JSON file with the economy's genesis (reserve, pools, allocations, each optional; docs/economy.md), written once on a new database (per data directory; with PostgreSQL per cluster); default the built-in genesis",
    default: () => undefined,
    parse: text,
  },
  nodeId: {
    env: 'TENSORMINE_NODE_ID',
    description:
      "this node's identifier among the nodes sharing one database (letters, digits, . _ : -; at most 64); default generated once per data directory",
    default: () => undefined,
    parse: nodeIdSetting,
  },
  advertiseUrl: {
    env: 'TENSORMINE_ADVERTISE_URL',
    description:
      'the base URL this node is reached at, listed by GET /network/peers; default http://<host>:<port>',
    default: () => undefined,
    parse: urlSetting,
  },
};

function nodeIdSetting(value: unknown, where: string): string {
  const s = text(value, where);
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(s)) {
    throw new ConfigError(
      `${where}: a node id is 1 to 64 letters, digits, '.', '_', ':' or '-', got ${JSON.stringify(s)}`,
    );
  }
  return s;
}

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** Settings `POST /admin/config` may change at run time (persisted). */
export const RUNTIME_SETTINGS = [
  'difficulty',
  'maxTensorDim',
  'poolStrategy',
  'hexDifficulty',
  'challengeTtlS',
] as const;
export type RuntimeSettingName = (typeof RUNTIME_SETTINGS)[number];

/** Flags (or programmatic options), the environment and a config file, as every service takes them. */
export type ResolveInput = ResolveSettingsInput<ValidatorConfig>;

export interface ResolvedConfig {
  readonly config: ValidatorConfig;
  readonly sources: Readonly<Record<SettingName, ConfigSource>>;
}

export function resolveConfig(input: ResolveInput = {}): ResolvedConfig {
  return resolveSettings<ValidatorConfig>(SETTINGS, input);
}
