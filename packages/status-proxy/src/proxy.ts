import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ClientOptions,
  checkInput,
  createClient,
  InvalidInputError,
  type TensormineClient,
  TensormineError,
  ValidatorError,
} from '@tensormine/client';
import {
  ERROR_CODES,
  type ErrorCode,
  type ErrorResponse,
  keptBody,
  type LiveState,
  type OperationId,
  ROUTES,
  SSE_HEADERS,
  type SseHubOptions,
  sseRefusal,
} from '@tensormine/protocol';
import {
  type ApiError,
  addressKey,
  createServiceApp,
  errorBody,
  type MetricsSettings,
  nodeHttp,
  RateLimiter,
} from '@tensormine/service-kit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type CachedAnswer, ReadCache } from './cache.js';
import { DeviceRelay, type DeviceRelayOptions } from './devices.js';
import { LatticeMirror } from './mirror.js';

export const SOFTWARE_VERSION = '0.1.0';

export interface CreateStatusProxyOptions {
  /** The validators' base URLs, in failover order. */
  readonly validators: readonly string[];
  /** How long read answers are cached, ms (default 1000; 0: no cache). */
  readonly cacheMs?: number;
  /** The re-served event stream: replay ring, heartbeats, per-browser buffer, most browsers. */
  readonly events?: SseHubOptions;
  /** Options of the SDK client to the validators (timeouts, retries, health-check interval). */
  readonly client?: Omit<ClientOptions, 'url' | 'urls'>;
  /** Fastify logger options (default: info to stdout, silent under tests). */
  readonly logger?: boolean | Record<string, unknown>;
  /** GET /metrics for Prometheus (docs/metrics.md); default off. */
  readonly metrics?: Partial<MetricsSettings>;
  /**
   * Callbacks to the boards that register through the proxy (docs/status-proxy.md): the key
   * that signs them (default: a new one per process), which addresses are called (default
   * private), the sender (tests).
   */
  readonly deviceCallbacks?: Omit<DeviceRelayOptions, 'upstream' | 'hub' | 'log'>;
  /** Per client address, every request: sustained per second and burst (default 20, 60). */
  readonly rateLimitPerSecond?: number;
  readonly rateLimitBurst?: number;
  /**
   * Per client address, the requests that cost a validator request (a read the cache misses, a board's registration, a
   * challenge, a submission): sustained per second and burst (default 5, 20).
   */
  readonly upstreamPerSecond?: number;
  readonly upstreamBurst?: number;
  /**
   * All clients together, the same requests (default 100, 200): what the proxy may spend of the
   * validator's budget for its address, less what the shared reads and its mirror need.
   */
  readonly upstreamTotalPerSecond?: number;
  readonly upstreamTotalBurst?: number;
  /** Event streams (GET /api/hexchain/events): in all (default 10,000) and per client address (64). */
  readonly eventStreams?: number;
  readonly eventStreamsPerAddress?: number;
  /**
   * Reverse proxies in front of this one whose X-Forwarded-For is believed (addresses or CIDR
   * ranges): the per-address limits then count the client they forward for. Default none.
   */
  readonly trustProxy?: readonly string[];
  /** The clock of the rate limits, Unix ms (tests inject one). */
  readonly now?: () => number;
}

/** The defaults of the proxy's limits (docs/status-proxy.md). */
export const STATUS_PROXY_LIMITS = {
  rateLimitPerSecond: 20,
  rateLimitBurst: 60,
  upstreamPerSecond: 5,
  upstreamBurst: 20,
  upstreamTotalPerSecond: 100,
  upstreamTotalBurst: 200,
  eventStreams: 10_000,
  eventStreamsPerAddress: 64,
} as const;

export interface StatusProxy {
  readonly app: FastifyInstance;
  readonly client: TensormineClient;
  readonly mirror: LatticeMirror;
  readonly cache: ReadCache;
  /** The callbacks to the boards behind the proxy. */
  readonly devices: DeviceRelay;
  /** Starts listening; resolves to the base URL (the dashboard is at its root). */
  listen(options?: { host?: string; port?: number }): Promise<string>;
  close(): Promise<void>;
}

const PUBLIC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'public');
const require = createRequire(import.meta.url);

