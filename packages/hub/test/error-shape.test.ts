/**
 * The hub answers what it refuses in the one documented error shape, as the validator does:
 * malformed raw JSON, a body that is not JSON, an oversize body, an unknown method, broken
 * paths and huge headers, over a real socket (Node's HTTP parser is part of what is tested).
 */
import { routesOf } from '@tensormine/protocol';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { expectMalformedRequestsRefused, httpRequest, rawRequest } from '../../../test-support/raw-http.ts';
import { createHub, type Hub } from '../src/index.js';

let hub: Hub;
let port: number;

beforeAll(async () => {
  hub = await createHub({ logger: false });
  port = Number(new URL(await hub.listen({ host: '127.0.0.1', port: 0 })).port);
});
afterAll(() => hub.close());

test('every malformed request is answered in the documented error shape', async () => {
  await expectMalformedRequestsRefused(port, routesOf('hub'), 16 * 1024);
});

test('the rate limit answers 429 rate_limited with Retry-After, in the same shape', async () => {
  const limited = await createHub({ logger: false, rateLimitBurst: 1, rateLimitPerSecond: 1, now: () => 0 });
  const limitedPort = Number(new URL(await limited.listen({ host: '127.0.0.1', port: 0 })).port);
  try {
    expect((await rawRequest(limitedPort, httpRequest('GET', '/health'))).status).toBe(200);
    const refused = await rawRequest(limitedPort, httpRequest('GET', '/health'));
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ statusCode: 429, code: 'rate_limited' });
    expect(refused.headers['retry-after']).toBe('1');
  } finally {
    await limited.close();
  }
});
