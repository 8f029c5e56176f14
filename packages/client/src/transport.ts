import { setTimeout as sleep } from 'node:timers/promises';
import {
  EXACTLY_ONCE_OPERATIONS,
  type OperationId,
  ROUTES,
  type RouteDefinition,
  type RouteReply,
  type Service,
} from '@tensormine/protocol';
import { Agent, type Dispatcher } from 'undici';
import { EndpointPool } from './endpoints.js';
import {
  AbortedError,
  type ErrorBody,
  InvalidInputError,
  NetworkError,
  type RequestInfo,
  TensormineError,
  TimeoutError,
  UnexpectedResponseError,
  ValidatorError,
} from './errors.js';
import { ClientEmitter, type RetryEvent } from './events.js';
import { checkInput, type RouteInput, schemaProblems } from './input.js';
import {
  backoffDelay,
  type CallOptions,
  type ClientOptions,
  checkCount,
  DEFAULT_HEALTH_CHECK_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  type ResolvedRetry,
  resolveRetry,
  resolveUrls,
} from './options.js';
import type { Signer } from './signer.js';

/**
 * The HTTP core under every client: one request of one route, with input checks, signing,
 * timeouts, abort, retries of GETs, failover across endpoints and error mapping.
 */

export const USER_AGENT = 'tensormine-client/0.1.0';

/** The health route of each service, which the endpoint probes call. */
const HEALTH_ROUTES: Readonly<Record<Service, OperationId>> = {
  validator: 'getHealth',
  status: 'getStatusHealth',
  terminal: 'getTerminalHealth',
  hub: 'getHubHealth',
  miner: 'getMinerInfo',
};

/** Error codes of a connection that was never established: the request cannot have been seen. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** What one successful call gives back. */
export interface Sent<T> {
  readonly data: T;
  /** The base URL that answered. */
  readonly endpoint: string;
}

export class Transport {
  readonly service: Service;
  readonly events = new ClientEmitter();
  readonly pool: EndpointPool;
  readonly signer: Signer | undefined;
  readonly #adminToken: string | undefined;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #timeoutMs: number;
  readonly #retry: ResolvedRetry;
  readonly #validateInput: boolean;
  readonly #validateResponses: boolean;
  readonly #headers: Readonly<Record<string, string>>;
  #closed = false;
  /** Aborts the open streams at close (an endless response would hold the dispatcher's close). */
  readonly #closing = new AbortController();

