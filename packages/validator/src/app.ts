import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import swagger from '@fastify/swagger';
import {
  type CallbackSender,
  checkedWasmMac,
  fromHex,
  keyPairFromSecret,
  type MacCore,
  type OperationId,
  referenceMac,
  type SseHub,
  type SseHubOptions,
  taggedHash,
  toHex,
} from '@tensormine/protocol';
import { createServiceApp, metricsExposure, RateLimiter } from '@tensormine/service-kit';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import {
  ConfigError,
  type ConfigSource,
  type ResolvedConfig,
  RUNTIME_SETTINGS,
  type RuntimeSettingName,
  resolveConfig,
  SETTINGS,
  type SettingName,
  type ValidatorConfig,
} from './config.js';
import type { RuntimeConfig, ValidatorContext } from './context.js';
import { loadAdminToken } from './http/admin-auth.js';
import { storageUnavailable } from './http/errors.js';
import { type Handlers, registerRoutes } from './http/routes.js';
import { adminHandlers, CONFIG_CHANNEL } from './services/admin.js';
import { Cluster, followReconnects, isSharedStorage, resolveNodeId } from './services/cluster.js';
import { createDeviceService } from './services/devices.js';
import {
  createEconomyService,
  type EconomyGenesis,
  readGenesisFile,
  STORED_OPERATIONS,
} from './services/economy.js';
import { createHexchainService } from './services/hexchain.js';
import { instrumentStorage, registerValidatorSeries } from './services/metrics/prometheus.js';
import { Metrics } from './services/metrics.js';
import { createMiningService } from './services/mining.js';
import { nodeHandlers } from './services/node.js';
import { createPoolService } from './services/pool.js';
import { openStorage } from './store/open.js';
import type { Storage } from './store/types.js';

export const SOFTWARE_VERSION = '0.1.0';

export interface CreateValidatorOptions extends Partial<Record<SettingName, unknown>> {
  /** Read TENSORMINE_* variables from this environment (the bin passes process.env; default none). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** A JSON config file. */
  readonly configFile?: string;
  /** A storage to use instead of opening the one of the settings (databaseUrl, else node:sqlite in dataDir). */
  readonly storage?: Storage;
  /** The clock, Unix milliseconds (tests inject a fake one). */
  readonly now?: () => number;
  /** Fastify logger options; default: the configured level to stdout, silent under tests. */
  readonly logger?: boolean | Record<string, unknown>;
  /** GET /api/hexchain/events: replay ring, heartbeat and per-reader buffer (tests shorten them). */
  readonly events?: SseHubOptions;
  /** A lattice snapshot every this many blocks (default SNAPSHOT_EVERY, 10,000; tests shorten it). */
  readonly latticeSnapshotEvery?: number;
  /** The economy's genesis (written once, at the first start of a data directory); default DEFAULT_GENESIS. */
  readonly genesis?: EconomyGenesis;
  /**
   * Several validators share the storage (docs/cluster.md): heartbeats, peers, mode `cluster`.
   * Default: true on PostgreSQL, false on SQLite (tests may share one SQLite storage in process).
   */
  readonly cluster?: boolean;
  /** Sends the device callbacks (tests inject one); default HTTP (services/devices/). */
  readonly deviceCallbackSend?: CallbackSender;
}

export interface Validator {
  readonly app: FastifyInstance;
  readonly config: ValidatorConfig;
  readonly sources: Readonly<Record<SettingName, ConfigSource>>;
  readonly context: ValidatorContext;
  /** The admin bearer token in force. */
  readonly adminToken: string;
  /** Where the generated admin token is stored (undefined when configured or in memory). */
  readonly adminTokenFile: string | undefined;
  readonly registeredRoutes: readonly OperationId[];
  /** The hub of GET /api/hexchain/events (its subscribers, what it published). */
  readonly events: SseHub;
  /** This node among the nodes sharing its database (heartbeats, peers). */
  readonly cluster: Cluster;
  /** Runs a request in process (no socket). */
  inject(options: InjectOptions | string): Promise<LightMyRequestResponse>;
  /** Starts listening (host and port from the config unless given); resolves to the base URL. */
  listen(options?: { host?: string; port?: number }): Promise<string>;
  close(): Promise<void>;
}

