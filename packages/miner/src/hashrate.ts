/**
 * Hashrate over sliding windows, xmrig style: the engine samples a cumulative hash counter
 * (once a second) and a window's rate is the counter's increase over the last `window`
 * milliseconds. A window reports `undefined` (shown as `n/a`) until the samples span it, so a
 * miner that just started shows a 10 s rate after 10 s and a 15 min rate after 15 minutes.
 * `max` is the highest 10 s rate seen. `warmup` is the rate over all samples so far (from the
 * second sample on), for the first seconds when no window is full yet: shown instead of `n/a`
 * while warming up. The history holds an hour, so that the control API can report AxeOS's
 * 10 min and 1 h windows too.
 */

/** Rates in hashes (nonce iterations) per second; undefined until the window has data. */
export interface HashrateWindows {
  readonly '10s': number | undefined;
  readonly '60s': number | undefined;
  readonly '15m': number | undefined;
  /** The AxeOS windows of the control API (hashRate_10m, hashRate_1h). */
  readonly '10m': number | undefined;
  readonly '1h': number | undefined;
  readonly max: number | undefined;
  /** The rate over every sample so far (the history at most); undefined before two samples. */
  readonly warmup?: number | undefined;
}

export const WINDOW_MS = {
  '10s': 10_000,
  '60s': 60_000,
  '15m': 900_000,
  '10m': 600_000,
  '1h': 3_600_000,
} as const;

export interface HashrateMeterOptions {
  /** How much history to keep, ms (default 1 hour: the control API reports 1 h and 10 min). */
  readonly historyMs?: number;
  /** The expected interval between samples, ms (default 1000), sizes the buffer. */
  readonly intervalMs?: number;
}

/** A ring buffer of (time, cumulative count) samples. */
export class HashrateMeter {
  private readonly times: Float64Array;
  private readonly counts: Float64Array;
  private readonly historyMs: number;
  private start = 0;
  private size = 0;
  private best: number | undefined;

  constructor(options: HashrateMeterOptions = {}) {
    this.historyMs = options.historyMs ?? 3_600_000;
    const capacity = Math.ceil(this.historyMs / (options.intervalMs ?? 1000)) + 2;
    this.times = new Float64Array(capacity);
    this.counts = new Float64Array(capacity);
  }

  /** Records the cumulative count at time `nowMs` (times must not decrease). */
  record(nowMs: number, count: number): void {
    const cap = this.times.length;
    if (this.size > 0 && nowMs < this.times[(this.start + this.size - 1) % cap]!) return;
    if (this.size === cap) {
      this.start = (this.start + 1) % cap;
      this.size--;
    }
    const at = (this.start + this.size) % cap;
    this.times[at] = nowMs;
    this.counts[at] = count;
    this.size++;
    // Drop what is older than the history, keeping one sample at or before its start.
    while (this.size > 2 && this.times[(this.start + 1) % cap]! <= nowMs - this.historyMs) {
      this.start = (this.start + 1) % cap;
      this.size--;
    }
    const r10 = this.rate(WINDOW_MS['10s']);
    if (r10 !== undefined && (this.best === undefined || r10 > this.best)) this.best = r10;
  }

  /**
   * The rate over the last `windowMs`: (newest count - count at the newest sample at least
   * windowMs older) / elapsed; undefined when no sample is that old.
   */
  rate(windowMs: number): number | undefined {
    if (this.size < 2) return undefined;
    const cap = this.times.length;
    const last = (this.start + this.size - 1) % cap;
    const t = this.times[last]!;
    const from = t - windowMs;
    // Binary search for the newest sample with time <= from.
    let lo = 0;
    let hi = this.size - 1;
    if (this.times[this.start]! > from) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.times[(this.start + mid) % cap]! <= from) lo = mid;
      else hi = mid - 1;
    }
    const old = (this.start + lo) % cap;
    const dt = t - this.times[old]!;
    if (dt <= 0) return undefined;
    return ((this.counts[last]! - this.counts[old]!) * 1000) / dt;
  }

  /** The standard windows and the maximum. */
  windows(): HashrateWindows {
    return {
      '10s': this.rate(WINDOW_MS['10s']),
      '60s': this.rate(WINDOW_MS['60s']),
      '15m': this.rate(WINDOW_MS['15m']),
      '10m': this.rate(WINDOW_MS['10m']),
      '1h': this.rate(WINDOW_MS['1h']),
      max: this.best,
      warmup: this.rate(this.spanMs()),
    };
  }

  /** How long the samples span, ms. */
  private spanMs(): number {
    if (this.size < 2) return 0;
    const cap = this.times.length;
    return this.times[(this.start + this.size - 1) % cap]! - this.times[this.start]!;
  }

  /** The highest 10 s rate seen. */
  get max(): number | undefined {
    return this.best;
  }

  /** The newest cumulative count (0 before any sample). */
  get total(): number {
    return this.size === 0 ? 0 : this.counts[(this.start + this.size - 1) % this.times.length]!;
  }
}

/** Sums windows (each window: the sum of the defined rates, undefined when none is). */
export function sumWindows(list: readonly HashrateWindows[]): HashrateWindows {
  const sum = (key: keyof HashrateWindows): number | undefined => {
    let total: number | undefined;
    for (const w of list) {
      const v = w[key];
      if (v !== undefined) total = (total ?? 0) + v;
    }
    return total;
  };
  return {
    '10s': sum('10s'),
    '60s': sum('60s'),
    '15m': sum('15m'),
    '10m': sum('10m'),
    '1h': sum('1h'),
    max: sum('max'),
    warmup: sum('warmup'),
  };
}

/** Formats a rate with its unit (H/s, kH/s, MH/s, GH/s), or `n/a`. */
export function formatHashrate(rate: number | undefined): string {
  if (rate === undefined || !Number.isFinite(rate)) return 'n/a';
  if (rate >= 1e9) return `${(rate / 1e9).toFixed(2)} GH/s`;
  if (rate >= 1e6) return `${(rate / 1e6).toFixed(2)} MH/s`;
  if (rate >= 1e3) return `${(rate / 1e3).toFixed(2)} kH/s`;
  return `${rate.toFixed(1)} H/s`;
}
