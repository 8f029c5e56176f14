import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { testValidator } from './helpers.js';

/**
 * GET /api/hexchain/events on an open network (issue 21): one client address may hold at most
 * `eventStreamsPerAddress` streams (429 too_many_streams beyond), far below the node's
 * `eventStreams` (503 service_unavailable beyond), so one address cannot take every slot.
 * Real sockets from distinct loopback addresses (127.0.0.0/8 all reach 127.0.0.1 on Linux).
 */

const open: ClientRequest[] = [];
afterEach(() => {
  for (const req of open.splice(0)) req.destroy();
});

/** Opens a stream from `from` and resolves with its status once the head arrives (kept open). */
function stream(
  base: string,
  from: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: () => Promise<string> }> {
  const url = new URL('/api/hexchain/events', base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, localAddress: from, headers },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        resolve({
          status: res.statusCode ?? 0,
          body: () =>
            new Promise((done) => {
              if (res.complete) done(Buffer.concat(chunks).toString());
              else res.on('end', () => done(Buffer.concat(chunks).toString()));
            }),
        });
      },
    );
    req.on('error', reject);
    req.end();
    open.push(req);
  });
}

describe('event stream limits', () => {
  it('with the defaults, one address holds at most 64 streams and another address still gets one', async () => {
    const v = await testValidator();
    const base = await v.listen({ host: '127.0.0.1', port: 0 });
    for (let i = 0; i < 64; i++) expect((await stream(base, '127.0.0.2')).status).toBe(200);
    const refused = await stream(base, '127.0.0.2');
    expect(refused.status).toBe(429);
    const body = JSON.parse(await refused.body());
    expect(body).toMatchObject({ code: 'too_many_streams', details: { max_streams_per_client: 64 } });
    expect((await stream(base, '127.0.0.3')).status).toBe(200);
    expect(v.events.size).toBe(65);
  });

  it('keeps the global cap (503) and frees a slot when a stream closes', async () => {
    const v = await testValidator({ eventStreams: 4, eventStreamsPerAddress: 3 });
    const base = await v.listen({ host: '127.0.0.1', port: 0 });
    for (let i = 0; i < 3; i++) expect((await stream(base, '127.0.0.2')).status).toBe(200);
    expect((await stream(base, '127.0.0.2')).status).toBe(429);
    expect((await stream(base, '127.0.0.3')).status).toBe(200);
    const full = await stream(base, '127.0.0.4');
    expect(full.status).toBe(503);
    expect(JSON.parse(await full.body())).toMatchObject({ code: 'service_unavailable' });
    // One of 127.0.0.2's streams ends: that address may open one again.
    open[0]!.destroy();
    await expect.poll(() => v.events.size, { timeout: WAIT_TIMEOUT_MS }).toBe(3);
    expect((await stream(base, '127.0.0.2')).status).toBe(200);
  });

  it('behind a trusted proxy, counts each forwarded client; X-Forwarded-For from anyone else is ignored', async () => {
    const v = await testValidator({ eventStreamsPerAddress: 2, trustProxy: '127.0.0.9' });
    const base = await v.listen({ host: '127.0.0.1', port: 0 });
    const via = (client: string) => stream(base, '127.0.0.9', { 'x-forwarded-for': client });
    expect((await via('198.51.100.1')).status).toBe(200);
    expect((await via('198.51.100.1')).status).toBe(200);
    expect((await via('198.51.100.1')).status).toBe(429);
    expect((await via('198.51.100.2')).status).toBe(200);
    // Not a trusted proxy: its header names nobody, the stream counts for its own address.
    const liar = (client: string) => stream(base, '127.0.0.5', { 'x-forwarded-for': client });
    expect((await liar('203.0.113.1')).status).toBe(200);
    expect((await liar('203.0.113.2')).status).toBe(200);
    expect((await liar('203.0.113.3')).status).toBe(429);
  });
});
