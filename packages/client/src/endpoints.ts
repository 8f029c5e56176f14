import { InvalidInputError, NetworkError, TensormineError } from './errors.js';
import type { ClientEmitter, FailoverReason } from './events.js';

/**
 * The validators (or service instances) a client talks to, and which one it uses now.
 *
 * The first URL is the primary. Requests go to the primary while it is up; when it fails
 * (network error, timeout, 5xx), they move to the best fallback: the ones that are up, ranked
 * by the latency of their last health probe (unknown latency last), then by their order in the
 * list. A periodic health probe (GET the service's health route, unref'd timer) measures the
 * latencies and brings failed endpoints back; when the primary answers again, requests switch
 * back to it. When every endpoint is down, requests go to the primary anyway.
 */

/** The state of one endpoint, as `client.endpoints()` reports it. */
export interface EndpointState {
  readonly url: string;
  readonly primary: boolean;
  /** True when requests go here now. */
  readonly active: boolean;
  readonly up: boolean;
  /** Round-trip time of the last health probe, smoothed; undefined before the first probe. */
  readonly latencyMs: number | undefined;
  /** Unix ms when it was marked down; undefined while up. */
  readonly downSince: number | undefined;
  /** The code of the error that marked it down. */
  readonly lastError: string | undefined;
}

interface Endpoint {
  readonly url: string;
  readonly index: number;
  up: boolean;
  latencyMs: number | undefined;
  downSince: number | undefined;
  lastError: string | undefined;
}

/** Measures one endpoint: resolves to its round-trip time in ms, rejects when it is not healthy. */
export type Probe = (endpoint: string) => Promise<number>;

export interface EndpointPoolOptions {
  readonly urls: readonly string[];
  readonly events: ClientEmitter;
  readonly probe: Probe;
  /** Milliseconds between health probes; 0 disables them. Only runs with two or more endpoints. */
  readonly healthCheckIntervalMs: number;
  readonly now?: () => number;
}

/** Normalises a base URL: http(s), no trailing slash, no query or fragment. */
export function normalizeBaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new InvalidInputError(
      [{ path: 'url', message: `url: expected an absolute http(s) URL, got ${JSON.stringify(url)}` }],
      {},
      { cause: error },
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InvalidInputError([
      { path: 'url', message: `url: expected an http: or https: URL, got ${JSON.stringify(url)}` },
    ]);
  }
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    throw new InvalidInputError([
      {
        path: 'url',
        message: `url: expected a base URL without query, fragment or credentials, got ${JSON.stringify(`${parsed.origin}${parsed.pathname}`)}`,
      },
    ]);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

export class EndpointPool {
  readonly #endpoints: Endpoint[];
  readonly #events: ClientEmitter;
  readonly #probe: Probe;
  readonly #now: () => number;
  #active: Endpoint;
  #timer: NodeJS.Timeout | undefined;
  #probing: Promise<void> | undefined;
  #closed = false;

