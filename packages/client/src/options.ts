import type { Dispatcher } from 'undici';
import { InvalidInputError } from './errors.js';
import type { Signer } from './signer.js';

/**
 * Retries of idempotent requests: GETs, the submissions (the validator answers an identical
 * resubmission with the original acceptance), and the exactly-once signed operations of the
 * economy (transfer, stake, swap execute...: EXACTLY_ONCE_OPERATIONS), which are resent with
 * the same signature to the same validator. Other POSTs are never retried.
 */
export interface RetryOptions {
  /** How many times such a request is tried again after a network error, a timeout, a 5xx or a 429 (default 2). */
  readonly retries?: number;
  /** The first backoff, doubled at each retry (default 200 ms). */
  readonly baseDelayMs?: number;
  /** The largest backoff (default 5000 ms). */
  readonly maxDelayMs?: number;
}

/** Options of every client (validator, status proxy, terminal backend, hub). */
export interface ClientOptions {
  /** The base URL of the service, e.g. `http://127.0.0.1:8420`. Give `url` or `urls`. */
  readonly url?: string;
  /** Several base URLs, the primary first: requests fail over to the others (see docs/sdk.md). */
  readonly urls?: readonly string[];
  /** Signs signed requests, proofs and blocks. Required for operations that act for a key. */
  readonly signer?: Signer;
  /** The admin bearer token, for the admin operations. Never logged or shown. */
  readonly adminToken?: string;
  /**
   * The undici dispatcher to send with (a MockAgent in tests, a ProxyAgent, your own Agent).
   * Default: a keep-alive Agent owned by the client and closed by `close()`.
   */
  readonly dispatcher?: Dispatcher;
  /** Milliseconds one attempt may take, answer included (default 10 000; 0: no limit). */
  readonly timeoutMs?: number;
  /** Retry policy of GETs, or false for none. */
  readonly retry?: RetryOptions | false;
  /** Milliseconds between health probes of the endpoints (default 15 000; 0: none). */
  readonly healthCheckIntervalMs?: number;
  /** Check bodies, queries and path parameters before sending (default true). */
  readonly validateInput?: boolean;
  /** Check replies against the route's schema (default true): a mismatch is an UnexpectedResponseError. */
  readonly validateResponses?: boolean;
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Options of one call. */
export interface CallOptions {
  /** Cancels the call (and its retries and backoff waits): AbortedError. */
  readonly signal?: AbortSignal;
  /** Milliseconds per attempt, overriding the client's. */
  readonly timeoutMs?: number;
  /** Retries of this GET, submission or exactly-once operation, overriding the client's (0: none). Ignored for other POSTs. */
  readonly retries?: number;
  /** Send to this base URL only (no failover): one of the client's URLs, e.g. `work.endpoint`. */
  readonly endpoint?: string;
  /** Sign with this signer instead of the client's. */
  readonly signer?: Signer;
  /** Use this admin token instead of the client's. */
  readonly adminToken?: string;
  /** Extra headers for this call. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ResolvedRetry {
  readonly retries: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_HEALTH_CHECK_INTERVAL_MS = 15_000;
export const DEFAULT_RETRY: ResolvedRetry = { retries: 2, baseDelayMs: 200, maxDelayMs: 5_000 };

export function resolveUrls(options: ClientOptions): readonly string[] {
  if (options.url !== undefined && options.urls !== undefined) {
    throw new InvalidInputError([{ path: 'url', message: 'url: expected either url or urls, got both' }]);
  }
  const urls = options.urls ?? (options.url === undefined ? [] : [options.url]);
  if (urls.length === 0) {
    throw new InvalidInputError([
      { path: 'url', message: 'url: expected a base URL (url or urls), got none' },
    ]);
  }
  return urls;
}

export function resolveRetry(retry: RetryOptions | false | undefined): ResolvedRetry {
  if (retry === false) return { ...DEFAULT_RETRY, retries: 0 };
  const resolved = { ...DEFAULT_RETRY, ...retry };
  checkCount(resolved.retries, 'retry.retries');
  checkCount(resolved.baseDelayMs, 'retry.baseDelayMs');
  checkCount(resolved.maxDelayMs, 'retry.maxDelayMs');
  return resolved;
}

export function checkCount(value: unknown, path: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidInputError([
      { path, message: `${path}: expected a non-negative integer, got ${JSON.stringify(value)}` },
    ]);
  }
}

/** Exponential backoff with equal jitter: a random delay in [d/2, d], d = min(max, base * 2^retry). */
export function backoffDelay(
  retry: number,
  policy: ResolvedRetry,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
