import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startNetwork } from './helpers.js';

/**
 * The status proxy on an open network (issue 21): its own per-address rate limits, a budget of
 * validator requests per address and in all, a cache key that ignores what the validator
 * ignores, no cached "not now" answers, and a per-address cap on event streams. Real sockets
 * from distinct loopback addresses (127.0.0.0/8 all reach 127.0.0.1 on Linux).
 */

const open: ClientRequest[] = [];
afterEach(() => {
  for (const req of open.splice(0)) req.destroy();
});

interface Answer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A request from `from`; resolves with the whole answer (or only its head for an event stream). */
function call(
  base: string,
  path: string,
  from: string,
  options: { method?: string; body?: unknown; headers?: Record<string, string>; stream?: boolean } = {},
): Promise<Answer> {
  const url = new URL(path, base);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? 'GET',
        localAddress: from,
        headers: {
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
      },
      (res) => {
        if (options.stream === true && res.statusCode === 200) {
          resolve({ status: 200, headers: res.headers, body: '' });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
    if (options.stream === true) open.push(req);
  });
}

const code = (a: Answer) => (JSON.parse(a.body) as { code?: string }).code;

describe('status proxy limits', () => {
  it('a flood of distinct URLs from one address spends its own budget and leaves other dashboards served', async () => {
    // The validator's own limit for the proxy's address is far below the defaults here, so that
    // a proxy spending it for one client would fail everyone.
    const net = await startNetwork({
      validator: { rateLimitPerSecond: 20, rateLimitBurst: 60 },
      proxy: { cacheMs: 60_000, now: () => 0 },
    });
    let upstream = 0;
    net.proxy.client.on('request', () => upstream++);
    const before = upstream;
    const attacker = '127.0.0.2';
    const answers: Answer[] = [];
    // Distinct URLs of cached reads, distinct junk on them, and uncached challenges.
    for (let i = 1; i <= 20; i++) {
      answers.push(await call(net.proxyUrl, `/api/hexchain/lattice?limit=${i}`, attacker));
      answers.push(await call(net.proxyUrl, `/api/hexchain/lattice?limit=5${'&'.repeat(i)}x=${i}`, attacker));
      answers.push(
        await call(net.proxyUrl, '/api/hexchain/challenge', attacker, {
          method: 'POST',
          body: { slot: i, slot_hash: 'a'.repeat(64) },
        }),
      );
    }
    // 60 requests within the address's burst of 60; 20 validator requests at most (its budget).
    expect(upstream - before).toBeLessThanOrEqual(20);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(code(a)).toBe('rate_limited');
      expect(a.headers['retry-after']).toBeDefined();
    }
    // The address's own rate limit: the 61st request of the burst is refused before any route.
    const over = await call(net.proxyUrl, '/api/hexchain/status', attacker);
    expect([over.status, code(over)]).toEqual([429, 'rate_limited']);

    // Another browser reads its dashboard normally.
    for (const path of [
      '/api/hexchain/status',
      '/api/live',
      '/api/dashboard',
      '/api/hexchain/lattice?limit=3',
    ]) {
      const res = await call(net.proxyUrl, path, '127.0.0.3');
      expect(res.status, `${path}: ${res.body}`).toBe(200);
    }
  });

  it('one cache entry for a query that differs only in what the validator ignores', async () => {
    const net = await startNetwork({ proxy: { cacheMs: 60_000 } });
    let lattice = 0;
    net.proxy.client.on('request', (e) => {
      if (e.operationId === 'hexLattice') lattice++;
    });
    for (const q of ['limit=2', 'limit=2&&&', 'x=1&limit=2', 'limit=2&y=&z=3', '&limit=2']) {
      const res = await call(net.proxyUrl, `/api/hexchain/lattice?${q}`, '127.0.0.4');
      expect(res.status, res.body).toBe(200);
    }
    expect(lattice).toBe(1);
    // A bad value is answered by the proxy itself: no validator request, nothing kept.
    const bad = await call(net.proxyUrl, '/api/hexchain/lattice?limit=abc', '127.0.0.4');
    expect([bad.status, code(bad)]).toEqual([400, 'validation_failed']);
    expect(lattice).toBe(1);
    expect(net.proxy.cache.size).toBe(1);
  });

  it("never keeps a validator's 429: the next reader gets a fresh answer", async () => {
    let validatorNow = Date.now();
    const net = await startNetwork({
      validator: { rateLimitPerSecond: 1, rateLimitBurst: 10, now: () => validatorNow },
      proxy: { cacheMs: 60_000 },
    });
    // Spend the validator's burst for the proxy's address with distinct (uncached) reads.
    let status = 0;
    for (let i = 1; status !== 429 && i < 20; i++) {
      status = (await call(net.proxyUrl, `/api/hexchain/lattice?limit=${i}`, '127.0.0.5')).status;
    }
    expect(status).toBe(429);
    const refused = await call(net.proxyUrl, '/api/hexchain/status', '127.0.0.6');
    expect([refused.status, code(refused)]).toEqual([429, 'rate_limited']);
    validatorNow += 10_000; // the validator's bucket refills
    const fresh = await call(net.proxyUrl, '/api/hexchain/status', '127.0.0.6');
    expect(fresh.status, fresh.body).toBe(200);
  });

  it('answers 503 at the budget of all clients together, while cached reads are still served', async () => {
    const net = await startNetwork({
      proxy: { cacheMs: 60_000, now: () => 0, upstreamTotalBurst: 3, upstreamTotalPerSecond: 1 },
    });
    expect((await call(net.proxyUrl, '/api/hexchain/status', '127.0.0.7')).status).toBe(200);
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++) {
      answers.push(await call(net.proxyUrl, `/api/hexchain/lattice?limit=${i + 1}`, `127.0.1.${i + 1}`));
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 503]);
    expect(code(answers[3]!)).toBe('service_unavailable');
    expect(answers[3]!.headers['retry-after']).toBe('1');
    expect((await call(net.proxyUrl, '/api/hexchain/status', '127.0.0.8')).status).toBe(200);
    expect((await call(net.proxyUrl, '/api/hexchain/lattice?limit=1', '127.0.0.8')).status).toBe(200);
  });

  it('one address holds at most 64 event streams; another still gets one', async () => {
    const net = await startNetwork({ proxy: { rateLimitBurst: 1000 } });
    for (let i = 0; i < 64; i++) {
      expect((await call(net.proxyUrl, '/api/hexchain/events', '127.0.0.9', { stream: true })).status).toBe(
        200,
      );
    }
    const refused = await call(net.proxyUrl, '/api/hexchain/events', '127.0.0.9', { stream: true });
    expect([refused.status, code(refused)]).toEqual([429, 'too_many_streams']);
    expect((await call(net.proxyUrl, '/api/hexchain/events', '127.0.0.10', { stream: true })).status).toBe(
      200,
    );
    expect(net.proxy.mirror.hub.size).toBe(65);
    // Still one upstream stream for all of them.
    expect(net.validator.events.size).toBe(1);
  });

  it('behind a trusted proxy, limits each forwarded client', async () => {
    const net = await startNetwork({
      proxy: { trustProxy: ['127.0.0.11'], now: () => 0, rateLimitBurst: 2 },
    });
    const via = (client: string) =>
      call(net.proxyUrl, '/health', '127.0.0.11', { headers: { 'x-forwarded-for': client } });
    expect((await via('198.51.100.1')).status).toBe(200);
    expect((await via('198.51.100.1')).status).toBe(200);
    expect((await via('198.51.100.1')).status).toBe(429);
    expect((await via('198.51.100.2')).status).toBe(200);
  });
});
