import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Counter,
  type CounterConfiguration,
  collectDefaultMetrics,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
} from 'prom-client';
import { ApiError, errorBody } from './api-error.js';
import { type BearerGuard, bearerRefusal } from './bearer.js';
import { nodeHttp } from './node-http.js';
import type { MetricsSettings } from './settings.js';

export { type MetricsSettings, metricsSettings } from './settings.js';

/**
 * Prometheus metrics (prom-client) of a tensormine program: one registry per service instance
 * (never prom-client's global one, so that several services in one process, as in tests and
 * `mine --local --dashboard`, each report their own), the kit's own series, and the ways to serve
 * them. This module loads without Fastify: the miner's control API and the Fastify plugin
 * (metrics-plugin.ts) both build on it. Names follow Prometheus' conventions: base units in the
 * name (`_seconds`, `_bytes`), `_total` for counters, `tensormine_` before our own.
 */

/** How `/metrics` is served: not at all (the default), on the service's port behind the token, or on a listener of its own. */
export type MetricsExposure = 'off' | 'service-port' | 'own-port';

export function metricsExposure(settings: Partial<MetricsSettings>): MetricsExposure {
  if (settings.metricsPort !== undefined) return 'own-port';
  return settings.metricsToken === undefined ? 'off' : 'service-port';
}

/** Where the metrics are, for a service's start-up lines. */
export function describeMetrics(
  settings: Partial<MetricsSettings>,
  serviceUrl: string,
  listenerUrl: string | undefined,
): string {
  const guarded = settings.metricsToken === undefined ? '' : ' (Authorization: Bearer <metrics token>)';
  switch (metricsExposure(settings)) {
    case 'off':
      return 'metrics: off (--metrics-port or --metrics-token serve GET /metrics; docs/metrics.md)';
    case 'service-port':
      return `metrics: ${serviceUrl}/metrics${guarded}`;
    default:
      return `metrics: ${listenerUrl ?? '(not listening)'}/metrics${guarded}`;
  }
}

/** The token guard of `/metrics`. */
export const METRICS_GUARD: BearerGuard = {
  realm: 'tensormine-metrics',
  name: 'metrics token',
  what: 'GET /metrics and the metrics listener',
};

/** Label values of one series. */
export type Labels = Readonly<Record<string, string>>;
/** What a `counterFrom` or `gaugeFrom` reads at scrape time: one value, or one per label set. */
export type Reading = number | Iterable<readonly [Labels, number]>;

/** What `trackRateLimiter` reads: the kit's RateLimiter counts its refusals. */
export interface RefusalCounter {
  readonly refusals: number;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #beforeScrape: (() => void | Promise<void>)[] = [];
  readonly #limiters: [string, RefusalCounter][] = [];
  #processMetrics = false;
  /** Where a listener of its own serves `/metrics` (`--metrics-port`), once it listens. */
  listenerUrl: string | undefined;

  /**
   * @param service what this registry reports on (`validator`, `status`, `terminal`, `hub`, `miner`)
   * @param version the software version
   */
  constructor(
    readonly service: string,
    readonly version: string,
  ) {
    this.gauge({
      name: 'tensormine_build_info',
      help: 'The program that answers: always 1, labelled with the service and its software version',
      labelNames: ['service', 'version'],
    }).set({ service, version }, 1);
    this.counterFrom(
      'tensormine_rate_limited_requests_total',
      'Requests refused with 429 rate_limited, by limit (address: per client address; key: per signing key)',
      () => this.#limiters.map(([limit, counter]) => [{ limit }, counter.refusals] as const),
      ['limit'],
    );
  }

  /** Node's process metrics (CPU, memory, event loop lag, GC; prom-client's defaults), once. */
  collectProcessMetrics(): void {
    if (this.#processMetrics) return;
    this.#processMetrics = true;
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which `promtool check metrics` refuses; their sums over the
    // by-type gauges nodejs_active_handles, nodejs_active_requests, nodejs_active_resources.
    for (const name of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ]) {
      this.registry.removeSingleMetric(name);
    }
  }