/**
 * Builds a validator: opens (or uses) the storage, loads its state, registers every route.
 * The returned instance is not listening: use `inject()` in tests, or `listen()`.
 */
export async function createValidator(options: CreateValidatorOptions = {}): Promise<Validator> {
  const {
    env,
    configFile,
    storage: givenStorage,
    now = Date.now,
    logger,
    events,
    genesis,
    cluster: clusterOption,
    deviceCallbackSend,
    ...flags
  } = options;
  const resolved: ResolvedConfig = resolveConfig({
    flags,
    ...(env ? { env } : {}),
    ...(configFile ? { configFile } : {}),
  });
  const config = resolved.config;
  // Read before anything is opened: a bad file stops here, with nothing to clean up.
  const economyGenesis = genesis ?? (config.genesisFile ? readGenesisFile(config.genesisFile) : undefined);
  const inMemory = config.dataDir === ':memory:';
  if (!inMemory) mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Before the storage opens: a refused token file must not leave a database open.
  const { token: adminToken, file: adminTokenFile, modeFixedFrom } = loadAdminToken(config);
  const opened =
    givenStorage ??
    (await openStorage({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      databasePoolSize: config.databasePoolSize,
    }));

  const seed = await loadSeed(opened);
  const identity = keyPairFromSecret(taggedHash('PTM/validator-identity', seed));
  const clustered = clusterOption ?? isSharedStorage(opened);
  const nodeId = resolveNodeId(config, identity, clustered);
  const runtime = await loadRuntime(opened, resolved);

  const app = createServiceApp({
    service: 'validator',
    logLevel: config.logLevel,
    logger,
    // Behind the configured reverse proxies, request.ip is the client they forward for.
    ...(config.trustProxy === undefined ? {} : { trustProxy: config.trustProxy }),
    // One line per request would drown a node serving many miners; errors are still logged.
    logRequests: false,
    bodyLimit: config.bodyLimitBytes,
    rateLimit: { burst: config.rateLimitBurst, perSecond: config.rateLimitPerSecond },
    now,
    // Behind a load balancer, which node answered (also in GET /status and /admin/metrics).
    headers: { 'x-tm-node-id': nodeId },
    // A busy or unreachable database is 503 service_unavailable, never a 500.
    translateError: storageUnavailable,
    // GET /metrics: off unless --metrics-port or --metrics-token (docs/metrics.md).
    metrics: {
      version: SOFTWARE_VERSION,
      metricsPort: config.metricsPort,
      metricsHost: config.metricsHost,
      metricsToken: config.metricsToken,
    },
  });
  // Transactions counted and timed only while the metrics are served.
  const storage = metricsExposure(config) === 'off' ? opened : instrumentStorage(opened, app.metrics);

  const metrics = new Metrics(storage, now, clustered ? nodeId : undefined);
  await metrics.start();
  const context: ValidatorContext = {
    config,
    runtime,
    storage,
    now,
    seed,
    identity,
    nodeId,
    metrics,
    mac: verifyMac(config.verifyKernel),
    log: app.log,
    startedAt: now(),
  };

  // Where the data lives (a PostgreSQL URL without its password).
  app.log.info({ storage: storage.location }, 'storage opened');
  if (modeFixedFrom !== undefined) {
    app.log.warn(
      `${adminTokenFile} had mode 0${modeFixedFrom.toString(8)} (readable by other users): set to 0600; if others could read it, replace the token (delete the file and restart)`,
    );
  }
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'tensormine reference validator',
        version: SOFTWARE_VERSION,
        description:
          'The proof-of-tensor mining validator: v4.0 tensor proofs at root paths, v4.1 hexchain under /api/hexchain/. Error codes: docs/errors.md.',
      },
      components: {
        securitySchemes: {
          adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token of the node.' },
          signedRequest: {
            type: 'apiKey',
            in: 'header',
            name: 'x-tm-signature',
            description:
              'ed25519 signed request: headers x-tm-pubkey, x-tm-timestamp, x-tm-nonce, x-tm-signature (docs/protocol.md, signed requests).',
          },
        },
      },
    },
  });

  const keyLimiter = new RateLimiter(
    { burst: config.keyRateLimitBurst, perSecond: config.keyRateLimitPerSecond },
    now,
  );
  app.metrics.trackRateLimiter('key', keyLimiter);
  // Runs on every request: callback style (no promise, no extra microtask turn).
  app.addHook('onResponse', (_request, reply, done) => {
    metrics.observeResponse(reply.elapsedTime);
    done();
  });

  const pool = createPoolService(context);
  const hexchain = await createHexchainService(context, {
    events: {
      maxSubscribers: config.eventStreams,
      maxSubscribersPerClient: config.eventStreamsPerAddress,
      ...events,
    },
    ...(options.latticeSnapshotEvery === undefined ? {} : { snapshotEvery: options.latticeSnapshotEvery }),
    hooks: pool.hooks,
    cluster: clustered,
  });
  pool.attach(hexchain);
  // Open event streams would hold the server's close: end them first.
  app.addHook('preClose', async () => hexchain.close());
  const cluster = new Cluster(clustered, {
    storage,
    now,
    nodeId,
    softwareVersion: SOFTWARE_VERSION,
    hexchain,
    log: app.log,
  });
  registerValidatorSeries(app.metrics, { ctx: context, hexchain, events: hexchain.events, cluster });
  const stopFollowingReconnects = followReconnects(storage, () => hexchain.catchUp(), app.log);
  // POST /admin/config on another node: apply the run-time settings it changed (and persisted),
  // as that node did, whatever their source here.
  const stopConfigListener = await storage.listen(CONFIG_CHANNEL, (payload) => {
    reloadRuntime(storage, runtime, nodeId, payload).catch((error: unknown) =>
      app.log.warn({ err: error }, 'could not reload the run-time settings'),
    );
  });
  const mining = createMiningService(context);
  const economy = await createEconomyService(context, economyGenesis);
  const devices = createDeviceService(
    context,
    hexchain,
    deviceCallbackSend ? { send: deviceCallbackSend } : {},
  );
  const handlers: Handlers = devices.wrap({
    ...nodeHandlers({ softwareVersion: SOFTWARE_VERSION, hexchain, cluster }),
    ...adminHandlers({ hexchain }),
    ...mining.handlers,
    ...devices.handlers,
    ...economy.handlers,
    ...hexchain.handlers,
    ...pool.handlers,
  });
  const registeredRoutes = registerRoutes(app, context, handlers, {
    adminToken,
    keyLimiter,
    // Only the economy's stored operations can be a retry to answer from storage.
    preHandlers: Object.fromEntries([...STORED_OPERATIONS].map((id) => [id, economy.replayHook])),
    disabledVersions: config.hexchain ? [] : ['4.1'],
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await cluster.start();
  await devices.start();
  const beat = setInterval(() => {
    metrics
      .beat()
      .catch((error: unknown) => app.log.warn({ err: error }, 'could not persist the uptime counter'));
  }, 30_000);
  beat.unref();

  let closed = false;
  return {
    app,
    config,
    sources: resolved.sources,
    context,
    adminToken,
    adminTokenFile,
    registeredRoutes,
    events: hexchain.events,
    cluster,
    inject: (injectOptions) => app.inject(injectOptions as InjectOptions),
    async listen(listenOptions = {}) {
      // A deep accept queue: with Node's default (511) a burst of a thousand miners overflows it
      // and clients wait out SYN retries of 1 to 3 s (measured in docs/benchmarks.md).
      const url = await app.listen({
        host: listenOptions.host ?? config.host,
        port: listenOptions.port ?? config.port,
        backlog: 4096,
      });
      await cluster.listening(config.advertiseUrl ?? url);
      return url;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(beat);
      // First: the peers stop listing this node at once.
      await cluster
        .stop()
        .catch((error: unknown) => app.log.warn({ err: error }, 'could not mark the node stopped'));
      await stopConfigListener();
      stopFollowingReconnects();
      economy.close();
      pool.close();
      await app.close();
      await devices.close();
      await metrics.beat().catch(() => {});
      if (!givenStorage) await storage.close();
    },
  };
}

/** The validator's secret seed: generated once, kept in the database. */
async function loadSeed(storage: Storage): Promise<Uint8Array> {
  return storage.transaction(async (tx) => {
    const existing = await tx.meta.get('validator_seed');
    if (existing) return fromHex(existing, 32, 'validator_seed');
    const seed = new Uint8Array(randomBytes(32));
    await tx.meta.set('validator_seed', toHex(seed));
    return seed;
  });
}

/**
 * The run-time settings: a value persisted by POST /admin/config wins over the config file and
 * the defaults; a flag or an environment variable wins over the persisted value.
 */
async function loadRuntime(storage: Storage, resolved: ResolvedConfig): Promise<RuntimeConfig> {
  const runtime: Record<string, unknown> = {};
  await storage.read(async (tx) => {
    for (const name of RUNTIME_SETTINGS) {
      const source = resolved.sources[name];
      const persisted = await tx.meta.get(`config.${name}`);
      runtime[name] =
        persisted !== undefined && source !== 'flag' && source !== 'env'
          ? (SETTINGS[name].parse as (v: unknown, w: string) => unknown)(
              persisted,
              `persisted setting ${name}`,
            )
          : resolved.config[name];
    }
  });
  return runtime as RuntimeConfig;
}

/** Applies the run-time settings another node changed (payload of CONFIG_CHANNEL). */
async function reloadRuntime(
  storage: Storage,
  runtime: RuntimeConfig,
  self: string,
  payload: string,
): Promise<void> {
  const { from, names } = JSON.parse(payload) as { from?: unknown; names?: unknown };
  if (from === self || !Array.isArray(names)) return;
  const wanted = RUNTIME_SETTINGS.filter((name) => names.includes(name));
  const values = await storage.read(async (tx) => {
    const found: Partial<Record<RuntimeSettingName, unknown>> = {};
    for (const name of wanted) {
      const persisted = await tx.meta.get(`config.${name}`);
      if (persisted !== undefined) {
        found[name] = (SETTINGS[name].parse as (v: unknown, w: string) => unknown)(
          persisted,
          `persisted setting ${name}`,
        );
      }
    }
    return found;
  });
  Object.assign(runtime, values);
}

/**
 * The multiply-accumulate core of v4.0 verification: the WebAssembly SIMD one after its
 * self-check against the reference (`auto` falls back to the reference without it). `wasm`
 * is checked now (a node that cannot have it does not start); `auto` checks on the first
 * v4.0 proof it verifies, the same check, so that a start (a hexchain node, `miner mine
 * --local`) does not pay for it (docs/benchmarks.md, the miner's start).
 */
function verifyMac(choice: ValidatorConfig['verifyKernel']): MacCore {
  if (choice === 'reference') return referenceMac;
  if (choice === 'wasm') {
    const wasm = checkedWasmMac();
    if (wasm !== undefined) return wasm;
    throw new ConfigError(
      'verifyKernel: wasm was requested but WebAssembly SIMD is unavailable or failed its self-check',
    );
  }
  let core: MacCore | undefined;
  const resolve = (): MacCore => {
    core ??= checkedWasmMac() ?? referenceMac;
    return core;
  };
  // `passes` is undefined on the reference core: a getter that may answer undefined (the
  // checked core decides), which the optional property's type does not spell.
  return {
    get name() {
      return resolve().name;
    },
    accumulators: (task, seed) => resolve().accumulators(task, seed),
    matmul: (x, w, n) => resolve().matmul(x, w, n),
    conv3x3: (x, kernels, n, filters) => resolve().conv3x3(x, kernels, n, filters),
    get passes() {
      return resolve().passes;
    },
  } as MacCore;
}