/** The page and its assets: [path, file, content type]. uPlot comes from its npm package. */
const ASSETS: readonly [string, string, string][] = [
  ['/', join(PUBLIC_DIR, 'index.html'), 'text/html; charset=utf-8'],
  ['/dashboard.js', join(PUBLIC_DIR, 'dashboard.js'), 'text/javascript; charset=utf-8'],
  ['/panels.js', join(PUBLIC_DIR, 'panels.js'), 'text/javascript; charset=utf-8'],
  ['/dashboard.css', join(PUBLIC_DIR, 'dashboard.css'), 'text/css; charset=utf-8'],
  [
    '/vendor/uPlot.iife.min.js',
    require.resolve('uplot/dist/uPlot.iife.min.js'),
    'text/javascript; charset=utf-8',
  ],
  ['/vendor/uPlot.min.css', require.resolve('uplot/dist/uPlot.min.css'), 'text/css; charset=utf-8'],
];

/** The proxy routes that are the validator's routes forwarded, and which of them are cached. */
const FORWARDED: Readonly<Partial<Record<OperationId, { upstream: OperationId; cached: boolean }>>> = {
  proxyHexChallenge: { upstream: 'hexChallenge', cached: false },
  proxyHexSubmit: { upstream: 'hexSubmit', cached: false },
  proxyHexStatus: { upstream: 'hexStatus', cached: true },
  proxyHexLattice: { upstream: 'hexLattice', cached: true },
  proxyHexBlock: { upstream: 'hexBlock', cached: true },
};

/** `input` with its keys in order, as the text of a cache key (the same request, the same key). */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

/** Only the properties a schema declares (the validator drops the others as well). */
function declared(schema: unknown, value: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (properties === undefined) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => Object.hasOwn(properties, k)));
}

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
/** Path and query integers, strictly ("01", "1.5" stay strings and fail the client's check). */
const INTEGER_FIELDS = new Set(['q', 'r', 's', 'limit', 'after']);

function coerce(value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, v] of Object.entries(out)) {
    if (
      INTEGER_FIELDS.has(key) &&
      typeof v === 'string' &&
      INTEGER.test(v) &&
      Number.isSafeInteger(Number(v))
    ) {
      out[key] = Number(v);
    }
  }
  return out;
}

/** The error code a failed upstream call is answered with (the metrics' `result`). */
function answerCode(error: unknown): string {
  if (error instanceof ValidatorError && error.status !== undefined) return error.code;
  if (error instanceof InvalidInputError) return 'validation_failed';
  return 'upstream_unavailable';
}

/** What a failed upstream call becomes: the validator's own answer, or a 400 / 502 of ours. */
function answerOf(error: unknown): CachedAnswer {
  if (error instanceof ValidatorError && error.status !== undefined) {
    const body: ErrorResponse = {
      statusCode: error.status,
      code: error.code as ErrorCode,
      error: nodeHttp.STATUS_CODES[error.status] ?? 'Error',
      message: error.serverMessage,
      ...(error.details === undefined ? {} : { details: { ...error.details } }),
    };
    return { status: error.status, body: JSON.stringify(body) };
  }
  if (error instanceof InvalidInputError) {
    const body = errorBody('validation_failed', error.problems.map((p) => p.message).join('; '), {
      errors: error.problems.map((p) => ({ path: p.path, message: p.message })),
    });
    return { status: 400, body: JSON.stringify(body) };
  }
  const reason =
    error instanceof TensormineError
      ? error.shortMessage
      : error instanceof Error
        ? error.message
        : String(error);
  return {
    status: 502,
    body: JSON.stringify(errorBody('upstream_unavailable', `no validator answered: ${reason}`)),
  };
}

/**
 * Builds a status proxy in front of `validators`: not listening yet (`listen()`), its lattice
 * mirror and upstream event stream started.
 */
