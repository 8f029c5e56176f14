import { describe, expect, test } from 'vitest';
import { formatHashrate, HashrateMeter, sumWindows } from '../src/hashrate.js';

/** Records `rate` hashes per second for `seconds` seconds, one sample a second, from `t0`. */
function feed(meter: HashrateMeter, from: { t: number; count: number }, seconds: number, rate: number) {
  for (let i = 1; i <= seconds; i++) meter.record(from.t + i * 1000, from.count + i * rate);
  return { t: from.t + seconds * 1000, count: from.count + seconds * rate };
}

describe('HashrateMeter', () => {
  test('a window is undefined until the samples span it', () => {
    const meter = new HashrateMeter();
    meter.record(0, 0);
    expect(meter.windows()).toEqual({
      '10s': undefined,
      '60s': undefined,
      '15m': undefined,
      '10m': undefined,
      '1h': undefined,
      max: undefined,
    });
    let at = feed(meter, { t: 0, count: 0 }, 9, 1000);
    expect(meter.rate(10_000)).toBeUndefined();
    at = feed(meter, at, 1, 1000);
    expect(meter.windows()['10s']).toBe(1000);
    expect(meter.windows()['60s']).toBeUndefined();
    at = feed(meter, at, 50, 1000);
    expect(meter.windows()['60s']).toBe(1000);
    feed(meter, at, 840, 1000);
    expect(meter.windows()['15m']).toBe(1000);
    expect(meter.windows()['10m']).toBe(1000);
    expect(meter.windows()['1h']).toBeUndefined();
  });

  test('each window averages its own span; max is the best 10 s rate', () => {
    const meter = new HashrateMeter();
    meter.record(0, 0);
    let at = feed(meter, { t: 0, count: 0 }, 50, 2000);
    at = feed(meter, at, 10, 500);
    const w = meter.windows();
    expect(w['10s']).toBe(500);
    expect(w['60s']).toBe((50 * 2000 + 10 * 500) / 60);
    expect(w.max).toBe(2000);
    // Paused: the counter stops, the rates fall to 0, the maximum stays.
    feed(meter, at, 10, 0);
    expect(meter.windows()['10s']).toBe(0);
    expect(meter.max).toBe(2000);
  });

  test('keeps an hour of history in a ring buffer', () => {
    const meter = new HashrateMeter({ historyMs: 60_000 });
    meter.record(0, 0);
    feed(meter, { t: 0, count: 0 }, 600, 10);
    expect(meter.rate(60_000)).toBe(10);
    expect(meter.rate(120_000)).toBeUndefined();
    expect(meter.total).toBe(6000);
  });

  test('ignores a sample older than the last one', () => {
    const meter = new HashrateMeter();
    meter.record(10_000, 100);
    meter.record(5_000, 50);
    expect(meter.total).toBe(100);
  });

  test('sumWindows adds the defined rates; formatHashrate picks the unit', () => {
    const a = { '10s': 1, '60s': undefined, '15m': undefined, '10m': undefined, '1h': undefined, max: 2 };
    const b = { '10s': 3, '60s': 4, '15m': undefined, '10m': undefined, '1h': undefined, max: 5 };
    expect(sumWindows([a, b])).toEqual({
      '10s': 4,
      '60s': 4,
      '15m': undefined,
      '10m': undefined,
      '1h': undefined,
      max: 7,
    });
    expect([undefined, 12.34, 4_560, 7_890_000, 1.5e9].map(formatHashrate)).toEqual([
      'n/a',
      '12.3 H/s',
      '4.56 kH/s',
      '7.89 MH/s',
      '1.50 GH/s',
    ]);
  });
});