  constructor(service: Service, options: ClientOptions) {
    this.service = service;
    const urls = resolveUrls(options);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    checkCount(this.#timeoutMs, 'timeoutMs');
    const interval = options.healthCheckIntervalMs ?? DEFAULT_HEALTH_CHECK_INTERVAL_MS;
    checkCount(interval, 'healthCheckIntervalMs');
    this.#retry = resolveRetry(options.retry);
    this.signer = options.signer;
    this.#adminToken = options.adminToken;
    this.#validateInput = options.validateInput ?? true;
    this.#validateResponses = options.validateResponses ?? true;
    this.#headers = { ...options.headers };
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
    this.pool = new EndpointPool({
      urls,
      events: this.events,
      healthCheckIntervalMs: interval,
      probe: (endpoint) => this.#probe(endpoint),
    });
  }

  /** Stops the health probes and, if the client created it, closes its connection pool. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort(new Error('the client was closed'));
    this.pool.close();
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /** Sends one request of `operationId` and returns the reply and the endpoint that gave it. */
  async send<Id extends OperationId>(
    operationId: Id,
    input: RouteInput,
    options: CallOptions = {},
    probe = false,
  ): Promise<Sent<RouteReply<Id>>> {
    const route = ROUTES[operationId] as RouteDefinition | undefined;
    if (route === undefined || route.service !== this.service) {
      throw new InvalidInputError([
        {
          path: 'operationId',
          message: `operationId: expected an operation of the ${this.service} service, got ${JSON.stringify(operationId)}`,
        },
      ]);
    }
    if (this.#closed) {
      throw new InvalidInputError(
        [{ path: 'client', message: 'client: expected an open client, got a closed one' }],
        {
          operationId,
        },
      );
    }
    const pinned = options.endpoint;
    if (pinned !== undefined && !this.pool.has(pinned)) {
      throw new InvalidInputError(
        [
          {
            path: 'options.endpoint',
            message: `options.endpoint: expected one of ${this.pool.urls.join(', ')}, got ${JSON.stringify(pinned)}`,
          },
        ],
        { operationId },
      );
    }
    const signer = route.auth === 'signed' ? this.#signerFor(route, input, options) : undefined;
    const adminToken = route.auth === 'admin' ? this.#adminTokenFor(route, options) : undefined;
    if (this.#validateInput) checkInput(route, input, { operationId });
    const target = requestTarget(route, input);
    const body = input.body === undefined ? undefined : JSON.stringify(input.body);
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    checkCount(timeoutMs, 'options.timeoutMs');
    // A GET may be retried; so may an exactly-once signed operation, resent with the SAME
    // signature to the SAME validator, which answers a copy with the stored result of the first
    // (it never executes twice); another validator would execute it anew, so it is not asked.
    const exactlyOnce = signer !== undefined && EXACTLY_ONCE_OPERATIONS.has(operationId);
    const idempotent = route.method === 'GET' || exactlyOnce;
    // A submission too (RESENDABLE), after a connection error or a timeout (below).
    const resendable = RESENDABLE.has(operationId);
    const retries = idempotent || resendable ? (options.retries ?? this.#retry.retries) : 0;
    checkCount(retries, 'options.retries');

    let retried = 0;
    let resent = 0;
    let signed: Record<string, string> | undefined;
    let sentTo: string | undefined;
    /** A submission resent after a connection error goes to the same validator (it issued the work). */
    let sticky: string | undefined;
    for (let attempt = 1; ; attempt++) {
      const endpoint = pinned ?? sentTo ?? sticky ?? this.pool.active();
      const url = `${endpoint}${target}`;
      const sentPath = new URL(url);
      const info: RequestInfo = { operationId, method: route.method, url, endpoint };
      if (options.signal?.aborted) throw new AbortedError(info, options.signal.reason);
      const headers: Record<string, string> = {
        'user-agent': USER_AGENT,
        accept: 'application/json',
        ...this.#headers,
        ...options.headers,
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (adminToken !== undefined) headers.authorization = `Bearer ${adminToken}`;
      if (signer !== undefined) {
        // Signed per attempt (a fresh nonce and timestamp, the path exactly as sent), except the
        // resend of an exactly-once operation, which must be the identical request.
        const path = sentPath.pathname + sentPath.search;
        if (signed === undefined || !exactlyOnce) {
          signed = { ...signer.signRequest({ method: route.method, path, body }) };
        }
        Object.assign(headers, signed);
      }
      if (!probe) {
        this.events.safeEmit('request', { operationId, method: route.method, url, endpoint, attempt });
      }
      const started = performance.now();
      try {
        const data = await this.#attempt(route, info, headers, body, timeoutMs, options.signal, {
          started,
          attempt,
          probe,
        });
        if (!probe) this.pool.markUp(endpoint);
        return { data: data as RouteReply<Id>, endpoint };
      } catch (error) {
        if (!(error instanceof TensormineError)) throw error;
        if (error instanceof AbortedError || error instanceof InvalidInputError) throw error;
        const unwell = isUnwell(error);
        // Health probes report to the pool themselves.
        if (!probe && unwell) this.pool.markDown(endpoint, error);
        else if (!probe) this.pool.markUp(endpoint);
        if (exactlyOnce && !(error instanceof NetworkError && !error.requestSent)) sentTo = endpoint;
        const next = pinned ?? sentTo ?? this.pool.active();
        if (idempotent && (unwell || error.status === 429) && retried < retries) {
          retried++;
          const retryAfter = error instanceof ValidatorError ? (error.retryAfterMs ?? 0) : 0;
          const delayMs =
            next !== endpoint ? 0 : Math.max(backoffDelay(retried - 1, this.#retry), retryAfter);
          if (delayMs > this.#retry.maxDelayMs && retryAfter > this.#retry.maxDelayMs) throw error;
          const event = { operationId, method: route.method, url, endpoint, attempt, error, delayMs };
          await this.#retryAfter({ ...event, nextEndpoint: next }, options.signal, info);
          continue;
        }
        // A submission is safe to send again (the validator answers an identical resubmission
        // by the same key with the original acceptance): after a connection error or a
        // timeout (e.g. a dead pooled keep-alive socket after a long solve), to the same
        // validator, with the backoff; a fresh connection is used.
        // Likewise after a 503 service_unavailable (a busy or unreachable database: nothing
        // was written), after its Retry-After.
        const unavailable = error instanceof ValidatorError && error.code === 'service_unavailable';
        if (
          resendable &&
          (error instanceof NetworkError || error instanceof TimeoutError || unavailable) &&
          // Unpinned and refused outright: the failover below sends it to the next validator.
          !(pinned === undefined && error instanceof NetworkError && !error.requestSent) &&
          retried < retries
        ) {
          retried++;
          sticky = endpoint;
          const backoff = retried === 1 ? 0 : backoffDelay(retried - 2, this.#retry);
          const delayMs = unavailable ? Math.max(backoff, error.retryAfterMs ?? 0) : backoff;
          const event = { operationId, method: route.method, url, endpoint, attempt, error, delayMs };
          await this.#retryAfter({ ...event, nextEndpoint: endpoint }, options.signal, info);
          continue;
        }
        // Another POST is sent again only when it provably never left: its connection was refused.
        if (
          !idempotent &&
          error instanceof NetworkError &&
          !error.requestSent &&
          pinned === undefined &&
          next !== endpoint &&
          resent < this.pool.size - 1
        ) {
          resent++;
          continue;
        }
        throw error;
      }
    }
  }

  /**
   * Opens a long-lived streaming GET (an event stream) on the active endpoint, or `endpoint`.
   * Resolves once the 200 headers arrive; `idleTimeoutMs` bounds the wait between chunks. A
   * failure marks the endpoint down, so the next call goes to the next one (failover).
   */
  async stream(
    operationId: OperationId,
    input: RouteInput,
    options: { headers?: Record<string, string>; signal: AbortSignal; idleTimeoutMs: number },
  ): Promise<{ body: AsyncIterable<Uint8Array>; endpoint: string }> {
    const route = ROUTES[operationId] as RouteDefinition;
    const endpoint = this.pool.active();
    const url = `${endpoint}${requestTarget(route, input)}`;
    const info: RequestInfo = { operationId, method: route.method, url, endpoint };
    const target = new URL(url);
    const signal = AbortSignal.any([options.signal, this.#closing.signal]);
    let response: Dispatcher.ResponseData;
    try {
      response = await this.#dispatcher.request({
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'GET',
        headers: {
          'user-agent': USER_AGENT,
          accept: route.produces?.[0] ?? 'application/json',
          ...this.#headers,
          ...options.headers,
        },
        signal,
        headersTimeout: Math.min(this.#timeoutMs || 30_000, 30_000),
        bodyTimeout: options.idleTimeoutMs,
      });
    } catch (error) {
      if (signal.aborted) throw new AbortedError(info, signal.reason);
      const failure = new NetworkError(info, error, !notSent(error));
      this.pool.markDown(endpoint, failure);
      throw failure;
    }
    const status = response.statusCode;
    if (status !== 200) {
      const text = await response.body.text().catch(() => '');
      const contentType = String(response.headers['content-type'] ?? '');
      const retryAfter = response.headers['retry-after'];
      const error = errorFromResponse(
        status,
        text,
        contentType,
        Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        info,
      );
      if (status >= 500) this.pool.markDown(endpoint, error);
      throw error;
    }
    this.pool.markUp(endpoint);
    return { body: response.body, endpoint };
  }

  async #attempt(
    route: RouteDefinition,
    info: RequestInfo,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    meta: { readonly started: number; readonly attempt: number; readonly probe: boolean },
  ): Promise<unknown> {
    const url = new URL(info.url!);
    const controller = new AbortController();
    let timedOut = false;
    // 0: no timeout.
    const timer =
      timeoutMs === 0
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            controller.abort(new Error(`timeout after ${timeoutMs} ms`));
          }, timeoutMs);
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let status: number;
    let text: string;
    let contentType: string;
    let retryAfterHeader: string | undefined;
    try {
      const response = await this.#dispatcher.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: route.method,
        headers,
        body: body ?? null,
        signal: controller.signal,
      });
      status = response.statusCode;
      contentType = String(response.headers['content-type'] ?? '');
      const retryAfter = response.headers['retry-after'];
      retryAfterHeader = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
      text = await response.body.text();
    } catch (error) {
      if (signal?.aborted) throw new AbortedError(info, signal.reason);
      if (timedOut) throw new TimeoutError(info, timeoutMs);
      throw new NetworkError(info, error, !notSent(error));
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    if (!meta.probe) {
      this.events.safeEmit('response', {
        operationId: info.operationId!,
        method: route.method,
        url: info.url!,
        endpoint: info.endpoint!,
        attempt: meta.attempt,
        status,
        durationMs: Math.round((performance.now() - meta.started) * 10) / 10,
      });
    }
    if (status >= 400) throw errorFromResponse(status, text, contentType, retryAfterHeader, info);
    if (status === 302 && route.schema.response[302] !== undefined) return null;
    if (status < 200 || status > 299) {
      throw new UnexpectedResponseError(`expected a 2xx answer, got HTTP ${status}`, info, { status });
    }
    if (route.produces !== undefined) return text;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new UnexpectedResponseError(
        `expected a JSON body, got ${contentType === '' ? 'a body' : contentType} that is not JSON`,
        info,
        { status, cause: error, details: { contentType } },
      );
    }
    const schema = route.schema.response[200];
    if (this.#validateResponses && schema !== undefined) {
      const problems = schemaProblems(schema, data, 'reply');
      if (problems.length > 0) {
        throw new UnexpectedResponseError(
          `the reply does not match the ${route.operationId} schema: ${problems[0]!.message}`,
          info,
          { status, details: { errors: problems } },
        );
      }
    }
    return data;
  }

  #signerFor(route: RouteDefinition, input: RouteInput, options: CallOptions): Signer {
    const signer = options.signer ?? this.signer;
    if (signer === undefined) {
      throw new InvalidInputError(
        [
          {
            path: 'signer',
            message: `signer: ${route.operationId} acts for a public key and must be signed; expected a Signer (createClient({ signer }) or { signer } in the call options), got none`,
          },
        ],
        { operationId: route.operationId },
      );
    }
    const pubkey = (input.body as { pubkey?: unknown } | undefined)?.pubkey;
    if (pubkey !== undefined && pubkey !== signer.publicKeyHex) {
      throw new InvalidInputError(
        [
          {
            path: 'body.pubkey',
            message: `body.pubkey: expected the signer's public key ${signer.publicKeyHex}, got ${JSON.stringify(pubkey)}`,
          },
        ],
        { operationId: route.operationId },
      );
    }
    return signer;
  }

  #adminTokenFor(route: RouteDefinition, options: CallOptions): string {
    const token = options.adminToken ?? this.#adminToken;
    if (token === undefined || token === '') {
      throw new InvalidInputError(
        [
          {
            path: 'adminToken',
            message: `adminToken: ${route.operationId} is an admin operation; expected an admin token (createClient({ adminToken }) or { adminToken } in the call options), got none`,
          },
        ],
        { operationId: route.operationId },
      );
    }
    return token;
  }

