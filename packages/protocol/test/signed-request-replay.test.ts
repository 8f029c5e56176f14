import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkRequestTimestamp, DEFAULT_REPLAY_CACHE_ENTRIES, ReplayCache } from '../src/replay-cache.js';

const W = 60_000;
const T = 1_700_000_000_000;
const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
const nonce = (i: number) => i.toString(16).padStart(32, '0');

/** A clock the test moves by hand. */
function fakeClock(start: number) {
  let time = start;
  return {
    now: () => time,
    set: (t: number) => {
      time = t;
    },
  };
}

describe('checkRequestTimestamp', () => {
  it('accepts |now - timestamp| <= 60 000 ms and rejects beyond', () => {
    expect(checkRequestTimestamp(T, T + W)).toEqual({ ok: true });
    expect(checkRequestTimestamp(T, T - W)).toEqual({ ok: true });
    expect(checkRequestTimestamp(T, T + W + 1)).toMatchObject({ ok: false, code: 'request_expired' });
    expect(checkRequestTimestamp(T, T - W - 1)).toMatchObject({ ok: false, code: 'request_expired' });
  });
});

describe('ReplayCache', () => {
  it('holds 100 000 pairs by default', () => {
    expect(new ReplayCache().maxEntries).toBe(DEFAULT_REPLAY_CACHE_ENTRIES);
    expect(DEFAULT_REPLAY_CACHE_ENTRIES).toBe(100_000);
  });

  it('rejects a bound that is not a positive integer', () => {
    expect(() => new ReplayCache({ maxEntries: 0 })).toThrow(
      new RangeError('maxEntries: expected a positive integer, got 0'),
    );
    expect(() => new ReplayCache({ maxEntries: 2.5 })).toThrow(
      new RangeError('maxEntries: expected a positive integer, got 2.5'),
    );
  });

  it('accepts a (key, nonce) pair once, and the same nonce for another key', () => {
    const cache = new ReplayCache();
    expect(cache.check(KEY_A, nonce(1), T, T)).toEqual({ ok: true });
    expect(cache.check(KEY_A, nonce(1), T, T + 5)).toMatchObject({ ok: false, code: 'request_replayed' });
    expect(cache.check(KEY_B, nonce(1), T, T + 5)).toEqual({ ok: true });
    expect(cache.check(KEY_A, nonce(2), T, T + 5)).toEqual({ ok: true });
    expect(cache.size).toBe(3);
  });

  it('treats hex case as the same pair', () => {
    const cache = new ReplayCache();
    expect(cache.check(KEY_A, 'ab'.repeat(16), T, T).ok).toBe(true);
    expect(cache.check(KEY_A.toUpperCase(), 'AB'.repeat(16), T, T)).toMatchObject({
      code: 'request_replayed',
    });
  });

  it('remembers a pair until the window of its timestamp closes, then the request is expired', () => {
    const clock = fakeClock(T);
    const cache = new ReplayCache({ clock: clock.now });
    expect(cache.check(KEY_A, nonce(1), T)).toEqual({ ok: true });
    clock.set(T + W);
    expect(cache.check(KEY_A, nonce(1), T)).toMatchObject({ ok: false, code: 'request_replayed' });
    clock.set(T + W + 1);
    expect(cache.check(KEY_A, nonce(1), T)).toMatchObject({ ok: false, code: 'request_expired' });
  });

  it('keys the expiry on the request timestamp, not on the arrival time', () => {
    const clock = fakeClock(T);
    const cache = new ReplayCache({ clock: clock.now });
    // Signed 50 s in the future (inside the window): still acceptable until T + 50 s + 60 s.
    expect(cache.check(KEY_A, nonce(1), T + 50_000)).toEqual({ ok: true });
    clock.set(T + 50_000 + W);
    expect(cache.check(KEY_A, nonce(1), T + 50_000)).toMatchObject({ code: 'request_replayed' });
  });

  it('evicts expired pairs as time passes', () => {
    const clock = fakeClock(T);
    const cache = new ReplayCache({ clock: clock.now });
    for (let i = 0; i < 10; i++) cache.check(KEY_A, nonce(i), T + i * 1_000);
    expect(cache.size).toBe(10);
    clock.set(T + 4_500 + W);
    expect(cache.check(KEY_B, nonce(0), T + 4_500 + W)).toEqual({ ok: true });
    expect(cache.size).toBe(5 + 1);
    clock.set(T + 100 * W);
    expect(cache.check(KEY_B, nonce(1), T + 100 * W)).toEqual({ ok: true });
    expect(cache.size).toBe(1);
  });

  it('does not revive a forgotten pair when the clock steps back', () => {
    const cache = new ReplayCache();
    expect(cache.check(KEY_A, nonce(1), T, T).ok).toBe(true);
    // Another request at T + W + 5 evicts the first pair ...
    expect(cache.check(KEY_B, nonce(9), T + W + 5, T + W + 5).ok).toBe(true);
    expect(cache.size).toBe(1);
    // ... and after an NTP step back of 10 ms the first request, inside the window again, must still fail.
    expect(cache.check(KEY_A, nonce(1), T, T + W - 5)).toEqual({
      ok: false,
      code: 'request_expired',
      message:
        'x-tm-timestamp 1700000000000 is 60005 ms behind the validator clock (1700000060005); ' +
        'at most 60000 ms of skew is accepted',
      details: { timestamp: T, now: T + W + 5, skew_ms: -(W + 5), window_ms: W },
    });
  });

  it('refuses new pairs when full of live ones instead of forgetting any, and says when to retry', () => {
    const cache = new ReplayCache({ maxEntries: 3 });
    for (let i = 0; i < 3; i++) expect(cache.check(KEY_A, nonce(i), T + i, T + 2).ok).toBe(true);
    expect(cache.check(KEY_B, nonce(0), T + 2, T + 2)).toEqual({
      ok: false,
      code: 'rate_limited',
      message:
        'too many signed requests: the validator remembers at most 3 nonces inside the replay window; retry in 59999 ms',
      details: { retry_after_ms: 59_999 },
    });
    // Nothing live was forgotten: every accepted pair is still a replay.
    for (let i = 0; i < 3; i++) {
      expect(cache.check(KEY_A, nonce(i), T + i, T + 3)).toMatchObject({ code: 'request_replayed' });
    }
    expect(cache.size).toBe(3);
    // Once the oldest pair's window closed, there is room again.
    expect(cache.check(KEY_B, nonce(0), T + W + 1, T + W + 1)).toEqual({ ok: true });
    expect(cache.size).toBe(3);
  });

  it('never holds more than maxEntries pairs under a sustained flood', () => {
    const cache = new ReplayCache({ maxEntries: 500 });
    let accepted = 0;
    let limited = 0;
    let largest = 0;
    for (let i = 0; i < 20_000; i++) {
      const now = T + i * 20; // 50 requests a second, 3000 per window
      const verdict = cache.check(KEY_A, nonce(i), now, now);
      if (verdict.ok) accepted++;
      else if (verdict.code === 'rate_limited') limited++;
      largest = Math.max(largest, cache.size);
    }
    expect(largest).toBe(500);
    expect(accepted + limited).toBe(20_000);
    expect(accepted).toBeGreaterThan(500);
    expect(limited).toBeGreaterThan(0);
  });

  it('agrees with a simple model on any sequence of requests', () => {
    const step = fc.record({
      key: fc.constantFrom(KEY_A, KEY_B),
      nonce: fc.integer({ min: 0, max: 6 }),
      skew: fc.integer({ min: -70_000, max: 70_000 }),
      advance: fc.integer({ min: -5_000, max: 40_000 }),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(step, { maxLength: 60 }), (maxEntries, steps) => {
        const cache = new ReplayCache({ maxEntries });
        const model = new Map<string, number>();
        let now = T;
        let latest = Number.NEGATIVE_INFINITY;
        for (const s of steps) {
          now += s.advance;
          const timestamp = now + s.skew;
          latest = Math.max(latest, now);
          const key = `${s.key}:${nonce(s.nonce)}`;
          let expected: string;
          if (Math.abs(timestamp - latest) > W) expected = 'request_expired';
          else {
            for (const [k, expiry] of model) if (expiry < latest) model.delete(k);
            if (model.has(key)) expected = 'request_replayed';
            else if (model.size >= maxEntries) expected = 'rate_limited';
            else {
              model.set(key, timestamp + W);
              expected = 'ok';
            }
          }
          const verdict = cache.check(s.key, nonce(s.nonce), timestamp, now);
          expect(verdict.ok ? 'ok' : verdict.code).toBe(expected);
          expect(cache.size).toBe(model.size);
        }
      }),
    );
  });
});
