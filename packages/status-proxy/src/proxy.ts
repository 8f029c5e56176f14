import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ClientOptions,
  createClient,
  InvalidInputError,
  type TensormineClient,
  TensormineError,
  ValidatorError,
} from '@tensormine/client';
import {
  type ErrorCode,
  type ErrorResponse,
  keptBody,
  type LiveState,
  type OperationId,
  ROUTES,
  SSE_HEADERS,
  type SseHubOptions,
} from '@tensormine/protocol';
import { createServiceApp, errorBody } from '@tensormine/service-kit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type CachedAnswer, ReadCache } from './cache.js';
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
}

export interface StatusProxy {
  readonly app: FastifyInstance;
  readonly client: TensormineClient;
  readonly mirror: LatticeMirror;
  readonly cache: ReadCache;
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

/** What a failed upstream call becomes: the validator's own answer, or a 400 / 502 of ours. */
function answerOf(error: unknown): CachedAnswer {
  if (error instanceof ValidatorError && error.status !== undefined) {
    const body: ErrorResponse = {
      statusCode: error.status,
      code: error.code as ErrorCode,
      error: STATUS_CODES[error.status] ?? 'Error',
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
  const app = createServiceApp({
    service: 'status',
    logLevel: 'info',
    logger: options.logger,
    // One line per request would drown a proxy serving many dashboards; errors are still logged.
    logRequests: false,
    // A forwarded block submission is a few hundred bytes; the validator's own limit is 64 KiB.
    bodyLimit: 64 * 1024,
    // As before the service kit: no per-address limit of the proxy's own (the cache absorbs
    // repeated reads; the validators behind it limit the rest).
    rateLimit: false,
    now: Date.now,
  });
  const mirror = new LatticeMirror({
    client,
    ...(options.events === undefined ? {} : { events: options.events }),
    onChange: () => cache.clear(),
    log: (message) => app.log.info(message),
  });

  const send = (reply: FastifyReply, answer: CachedAnswer) =>
    reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(answer.body);
  const upstream = async (
    operationId: OperationId,
    input: Record<string, unknown>,
  ): Promise<CachedAnswer> => {
    try {
      const data = await client.request(operationId as never, input as never);
      return { status: 200, body: keptBody(JSON.stringify(data)) };
    } catch (error) {
      return answerOf(error);
    }
  };
  const activeUrl = () => client.endpoints().find((e) => e.active)?.url ?? options.validators[0]!;

  // The forwarded /api/hexchain/* routes.
  for (const [id, forward] of Object.entries(FORWARDED) as [
    OperationId,
    { upstream: OperationId; cached: boolean },
  ][]) {
    const route = ROUTES[id];
    const call = (request: FastifyRequest) => {
      const input: Record<string, unknown> = {};
      if (request.params && Object.keys(request.params as object).length > 0)
        input.params = coerce(request.params);
      if (request.query && Object.keys(request.query as object).length > 0)
        input.query = coerce(request.query);
      if (request.body !== undefined) input.body = request.body;
      return upstream(forward.upstream, input);
    };
    app.route({
      method: route.method,
      url: route.url,
      handler: forward.cached
        ? (request: FastifyRequest, reply: FastifyReply) => {
            // A fresh answer is sent at once (no promise, no upstream input built): the path
            // of a thousand dashboards polling the same read.
            const key = `${forward.upstream} ${request.url}`;
            const hit = cache.peek(key);
            if (hit !== undefined) {
              send(reply, hit);
              return;
            }
            return cache.get(key, () => call(request)).then((answer) => send(reply, answer));
          }
        : async (request: FastifyRequest, reply: FastifyReply) => send(reply, await call(request)),
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
    if (mirror.hub.full) {
      return send(reply, {
        status: 503,
        body: JSON.stringify(
          errorBody('service_unavailable', 'the event stream has its maximum of subscribers; retry later'),
        ),
      });
    }
    reply.hijack();
    reply.raw.writeHead(200, SSE_HEADERS);
    const unsubscribe = mirror.hub.subscribe(reply.raw, lastEventId);
    reply.raw.on('close', () => unsubscribe?.());
  });

  app.get('/health', async () => ({
    // The upstream event stream is open only while a validator answers.
    status: mirror.streamOpen ? 'ok' : 'degraded',
    service: 'tensormine-status-proxy',
    version: SOFTWARE_VERSION,
    uptime_s: Math.floor((Date.now() - startedAt) / 1000),
  }));

  app.get('/api/live', async (_request, reply) => {
    const answer = await cache.get('live', async () => {
      try {
        const status = await client.hexchain.status();
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
          client.node.health(),
          client.hexchain.status(),
          client.node.peers(),
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

  // Open event streams would hold the server's close: end them first.
  app.addHook('preClose', async () => mirror.stop());
  mirror.start();

  let closed = false;
  return {
    app,
    client,
    mirror,
    cache,
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
      await client.close();
    },
  };
}