  counter<L extends string = string>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
    return new Counter({ ...config, registers: [this.registry] });
  }

  gauge<L extends string = string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
    return new Gauge({ ...config, registers: [this.registry] });
  }

  histogram<L extends string = string>(config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L> {
    return new Histogram({ ...config, registers: [this.registry] });
  }

  /**
   * A counter whose value is a total the service keeps anyway (a plain number, read at scrape
   * time): nothing is added to the service's hot paths. The total must never decrease.
   */
  counterFrom(name: string, help: string, read: () => Reading, labelNames: readonly string[] = []): void {
    this.counter({
      name,
      help,
      labelNames,
      collect() {
        this.reset();
        const value = read();
        if (typeof value === 'number') this.inc(value);
        else for (const [labels, v] of value) this.inc(labels as Record<string, string>, v);
      },
    });
  }

  /** A gauge read at scrape time. */
  gaugeFrom(name: string, help: string, read: () => Reading, labelNames: readonly string[] = []): void {
    this.gauge({
      name,
      help,
      labelNames,
      collect() {
        this.reset();
        const value = read();
        if (typeof value === 'number') this.set(value);
        else for (const [labels, v] of value) this.set(labels as Record<string, string>, v);
      },
    });
  }

  /**
   * A counter of an operation's outcomes (`name` ends in `_total`): `result` is `ok`, or the error
   * code it was refused with (docs/errors.md), or `error` for anything else. Returns the wrapper
   * that runs the operation and counts how it ended.
   */
  outcomes<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
  ): <T>(labels: Readonly<Record<L, string>>, run: () => Promise<T>) => Promise<T> {
    const counter = this.counter({ name, help, labelNames: [...labelNames, 'result'] });
    return async (labels, run) => {
      try {
        const value = await run();
        counter.inc({ ...labels, result: 'ok' } as Record<string, string>);
        return value;
      } catch (error) {
        const result = error instanceof ApiError ? error.code : 'error';
        counter.inc({ ...labels, result } as Record<string, string>);
        throw error;
      }
    };
  }

  /** Runs before every scrape, before any series is read (to take one snapshot for many series). */
  beforeScrape(fn: () => void | Promise<void>): void {
    this.#beforeScrape.push(fn);
  }

  /** Counts the refusals of a rate limiter under `limit` (the kit's per-address limiter is `address`). */
  trackRateLimiter(limit: string, limiter: RefusalCounter): void {
    this.#limiters.push([limit, limiter]);
  }

  /** The exposition (Prometheus text format 0.0.4). */
  async text(): Promise<string> {
    for (const fn of this.#beforeScrape) await fn();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The upper bounds (seconds) of the HTTP histogram's buckets; `+Inf` is implied. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const HTTP_DURATION = 'http_request_duration_seconds';

/** One series of the HTTP histogram (one method, route and status): plain numbers, no labels to hash. */
class HttpSeries {
  /** Observations per bucket, not cumulative; the last one is `+Inf`. */
  readonly counts = new Float64Array(HTTP_BUCKETS.length + 1);
  sum = 0;
  count = 0;

  constructor(readonly labels: Readonly<{ method: string; route: string; status_code: string }>) {}

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  observe(seconds: number): void {
    let i = 0;
    while (i < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }
}

/**
 * The HTTP request metrics of a service (the Fastify plugin observes every answer). A route's
 * labels are resolved once, when the route is registered (`route`); what is left per request is
 * two small map lookups (method, then status) and the observation: a bucket found among 14
 * bounds and three additions. The histogram is kept here, not in a prom-client `Histogram`,
 * whose `observe` validates and hashes the label set on every call (about 2 µs, most of what the
 * metrics cost an answer: docs/benchmarks.md); it is registered on the service's registry as a
 * metric of its own and exposed exactly as prom-client exposes a histogram.
 */
export class HttpMetrics {
  readonly #series: HttpSeries[] = [];

  constructor(metrics: ServiceMetrics) {
    const series = this.#series;
    const metric = {
      name: HTTP_DURATION,
      help: 'Time from a request to its answer, by method, route (the route pattern; (unmatched) for none) and status code; _count is the number of requests',
      type: 'histogram',
      aggregator: 'sum',
      get: () => ({
        name: HTTP_DURATION,
        help: metric.help,
        type: 'histogram',
        aggregator: 'sum',
        // As prom-client writes a histogram: `le` first, then the series' labels (shared).
        values: series.flatMap((one) => {
          let cumulative = 0;
          const buckets = HTTP_BUCKETS.map((le, i) => {
            cumulative += one.counts[i]!;
            return {
              metricName: `${HTTP_DURATION}_bucket`,
              labels: { le },
              sharedLabels: one.labels,
              value: cumulative,
            };
          });
          return [
            ...buckets,
            {
              metricName: `${HTTP_DURATION}_bucket`,
              labels: { le: '+Inf' },
              sharedLabels: one.labels,
              value: one.count,
            },
            { metricName: `${HTTP_DURATION}_sum`, labels: {}, sharedLabels: one.labels, value: one.sum },
            { metricName: `${HTTP_DURATION}_count`, labels: {}, sharedLabels: one.labels, value: one.count },
          ];
        }),
      }),
      // Zeroes every series (each route keeps its series objects).
      reset: () => {
        for (const one of series) one.reset();
      },
    };
    // The registry takes any metric with a name, help, type and get() (prom-client's own
    // metric classes are the typed ones).
    metrics.registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The series of one route pattern (`undefined`: the requests no route matched). */
  route(pattern: string | undefined): RouteSeries {
    return new RouteSeries(pattern ?? '(unmatched)', (labels) => {
      const one = new HttpSeries(labels);
      this.#series.push(one);
      return one;
    });
  }
}

/**
 * The HTTP series of one route: one series per (method, status), made at its first answer and
 * kept. Bounded: the methods Node's parser accepts times the status codes (100-599).
 */
export class RouteSeries {
  readonly #byMethod = new Map<string, Map<number, HttpSeries>>();
  readonly #open: (labels: HttpSeries['labels']) => HttpSeries;

  constructor(
    readonly route: string,
    open: (labels: HttpSeries['labels']) => HttpSeries,
  ) {
    this.#open = open;
  }

  observe(method: string, status: number, seconds: number): void {
    let byStatus = this.#byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.#byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = this.#open({ method, route: this.route, status_code: String(status) });
      byStatus.set(status, series);
    }
    series.observe(seconds);
  }
}

export interface MetricsListener {
  /** The base URL, e.g. http://127.0.0.1:9464 (the exposition is at `${url}/metrics`). */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A listener of its own for `GET /metrics` (and `HEAD`), nothing else: the way to keep the
 * metrics off a public port (`--metrics-port`, bound to 127.0.0.1 unless `--metrics-host` says
 * otherwise), behind `token` when one is set.
 */
export async function startMetricsListener(
  metrics: ServiceMetrics,
  options: { readonly host: string; readonly port: number; readonly token?: string | undefined },
): Promise<MetricsListener> {
  const server = nodeHttp.createServer((req, res) => {
    serveMetrics(metrics, options.token, req, res).catch(() => {
      if (!res.headersSent) sendError(res, 'internal_error', 'the metrics could not be collected');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return { url: `http://${host}:${port}`, port, close: () => closeServer(server) };
}

async function serveMetrics(
  metrics: ServiceMetrics,
  token: string | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  req.resume();
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/metrics')
    return sendError(res, 'not_found', `no route ${req.method} ${path}: try GET /metrics`);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return sendError(res, 'method_not_allowed', `/metrics takes GET, got ${req.method}`);
  }
  const refusal =
    token === undefined ? undefined : bearerRefusal(req.headers.authorization, token, METRICS_GUARD);
  if (refusal !== undefined) return sendApiError(res, refusal);
  const text = await metrics.text();
  res.writeHead(200, {
    'content-type': metrics.contentType,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

function sendApiError(res: ServerResponse, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  sendError(res, error.code, error.message);
}

function sendError(res: ServerResponse, code: Parameters<typeof errorBody>[0], message: string): void {
  const body = errorBody(code, message);
  const text = JSON.stringify(body);
  res.writeHead(body.statusCode, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}