  async #probe(endpoint: string): Promise<number> {
    const started = performance.now();
    await this.send(
      HEALTH_ROUTES[this.service],
      {},
      { endpoint, retries: 0, timeoutMs: Math.min(this.#timeoutMs, 5_000) },
      true,
    );
    return Math.round(performance.now() - started);
  }

  /** Says that the request goes again (the `retry` event), then waits its delay. */
  async #retryAfter(event: RetryEvent, signal: AbortSignal | undefined, info: RequestInfo): Promise<void> {
    this.events.safeEmit('retry', event);
    if (event.delayMs > 0) await this.#sleep(event.delayMs, signal, info);
  }

  async #sleep(ms: number, signal: AbortSignal | undefined, info: RequestInfo): Promise<void> {
    try {
      await sleep(ms, undefined, signal ? { signal } : {});
    } catch {
      throw new AbortedError(info, signal?.reason);
    }
  }
}

/** Network errors, timeouts and 5xx say the endpoint is unwell; 4xx say it works. */
/**
 * Submissions the validator answers idempotently (an identical resubmission by the same key
 * gets the original acceptance, docs/sdk.md): resent on a connection error or a timeout.
 */
const RESENDABLE: ReadonlySet<string> = new Set(['submitProof', 'hexSubmit']);

function isUnwell(error: TensormineError): boolean {
  if (error instanceof NetworkError || error instanceof TimeoutError) return true;
  return error.status !== undefined && error.status >= 500;
}