  constructor(options: EndpointPoolOptions) {
    if (options.urls.length === 0) {
      throw new InvalidInputError([{ path: 'urls', message: 'urls: expected at least one URL, got none' }]);
    }
    const seen = new Set<string>();
    this.#endpoints = options.urls.map((raw, index) => {
      const url = normalizeBaseUrl(raw);
      if (seen.has(url)) {
        throw new InvalidInputError([
          { path: `urls[${index}]`, message: `urls[${index}]: expected each URL once, got ${url} twice` },
        ]);
      }
      seen.add(url);
      return { url, index, up: true, latencyMs: undefined, downSince: undefined, lastError: undefined };
    });
    this.#events = options.events;
    this.#probe = options.probe;
    this.#now = options.now ?? Date.now;
    this.#active = this.#endpoints[0]!;
    if (this.#endpoints.length > 1 && options.healthCheckIntervalMs > 0) {
      this.#timer = setInterval(() => {
        this.probeAll().catch(() => {});
      }, options.healthCheckIntervalMs);
      this.#timer.unref();
    }
  }

  get size(): number {
    return this.#endpoints.length;
  }

  get urls(): string[] {
    return this.#endpoints.map((e) => e.url);
  }

  /** The base URL requests go to now. */
  active(): string {
    return this.#active.url;
  }

  /** True when `url` is one of the endpoints. */
  has(url: string): boolean {
    return this.#endpoints.some((e) => e.url === url);
  }

  states(): EndpointState[] {
    return this.#endpoints.map((e) => ({
      url: e.url,
      primary: e.index === 0,
      active: e === this.#active,
      up: e.up,
      latencyMs: e.latencyMs,
      downSince: e.downSince,
      lastError: e.lastError,
    }));
  }

  /** A request to `url` failed in a way that says the endpoint is unwell. */
  markDown(url: string, error: TensormineError, reason: FailoverReason = reasonOf(error)): void {
    const endpoint = this.#find(url);
    if (endpoint === undefined) return;
    endpoint.lastError = error.code;
    if (endpoint.up) {
      endpoint.up = false;
      endpoint.downSince = this.#now();
    }
    const previous = this.#active;
    this.#active = this.#rank();
    if (this.#active !== previous) {
      this.#events.safeEmit('failover', { from: previous.url, to: this.#active.url, reason, error });
    }
  }

  /** `url` answered (any HTTP status below 500). */
  markUp(url: string, latencyMs?: number): void {
    const endpoint = this.#find(url);
    if (endpoint === undefined) return;
    if (latencyMs !== undefined) {
      endpoint.latencyMs =
        endpoint.latencyMs === undefined ? latencyMs : Math.round(endpoint.latencyMs * 0.7 + latencyMs * 0.3);
    }
    if (endpoint.up) {
      // A faster fallback may now rank first.
      this.#active = this.#rank();
      return;
    }
    const downForMs = this.#now() - (endpoint.downSince ?? this.#now());
    endpoint.up = true;
    endpoint.downSince = undefined;
    endpoint.lastError = undefined;
    this.#active = this.#rank();
    this.#events.safeEmit('recovered', { endpoint: endpoint.url, active: this.#active.url, downForMs });
  }

  /**
   * Probes every endpoint now (one probe round at a time) and updates health and latency. The
   * results are applied together once every probe has answered, so a failover picks its target
   * knowing every latency.
   */
  probeAll(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#probing ??= Promise.allSettled(this.#endpoints.map((e) => this.#probe(e.url)))
      .then((results) => {
        if (this.#closed) return;
        results.forEach((result, i) => {
          if (result.status === 'fulfilled') this.markUp(this.#endpoints[i]!.url, result.value);
        });
        results.forEach((result, i) => {
          if (result.status === 'fulfilled') return;
          const url = this.#endpoints[i]!.url;
          const failure =
            result.reason instanceof TensormineError
              ? result.reason
              : new NetworkError({ endpoint: url, operationId: 'health probe' }, result.reason, true);
          this.markDown(url, failure, 'probe');
        });
      })
      .finally(() => {
        this.#probing = undefined;
      });
    return this.#probing;
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #find(url: string): Endpoint | undefined {
    return this.#endpoints.find((e) => e.url === url);
  }

  /** The primary when up, else the fastest fallback that is up, else the primary. */
  #rank(): Endpoint {
    const primary = this.#endpoints[0]!;
    if (primary.up) return primary;
    const up = this.#endpoints.filter((e) => e.up);
    if (up.length === 0) return primary;
    return up.sort(
      (a, b) =>
        (a.latencyMs ?? Number.POSITIVE_INFINITY) - (b.latencyMs ?? Number.POSITIVE_INFINITY) ||
        a.index - b.index,
    )[0]!;
  }
}

function reasonOf(error: TensormineError): FailoverReason {
  if (error.code === 'timeout') return 'timeout';
  if (error.code === 'network_error') return 'network_error';
  return 'server_error';
}
