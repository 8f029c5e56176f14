import { OK, reject, type Verdict } from './error-codes.js';

/**
 * The replay window of signed requests: a request is acceptable while
 * `|now - timestamp| <= REQUEST_REPLAY_WINDOW_MS`, and its (public key, nonce) pair is remembered
 * for exactly that long, so that a request is accepted at most once.
 */
export const REQUEST_REPLAY_WINDOW_MS = 60_000;

/** The default bound of a {@link ReplayCache}: live (public key, nonce) pairs it remembers. */
export const DEFAULT_REPLAY_CACHE_ENTRIES = 100_000;

/**
 * Checks a signed request's timestamp against the clock: accepted when
 * `|now - timestamp| <= REQUEST_REPLAY_WINDOW_MS`, otherwise `request_expired` with the skew.
 */
export function checkRequestTimestamp(timestamp: number, now: number): Verdict {
  const skew = timestamp - now;
  if (Math.abs(skew) <= REQUEST_REPLAY_WINDOW_MS) return OK;
  const direction = skew < 0 ? 'behind' : 'ahead of';
  // A client that sends seconds instead of milliseconds is about 1.7e12 ms behind: say so.
  const hint =
    Math.abs(timestamp * 1000 - now) <= REQUEST_REPLAY_WINDOW_MS
      ? ' (it looks like seconds; it must be milliseconds)'
      : '';
  return reject(
    'request_expired',
    `x-tm-timestamp ${timestamp} is ${Math.abs(skew)} ms ${direction} the validator clock (${now})${hint}; ` +
      `at most ${REQUEST_REPLAY_WINDOW_MS} ms of skew is accepted`,
    { timestamp, now, skew_ms: skew, window_ms: REQUEST_REPLAY_WINDOW_MS },
  );
}

/** The `request_replayed` rejection of a (public key, nonce) pair already accepted. */
export function replayedVerdict(publicKey: string, nonce: string): Extract<Verdict, { ok: false }> {
  return reject(
    'request_replayed',
    `x-tm-nonce ${nonce} was already accepted for this public key inside the replay window; ` +
      'sign each request with a fresh random nonce',
    { public_key: publicKey, nonce },
  ) as Extract<Verdict, { ok: false }>;
}

/** Options of {@link ReplayCache}. */
export interface ReplayCacheOptions {
  /** The most live (public key, nonce) pairs remembered at once. Default 100 000. */
  readonly maxEntries?: number;
  /** The clock used when `check` is given no `now` (Unix ms). Default `Date.now`. */
  readonly clock?: () => number;
}

interface Entry {
  readonly expiry: number;
  readonly key: string;
}

/**
 * Remembers the (public key, nonce) pairs of accepted signed requests for as long as their
 * timestamps are inside the replay window (until `timestamp + REQUEST_REPLAY_WINDOW_MS`), so that
 * each pair is accepted once. Memory is bounded by `maxEntries`; expired pairs are evicted on every
 * `check`, in O(log n) each (a min-heap ordered by expiry beside a map for lookups).
 */
export class ReplayCache {
  /** The bound given to the constructor. */
  readonly maxEntries: number;
  readonly #clock: () => number;
  readonly #expiryByKey = new Map<string, number>();
  /** Min-heap by expiry; exactly one entry per key in #expiryByKey. */
  readonly #heap: Entry[] = [];
  /** The latest `now` seen: a clock stepping backwards must not revive evicted pairs. */
  #latest = Number.NEGATIVE_INFINITY;

  constructor(options: ReplayCacheOptions = {}) {
    const { maxEntries = DEFAULT_REPLAY_CACHE_ENTRIES, clock = Date.now } = options;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`maxEntries: expected a positive integer, got ${String(maxEntries)}`);
    }
    this.maxEntries = maxEntries;
    this.#clock = clock;
  }

  /** The number of pairs currently remembered (expired ones are dropped on the next `check`). */
  get size(): number {
    return this.#expiryByKey.size;
  }

  /**
   * Accepts and records the pair (publicKey, nonce) of a request signed at `timestamp`, or rejects:
   * `request_expired` when the timestamp is outside the window, `request_replayed` when the pair was
   * already accepted within the window, `rate_limited` when the cache is full of live pairs.
   * Call it only after the request's signature verified, so nobody can burn another key's nonces.
   * @param publicKey the signer's public key (hex); @param nonce the request nonce (hex).
   */
  check(publicKey: string, nonce: string, timestamp: number, now: number = this.#clock()): Verdict {
    if (!Number.isSafeInteger(timestamp)) {
      throw new RangeError(`timestamp: expected a safe integer of Unix ms, got ${String(timestamp)}`);
    }
    // Pairs whose expiry is before `#latest` may already be forgotten; judging the timestamp
    // against the latest clock reading keeps them rejected as expired if the clock steps back.
    this.#latest = Math.max(this.#latest, now);
    const window = checkRequestTimestamp(timestamp, this.#latest);
    if (!window.ok) return window;
    this.#evictExpired(this.#latest);

    const key = `${publicKey.toLowerCase()}:${nonce.toLowerCase()}`;
    if (this.#expiryByKey.has(key)) return replayedVerdict(publicKey, nonce);
    if (this.#expiryByKey.size >= this.maxEntries) {
      // Full of live pairs. Refusing the new request is the safe choice: forgetting a live pair
      // instead would let anyone who can flood the cache (keys are free, so any client can sign
      // many requests) push a victim's nonce out and then replay the victim's captured request
      // while it is still inside the window. Refusing costs availability for a short time (until
      // the oldest pair expires) and never safety.
      const retryAfter = this.#heap[0]!.expiry - this.#latest + 1;
      return reject(
        'rate_limited',
        `too many signed requests: the validator remembers at most ${this.maxEntries} nonces inside the replay window; retry in ${retryAfter} ms`,
        { retry_after_ms: retryAfter },
      );
    }
    const expiry = timestamp + REQUEST_REPLAY_WINDOW_MS;
    this.#expiryByKey.set(key, expiry);
    this.#push({ expiry, key });
    return OK;
  }

  /** Forgets the pairs whose window closed before `now`. */
  #evictExpired(now: number): void {
    while (this.#heap.length > 0 && this.#heap[0]!.expiry < now) {
      this.#expiryByKey.delete(this.#pop().key);
    }
  }

  #push(entry: Entry): void {
    const heap = this.#heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.expiry <= entry.expiry) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  #pop(): Entry {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.expiry < heap[left]!.expiry ? right : left;
      if (heap[child]!.expiry >= last.expiry) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