function notSent(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.code === 'string' &&
    typeof v.message === 'string' &&
    (v.details === undefined || (typeof v.details === 'object' && v.details !== null))
  );
}

function errorFromResponse(
  status: number,
  text: string,
  contentType: string,
  retryAfterHeader: string | undefined,
  info: RequestInfo,
): TensormineError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isErrorBody(body)) {
    const seconds = retryAfterHeader !== undefined ? Number(retryAfterHeader) : Number.NaN;
    return new ValidatorError(
      {
        statusCode: status,
        code: body.code,
        error: typeof body.error === 'string' ? body.error : '',
        message: body.message,
        details: body.details,
      },
      info,
      Number.isFinite(seconds) && seconds >= 0 ? { retryAfterMs: seconds * 1000 } : {},
    );
  }
  const kind = contentType === '' ? 'a body' : contentType;
  return new UnexpectedResponseError(`HTTP ${status} with ${kind} that is not an ErrorResponse`, info, {
    status,
    details: { contentType, bodyLength: text.length },
  });
}

/** The path and query string of a request: `/api/hexchain/lattice/1/-1/0`, `/devices?limit=5`. */
export function requestTarget(route: RouteDefinition, input: RouteInput): string {
  const params = (input.params ?? {}) as Record<string, unknown>;
  const path = route.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined || value === null) {
      throw new InvalidInputError(
        [{ path: `params.${name}`, message: `params.${name}: expected a value, got nothing` }],
        { operationId: route.operationId },
      );
    }
    return encodeURIComponent(String(value));
  });
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
    if (value === undefined) continue;
    query.append(key, String(value));
  }
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}
