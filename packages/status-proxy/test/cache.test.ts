import { describe, expect, it } from 'vitest';
import { type CachedAnswer, cacheable, ReadCache } from '../src/cache.js';

const answer = (status: number, body = `${status}`): CachedAnswer => ({ status, body });

describe('ReadCache', () => {
  it('keeps answers but never a "not now" (429, 408, 5xx)', async () => {
    expect([200, 400, 404, 429, 408, 500, 502, 503].map(cacheable)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
    const cache = new ReadCache(60_000);
    let loads = 0;
    for (const status of [429, 503, 502, 200, 200]) {
      await cache.get('k', async () => {
        loads++;
        return answer(status);
      });
    }
    // 429, 503 and 502 were passed on and not kept; the first 200 was kept.
    expect(loads).toBe(4);
    expect(cache.peek('k')?.status).toBe(200);
  });

  it('asks admit only for a request that would load, and keeps nothing it refuses', async () => {
    const cache = new ReadCache(60_000);
    let admits = 0;
    let release: (a: CachedAnswer) => void = () => {};
    const slow = cache.get(
      'a',
      () => new Promise<CachedAnswer>((resolve) => (release = resolve)),
      () => {
        admits++;
        return undefined;
      },
    );
    // Joins the load in flight: not admitted again.
    const joined = cache.get(
      'a',
      async () => answer(500),
      () => {
        admits++;
        return answer(429);
      },
    );
    release(answer(200, 'a'));
    expect((await slow).body).toBe('a');
    expect((await joined).body).toBe('a');
    expect(admits).toBe(1);
    const refused = await cache.get(
      'b',
      async () => answer(200),
      () => answer(429, 'budget'),
    );
    expect(refused.body).toBe('budget');
    expect(cache.peek('b')).toBeUndefined();
  });

  it('drops the oldest entry beyond its size, not everything', async () => {
    const cache = new ReadCache(60_000, 3);
    for (const key of ['a', 'b', 'c', 'd']) await cache.get(key, async () => answer(200, key));
    expect(cache.size).toBe(3);
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('d')?.body).toBe('d');
  });
});
