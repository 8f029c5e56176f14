import { describe, expect, it } from 'vitest';
import { addressKey, RateLimiter, trustedProxies } from '../src/rate-limit.js';

describe('RateLimiter', () => {
  it('allows a burst, then refills at the sustained rate, and says when to retry', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ burst: 3, perSecond: 2 }, () => now);
    expect([1, 2, 3].map(() => limiter.refuse('a', 'address'))).toEqual([undefined, undefined, undefined]);
    const refused = limiter.refuse('a', 'address');
    expect(refused?.code).toBe('rate_limited');
    expect(refused?.details).toEqual({ retry_after_s: 1 });
    expect(refused?.headers).toEqual({ 'retry-after': '1' });
    expect(() => limiter.take('a', 'address')).toThrow(/at most 2\/s with bursts of 3/);
    now += 500; // one token back
    expect(limiter.refuse('a', 'address')).toBeUndefined();
    expect(limiter.refuse('a', 'address')).toBeDefined();
    now += 60_000; // full again, never above the burst
    expect([1, 2, 3].map(() => limiter.refuse('a', 'address'))).toEqual([undefined, undefined, undefined]);
    expect(limiter.refuse('a', 'address')).toBeDefined();
    // Another key has its own bucket.
    expect(limiter.refuse('b', 'address')).toBeUndefined();
  });

  it('a clock stepping back gives no tokens, and its time is not counted twice', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ burst: 1, perSecond: 1 }, () => now);
    expect(limiter.refuse('a', 'address')).toBeUndefined();
    now -= 10_000;
    expect(limiter.refuse('a', 'address')).toBeDefined();
    now += 10_500; // still half a second short of the next token
    expect(limiter.refuse('a', 'address')).toBeDefined();
    now += 500;
    expect(limiter.refuse('a', 'address')).toBeUndefined();
  });

  it('keeps at most maxKeys buckets, and keeps the buckets still in use', () => {
    const limiter = new RateLimiter({ burst: 2, perSecond: 0.001 }, () => 1_000_000, 100);
    expect(limiter.refuse('busy', 'address')).toBeUndefined();
    for (let i = 0; i < 10_000; i++) {
      limiter.refuse(`k${i}`, 'address');
      if (i % 40 === 0) limiter.refuse('busy', 'address'); // refused, but seen: kept
      expect(limiter.size).toBeLessThanOrEqual(100);
    }
    // 'busy' was never forgotten (a forgotten bucket would come back full and allow one more).
    expect(limiter.refuse('busy', 'address')).toBeDefined();
    // A key unused for a whole generation was dropped: it starts again with a full bucket.
    expect(limiter.refuse('k0', 'address')).toBeUndefined();
  });
});

describe('addressKey and trustedProxies', () => {
  it('counts an IPv6 /64 as one address and an IPv4-mapped address as its IPv4', () => {
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:DB8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('parses addresses, CIDR ranges and names, and refuses anything else', () => {
    expect(trustedProxies('127.0.0.1, 10.0.0.0/8,fd00::/8,loopback', 'x')).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      'fd00::/8',
      'loopback',
    ]);
    expect(trustedProxies(['::1'], 'x')).toEqual(['::1']);
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.1/8/1', '', ' , ']) {
      expect(() => trustedProxies(bad, 'trustProxy')).toThrow(/trustProxy: expected/);
    }
  });
});