export async function createStatusProxy(options: CreateStatusProxyOptions): Promise<StatusProxy> {
  if (options.validators.length === 0)
    throw new Error('createStatusProxy: expected at least one validator URL');
  const startedAt = Date.now();
  const client = createClient({
    healthCheckIntervalMs: 10_000,
    timeoutMs: 10_000,
    ...options.client,
    urls: [...options.validators],
    protocol: '4.1',
  });
  const cache = new ReadCache(options.cacheMs ?? 1000);
  const limits = { ...STATUS_PROXY_LIMITS, ...definedOnly(options) };
  const now = options.now ?? Date.now;
  const upstreamPerAddress = new RateLimiter(
    { perSecond: limits.upstreamPerSecond, burst: limits.upstreamBurst },
    now,
  );
  const upstreamTotal = new RateLimiter(
    { perSecond: limits.upstreamTotalPerSecond, burst: limits.upstreamTotalBurst },
    now,
    2,
  );
  const app = createServiceApp({
    service: 'status',
    logLevel: 'info',
    logger: options.logger,
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    // One line per request would drown a proxy serving many dashboards; errors are still logged.
    logRequests: false,
    // A forwarded block submission is a few hundred bytes; the validator's own limit is 64 KiB.
    bodyLimit: 64 * 1024,
    // Every request, per client address (docs/status-proxy.md "Limits"): the kit's limiter.
    rateLimit: { perSecond: limits.rateLimitPerSecond, burst: limits.rateLimitBurst },
    now,
    metrics: { version: SOFTWARE_VERSION, ...options.metrics },
  });
  const upstreamSeconds = app.metrics.histogram({
    name: 'tensormine_status_upstream_request_duration_seconds',
    help: 'Requests of the proxy to the validators, by operation (operationId of the route table) and result (ok, or the error code answered)',
    labelNames: ['operation', 'result'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  /** Runs one upstream call, timed. */
  const timed = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let result = 'ok';
    try {
      return await call();
    } catch (error) {
      result = answerCode(error);
      throw error;
    } finally {
      upstreamSeconds.observe({ operation, result }, (performance.now() - started) / 1000);
    }
  };
  const mirror = new LatticeMirror({
    client,
    events: {
      maxSubscribers: limits.eventStreams,
      maxSubscribersPerClient: limits.eventStreamsPerAddress,
      ...options.events,
    },
    onChange: () => cache.clear(),
    log: (message) => app.log.info(message),
  });

  const send = (reply: FastifyReply, answer: CachedAnswer) => {
    if (answer.headers !== undefined) void reply.headers(answer.headers);
    return reply
      .code(answer.status)
      .header('content-type', 'application/json; charset=utf-8')
      .send(answer.body);
  };
  /** A refusal of the proxy's own: its error body, and Retry-After. */
  const refusal = (
    code: ErrorCode,
    message: string,
    details: Record<string, unknown>,
    retryAfterS: number,
  ): CachedAnswer => ({
    status: ERROR_CODES[code].status,
    body: JSON.stringify(errorBody(code, message, details)),
    headers: { 'retry-after': String(retryAfterS) },
  });
  const limited = (error: ApiError) =>
    refusal('rate_limited', error.message, error.details ?? {}, Number(error.headers?.['retry-after'] ?? 1));
  /**
   * The budget of a request that costs a validator request: its address's, then everyone's. A
   * refusal here is the proxy's own (never a validator's answer, never cached).
   */
  const spend = (request: FastifyRequest): CachedAnswer | undefined => {
    const own = upstreamPerAddress.refuse(addressKey(request.ip), 'address through the status proxy');
    if (own !== undefined) return limited(own);
    if (upstreamTotal.refuse('all', 'proxy') !== undefined) {
      return refusal(
        'service_unavailable',
        `the status proxy is at its budget of validator requests (${limits.upstreamTotalPerSecond}/s for all its clients); cached reads are still served; retry in 1 s`,
        { upstream_per_second: limits.upstreamTotalPerSecond },
        1,
      );
    }
    return undefined;
  };
  const upstream = async (
    operationId: OperationId,
    input: Record<string, unknown>,
  ): Promise<CachedAnswer> => {
    try {
      const data = await timed(operationId, () => client.request(operationId as never, input as never));
      return { status: 200, body: keptBody(JSON.stringify(data)) };
    } catch (error) {
      return answerOf(error);
    }
  };
  const activeUrl = () => client.endpoints().find((e) => e.active)?.url ?? options.validators[0]!;
  const devices = new DeviceRelay({
    ...options.deviceCallbacks,
    upstream: activeUrl,
    hub: mirror.hub,
    admit: spend,
    log: (message) => app.log.info(message),
  });
  devices.routes(app);

  // The forwarded /api/hexchain/* routes.
  for (const [id, forward] of Object.entries(FORWARDED) as [
    OperationId,
    { upstream: OperationId; cached: boolean },
  ][]) {
    const route = ROUTES[id];
    /**
     * The request as the validator will see it: the declared query parameters only, integers
     * as numbers. Checked here (a bad one is answered without a validator request) and made the
     * cache key, so that `?limit=5&&&x=1` and `?x=2&limit=5` are one entry, not two requests.
     */
    const inputOf = (request: FastifyRequest): { input: Record<string, unknown> } | { bad: CachedAnswer } => {
      const input: Record<string, unknown> = {};
      if (request.params && Object.keys(request.params as object).length > 0)
        input.params = coerce(request.params);
      const query = declared(
        (route.schema as { querystring?: unknown }).querystring,
        coerce(request.query ?? {}),
      );
      if (Object.keys(query).length > 0) input.query = query;
      if (request.body !== undefined) input.body = request.body;
      try {
        checkInput(route, input);
      } catch (error) {
        return { bad: answerOf(error) };
      }
      return { input };
    };
    app.route({
      method: route.method,
      url: route.url,
      handler: forward.cached
        ? (request: FastifyRequest, reply: FastifyReply) => {
            const parsed = inputOf(request);
            if ('bad' in parsed) return send(reply, parsed.bad);
            const input = parsed.input;
            // A read without parameters (the status every dashboard polls) is one key whatever
            // the number of readers: at most one validator request per cacheMs, outside the
            // budgets. A read with parameters costs its address's budget when it misses.
            const shared = input.params === undefined && input.query === undefined;
            const key = `${forward.upstream} ${canonical(input)}`;
            // A fresh answer is sent at once (no promise): the path of a thousand dashboards.
            const hit = cache.peek(key);
            if (hit !== undefined) {
              send(reply, hit);
              return;
            }
            return cache
              .get(key, () => upstream(forward.upstream, input), shared ? undefined : () => spend(request))
              .then((answer) => send(reply, answer));
          }
        : async (request: FastifyRequest, reply: FastifyReply) => {
            const parsed = inputOf(request);
            if ('bad' in parsed) return send(reply, parsed.bad);
            const refused = spend(request);
            if (refused !== undefined) return send(reply, refused);
            const answer = await upstream(forward.upstream, parsed.input);
            // A board's challenge through the proxy: its work, for the callbacks.
            if (forward.upstream === 'hexChallenge' && answer.status === 200)
              devices.followChallenge(request.body, answer.body.toString());
            return send(reply, answer);
          },
    });
  }

  app.get('/api/hexchain/events', async (request, reply) => {
    const header = request.headers['last-event-id'];
    const query = request.query as { last_event_id?: unknown };
    const lastEventId =
      typeof header === 'string'
        ? header
        : typeof query.last_event_id === 'string'
          ? query.last_event_id
          : undefined;
    const client = addressKey(request.ip);
    const admission = mirror.hub.admission(client);
    if (admission !== 'ok') {
      const r = sseRefusal(admission, mirror.hub.limits);
      return send(reply, refusal(r.code, r.message, r.details, admission === 'full' ? 5 : 30));
    }
    reply.hijack();
    reply.raw.writeHead(200, SSE_HEADERS);
    const unsubscribe = mirror.hub.subscribe(reply.raw, lastEventId, client);
    reply.raw.on('close', () => unsubscribe?.());
  });

  app.get('/health', async () => ({
    // The upstream event stream is open only while a validator answers.
    status: mirror.streamOpen ? 'ok' : 'degraded',
    service: 'tensormine-status-proxy',
    version: SOFTWARE_VERSION,
    uptime_s: Math.floor((Date.now() - startedAt) / 1000),
    callback_pubkey: devices.publicKeyHex,
  }));

  app.get('/api/live', async (_request, reply) => {
    const answer = await cache.get('live', async () => {
      try {
        const status = await timed('hexStatus', () => client.hexchain.status());
        const figures = mirror.liveFigures(Math.floor(Date.now() / 1000), status.block_interval_s);
        const last = figures.recentBlocks[0];
        const live: LiveState = {
          mining: figures.mining,
          hashrate: figures.hashrate,
          difficulty: status.difficulty,
          last_block:
            last === undefined
              ? null
              : {
                  coord: last.coord,
                  block_hash: last.block_hash,
                  depth: last.depth,
                  timestamp: last.timestamp,
                },
          recent_blocks: figures.recentBlocks,
          blocks: figures.blocks,
          miners_seen: figures.minersSeen,
          mean_block_time_s: figures.meanBlockTime,
          block_interval_s: status.block_interval_s,
          blocks_until_retarget: status.blocks_until_retarget,
          uptime_s: Math.floor((Date.now() - startedAt) / 1000),
          validator_url: activeUrl(),
        };
        return { status: 200, body: JSON.stringify(live) };
      } catch (error) {
        return answerOf(error);
      }
    });
    return send(reply, answer);
  });

  app.get('/api/dashboard', async (_request, reply) => {
    const answer = await cache.get('dashboard', async () => {
      try {
        const [validator, lattice, peers] = await Promise.all([
          timed('getHealth', () => client.node.health()),
          timed('hexStatus', () => client.hexchain.status()),
          timed('getPeers', () => client.node.peers()),
        ]);
        return {
          status: 200,
          body: JSON.stringify({
            validator,
            lattice,
            peers: peers.peers,
            generated_at: Math.floor(Date.now() / 1000),
          }),
        };
      } catch (error) {
        return answerOf(error);
      }
    });
    return send(reply, answer);
  });

  app.get('/api/dashboard/blocks', async (request, reply) => {
    const after = coerce(request.query).after;
    if (after !== undefined && (typeof after !== 'number' || after < 0)) {
      return send(reply, {
        status: 400,
        body: JSON.stringify(
          errorBody(
            'validation_failed',
            `after: expected a height (integer >= 0), got ${JSON.stringify(after)}`,
          ),
        ),
      });
    }
    await mirror.ready;
    return send(reply, { status: 200, body: JSON.stringify(mirror.columns(after ?? 0)) });
  });

  for (const [path, file, type] of ASSETS) {
    const body = readFileSync(file);
    app.get(path, async (_request, reply) =>
      reply.header('content-type', type).header('cache-control', 'no-cache').send(body),
    );
  }

  app.metrics.counterFrom(
    'tensormine_status_cache_requests_total',
    'Cached reads, by result: hit (answered from the cache, or by a load in flight) or miss (loaded from a validator)',
    () => [
      [{ result: 'hit' }, cache.hits],
      [{ result: 'miss' }, cache.misses],
    ],
    ['result'],
  );
  app.metrics.gaugeFrom(
    'tensormine_status_event_stream_readers',
    'Browsers reading the re-served event stream',
    () => mirror.hub.stats().subscribers,
  );
  app.metrics.gaugeFrom(
    'tensormine_status_upstream_stream_up',
    "1 while the proxy's one event stream from a validator is open",
    () => (mirror.streamOpen ? 1 : 0),
  );
  app.metrics.counterFrom(
    'tensormine_status_upstream_stream_connections_total',
    'Event streams opened to the validators (a reconnection adds one)',
    () => mirror.upstreamConnections,
  );

  // Open event streams would hold the server's close: end them first.
  app.addHook('preClose', async () => mirror.stop());
  mirror.start();

  let closed = false;
  return {
    app,
    client,
    mirror,
    cache,
    devices,
    listen: (listenOptions = {}) =>
      app.listen({
        host: listenOptions.host ?? '127.0.0.1',
        port: listenOptions.port ?? 8430,
        backlog: 4096,
      }),
    async close() {
      if (closed) return;
      closed = true;
      mirror.stop();
      await app.close();
      await devices.close();
      await client.close();
    },
  };
}

/** The options that are set (an explicit undefined keeps the default). */
function definedOnly(
  options: CreateStatusProxyOptions,
): Partial<Record<keyof typeof STATUS_PROXY_LIMITS, number>> {
  const out: Partial<Record<keyof typeof STATUS_PROXY_LIMITS, number>> = {};
  for (const name of Object.keys(STATUS_PROXY_LIMITS) as (keyof typeof STATUS_PROXY_LIMITS)[]) {
    const value = options[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
