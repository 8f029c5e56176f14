import { request as httpRequest } from 'node:http';
import type { DashboardBlocks, HexStatus, LiveState } from '@tensormine/protocol';
import { SseParser } from '@tensormine/protocol';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startNetwork, until } from './helpers.js';

async function json<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await request(url);
  return { status: res.statusCode, body: (await res.body.json()) as T };
}

describe('status proxy: forwarded /api/hexchain/* routes', () => {
  it('answers the status, lattice pages and blocks as the validator does', async () => {
    const net = await startNetwork({ proxy: { cacheMs: 0 } });
    const [first] = await net.mine(3);
    const direct = await json<HexStatus>(`${net.validatorUrl}/api/hexchain/status`);
    const proxied = await json<HexStatus>(`${net.proxyUrl}/api/hexchain/status`);
    expect(proxied).toEqual(direct);
    const page = await json<{ blocks: { block_hash: string }[] }>(
      `${net.proxyUrl}/api/hexchain/lattice?limit=2`,
    );
    expect(page.body.blocks.map((b) => b.block_hash)[0]).toBe(first);
    const block = page.body.blocks[0] as unknown as { coord: { q: number; r: number; s: number } };
    const one = await json<{ block_hash: string }>(
      `${net.proxyUrl}/api/hexchain/lattice/${block.coord.q}/${block.coord.r}/${block.coord.s}`,
    );
    expect(one.body.block_hash).toBe(first);
  });

  it("passes the validator's errors through with their status and code", async () => {
    const net = await startNetwork();
    const free = await json<{ code: string }>(`${net.proxyUrl}/api/hexchain/lattice/5/-5/0`);
    expect(free).toMatchObject({ status: 404, body: { code: 'block_not_found' } });
    const bad = await json<{ code: string }>(`${net.proxyUrl}/api/hexchain/lattice/1/1/1`);
    expect(bad.status).toBe(400);
    const wrongCursor = await json<{ code: string }>(`${net.proxyUrl}/api/hexchain/lattice?limit=01`);
    expect(wrongCursor).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    const submit = await request(`${net.proxyUrl}/api/hexchain/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"challenge_id":',
    });
    expect(submit.statusCode).toBe(400);
    expect(await submit.body.json()).toMatchObject({ code: 'invalid_json' });
    const missing = await json<{ code: string }>(`${net.proxyUrl}/nope`);
    expect(missing).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('forwards challenges and submissions (a miner can mine through the proxy)', async () => {
    const net = await startNetwork();
    const { createClient, solveWork } = await import('@tensormine/client');
    const viaProxy = createClient({
      url: net.proxyUrl,
      signer: net.signer,
      protocol: '4.1',
      healthCheckIntervalMs: 0,
    });
    try {
      const challenge = await viaProxy.hexchain.challenge({ slot: 1, slot_hash: 'a'.repeat(64) });
      const work = { version: '4.1' as const, challenge, endpoint: net.proxyUrl };
      const solution = solveWork(work, net.signer, { maxIterations: 1_000_000 });
      const result = await viaProxy.submitWork(work, solution!);
      expect(result.result).toMatchObject({ accepted: true });
    } finally {
      await viaProxy.close();
    }
  });

  it('caches reads for cacheMs, coalesces concurrent misses, and drops the cache on a new block', async () => {
    // An hour: within the test only a new block can drop the cache, never its expiry, however
    // long a loaded machine takes.
    const net = await startNetwork({ proxy: { cacheMs: 3_600_000 } });
    let upstreamStatus = 0;
    net.proxy.client.on('request', (e) => {
      if (e.operationId === 'hexStatus') upstreamStatus++;
    });
    const before = upstreamStatus;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => json<HexStatus>(`${net.proxyUrl}/api/hexchain/status`)),
    );
    expect(new Set(answers.map((a) => a.body.occupied))).toEqual(new Set([1]));
    expect(upstreamStatus - before).toBe(1);
    await net.mine(1);
    await until(
      async () => (await json<HexStatus>(`${net.proxyUrl}/api/hexchain/status`)).body.occupied === 2,
    );
  });

  it('answers 502 upstream_unavailable when no validator answers', async () => {
    const net = await startNetwork({ proxy: { client: { retry: { retries: 0 }, timeoutMs: 2000 } } });
    await net.validator.close();
    const res = await json<{ code: string }>(`${net.proxyUrl}/api/hexchain/status`);
    expect(res).toMatchObject({ status: 502, body: { code: 'upstream_unavailable' } });
  });
});

describe('status proxy: the route table', () => {
  it('serves every status route of ROUTES', async () => {
    const net = await startNetwork();
    const { routesOf } = await import('@tensormine/protocol');
    for (const route of routesOf('status')) {
      const path = route.url.replace(':q', '0').replace(':r', '0').replace(':s', '0');
      const res = await request(`${net.proxyUrl}${path}`, {
        method: route.method,
        ...(route.method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
      });
      const type = String(res.headers['content-type']);
      if (route.produces?.includes('text/event-stream')) {
        expect(type, route.url).toContain('text/event-stream');
        res.body.destroy();
        continue;
      }
      const body = (await res.body.json()) as { code?: string; message?: string };
      // An answer of the route itself: success, or the validator's refusal of an empty input,
      // never "no such route".
      expect(body.message ?? '', `${route.method} ${route.url}`).not.toMatch(/^no route/);
    }
  });
});

describe('status proxy: its own routes', () => {
  it('serves /health, /api/live, /api/dashboard and the block columns', async () => {
    const net = await startNetwork();
    const hashes = await net.mine(4);
    await until(() => net.proxy.mirror.size === 4, 'the mirror to see 4 blocks');
    const health = await json<{ status: string; service: string }>(`${net.proxyUrl}/health`);
    expect(health.body).toMatchObject({ status: 'ok', service: 'tensormine-status-proxy' });
    const live = await json<LiveState>(`${net.proxyUrl}/api/live`);
    expect(live.body).toMatchObject({
      mining: true,
      blocks: 4,
      miners_seen: 1,
      difficulty: 16,
      validator_url: net.validatorUrl,
      last_block: { block_hash: hashes[3] },
    });
    expect(live.body.recent_blocks.map((b) => b.block_hash)).toEqual([...hashes].reverse());
    expect(live.body.blocks_until_retarget).toBeGreaterThan(0);
    const columns = await json<DashboardBlocks>(`${net.proxyUrl}/api/dashboard/blocks`);
    expect(columns.body.height).toEqual([1, 2, 3, 4]);
    expect(columns.body.miners).toEqual([net.signer.publicKeyHex]);
    expect(columns.body.last_event_id).toMatch(/-4$/);
    const after = await json<DashboardBlocks>(`${net.proxyUrl}/api/dashboard/blocks?after=2`);
    expect(after.body.height).toEqual([3, 4]);
    const summary = await json<{ lattice: HexStatus; peers: unknown[] }>(`${net.proxyUrl}/api/dashboard`);
    expect(summary.body.lattice.occupied).toBe(5);
    expect(summary.body.peers).toEqual([]);
    const page = await request(`${net.proxyUrl}/`);
    expect(page.headers['content-type']).toContain('text/html');
    expect(await page.body.text()).toContain('<canvas id="lattice"');
    const uplot = await request(`${net.proxyUrl}/vendor/uPlot.iife.min.js`);
    expect(uplot.statusCode).toBe(200);
    expect((await uplot.body.text()).length).toBeGreaterThan(10_000);
  });
});

describe('status proxy: the re-served event stream', () => {
  it('serves 1,000 concurrent subscribers from ONE upstream connection', async () => {
    // Every subscriber comes from 127.0.0.1 here: lift the per-address limits.
    const net = await startNetwork({
      proxy: { eventStreamsPerAddress: 1000, rateLimitPerSecond: 10_000, rateLimitBurst: 10_000 },
    });
    await until(() => net.proxy.mirror.streamOpen, 'the upstream stream');
    expect(net.validator.events.size).toBe(1);
    const agent = new Agent({ connections: 2000, pipelining: 0 });
    const N = 1000;
    const received = new Array<number>(N).fill(0);
    const controller = new AbortController();
    const streams = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await request(`${net.proxyUrl}/api/hexchain/events`, {
          dispatcher: agent,
          signal: controller.signal,
        });
        expect(res.statusCode).toBe(200);
        const parser = new SseParser();
        void (async () => {
          try {
            for await (const chunk of res.body) {
              for (const m of parser.push(chunk.toString())) if (m.event === 'block') received[i]!++;
            }
          } catch {
            // aborted at the end
          }
        })();
        return res;
      }),
    );
    expect(streams).toHaveLength(N);
    await until(() => net.proxy.mirror.hub.size === N, '1000 subscribers');
    await net.mine(2);
    await until(() => received.every((n) => n === 2), 'every subscriber to get 2 blocks');
    // Still one upstream connection: the validator serves the proxy, not the browsers.
    expect(net.validator.events.size).toBe(1);
    expect(net.proxy.mirror.upstreamConnections).toBe(1);
    controller.abort();
    await agent.destroy();
  });

  it('resumes a browser after a disconnect (Last-Event-ID) with no event lost', async () => {
    const net = await startNetwork();
    await until(() => net.proxy.mirror.streamOpen, 'the upstream stream');
    const read = (lastEventId: string | undefined, count: number) =>
      new Promise<{ id: string | undefined; event: string; data: string }[]>((resolve, reject) => {
        const out: { id: string | undefined; event: string; data: string }[] = [];
        const parser = new SseParser();
        const req = httpRequest(`${net.proxyUrl}/api/hexchain/events`, {
          headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
        });
        req.on('response', (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            out.push(...parser.push(chunk));
            if (out.length >= count) {
              req.destroy();
              resolve(out.slice(0, count));
            }
          });
        });
        req.on('error', (error) => {
          if (out.length < count) reject(error);
        });
        req.end();
      });
    const first = read(undefined, 1);
    await until(() => net.proxy.mirror.hub.size === 1, 'the subscriber');
    const [h1] = await net.mine(1);
    const [e1] = await first;
    expect(JSON.parse(e1!.data).block.block_hash).toBe(h1);
    const missed = await net.mine(3); // while the browser is away
    await until(() => net.proxy.mirror.size === 4, 'the mirror');
    const resumed = await read(e1!.id, 3);
    expect(resumed.map((e) => JSON.parse(e.data).block.block_hash)).toEqual(missed);
  });
});
