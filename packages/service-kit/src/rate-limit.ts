import { isIP, isIPv4, isIPv6 } from 'node:net';
import { ApiError } from './api-error.js';
import { ConfigError } from './settings.js';

/**
 * Parses the trusted reverse proxies of a service (a setting): a comma-separated list (or a JSON
 * array) of IP addresses, CIDR ranges (`10.0.0.0/8`, `fd00::/8`) or the names `loopback`,
 * `linklocal`, `uniquelocal`. A request arriving from one of them is counted as the client named
 * last in its `X-Forwarded-For` that is not itself trusted (Fastify's `trustProxy`).
 */
export function trustedProxies(value: unknown, where: string): readonly string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : undefined;
  const list = (items ?? [])
    .map((item) => (typeof item === 'string' ? item.trim() : ''))
    .filter((x) => x !== '');
  for (const item of list) {
    const [address = '', bits, extra] = item.split('/');
    const family = isIP(address);
    const valid =
      ['loopback', 'linklocal', 'uniquelocal'].includes(item) ||
      (family !== 0 &&
        extra === undefined &&
        (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))));
    if (!valid) {
      throw new ConfigError(
        `${where}: expected IP addresses or CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8), or loopback, linklocal, uniquelocal; got ${JSON.stringify(item)}`,
      );
    }
  }
  if (items === undefined || list.length === 0) {
    throw new ConfigError(`${where}: expected at least one address or range, got ${JSON.stringify(value)}`);
  }
  return list;
}

/**
 * The key per-address limits count a client under: its IPv4 address (also when written as an
 * IPv4-mapped IPv6 address, `::ffff:a.b.c.d`), or the /64 network of an IPv6 address, since one
 * host commonly holds a whole /64 and could otherwise take any number of per-address slots.
 * Anything else (a test's `localhost`) is its own key.
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped !== null && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail] = ip.toLowerCase().split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  // An embedded IPv4 tail (::a.b.c.d) lies in the last 64 bits: it never changes the prefix.
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

export interface RateLimitRule {
  /** Requests allowed in a burst. */
  readonly burst: number;
  /** Sustained requests per second. */
  readonly perSecond: number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date, Unix ms. */
  at: number;
}

/**
 * Token buckets keyed by client address or public key.
 *
 * Memory is bounded by two generations of buckets: a key is looked up in the current one, then
 * in the previous one (and moved to the current); when the current generation holds
 * `maxKeys / 2` keys it becomes the previous one and the old previous one is dropped. A dropped
 * bucket was not used during a whole generation (at least `maxKeys / 2` other keys were seen
 * since), so at most `maxKeys` buckets are kept, and a request of a known key costs one map
 * lookup and no allocation: this runs on every request.
 */
export class RateLimiter {
  #current = new Map<string, Bucket>();
  #previous = new Map<string, Bucket>();
  readonly #generationSize: number;

  constructor(
    readonly rule: RateLimitRule,
    private readonly now: () => number,
    maxKeys = 50_000,
  ) {
    this.#generationSize = Math.max(1, Math.floor(maxKeys / 2));
  }

  /** How many buckets are kept (at most `maxKeys`). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  /**
   * Takes one token for `key`: undefined when taken, otherwise the `rate_limited` error to answer
   * with (the delay until the next token in its details and `Retry-After`).
   */
  refuse(key: string, what: string): ApiError | undefined {
    const now = this.now();
    let bucket = this.#current.get(key);
    if (bucket === undefined) {
      bucket = this.#previous.get(key);
      if (bucket === undefined) bucket = { tokens: this.rule.burst, at: now };
      else this.#previous.delete(key);
      if (this.#current.size >= this.#generationSize) {
        this.#previous = this.#current;
        this.#current = new Map();
      }
      this.#current.set(key, bucket);
    }
    if (now > bucket.at) {
      bucket.tokens = Math.min(
        this.rule.burst,
        bucket.tokens + ((now - bucket.at) / 1000) * this.rule.perSecond,
      );
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    const retryAfterS = Math.ceil((1 - bucket.tokens) / this.rule.perSecond);
    return new ApiError(
      'rate_limited',
      `too many requests from this ${what}: at most ${this.rule.perSecond}/s with bursts of ${this.rule.burst}; retry in ${retryAfterS} s`,
      { retry_after_s: retryAfterS },
      { 'retry-after': String(retryAfterS) },
    );
  }

  /** Takes one token for `key` or throws `rate_limited` with the delay until the next one. */
  take(key: string, what: string): void {
    const refused = this.refuse(key, what);
    if (refused !== undefined) throw refused;
  }
}
