import { ERROR_CODES, type ErrorCode, verifySignedRequest } from '@tensormine/protocol';
import { MockAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  InvalidInputError,
  NetworkError,
  type RetryEvent,
  Signer,
  TensormineError,
  TimeoutError,
  UnexpectedResponseError,
  USER_AGENT,
  ValidatorError,
} from '../src/index.js';
import { client, track } from './helpers.js';

/** Unit tests of the HTTP core against undici's MockAgent: nothing leaves the process. */

/**
 * The timeout an answer the mock gives at once must beat (generous: a loaded machine never
 * turns such an answer into a timeout), and the delay of an answer that must never come in time.
 */
const ANSWER_MS = 2_000;
const NEVER_MS = 60_000;
const V1 = 'http://v1.test';
const KEY = 'ab'.repeat(32);
const HEALTH = {
  status: 'ok',
  service: 'tensormine-validator',
  version: '4.1',
  protocols: ['4.0', '4.1'],
  software_version: '0.1.0',
  node_id: 'node-1',
  node_pubkey: KEY,
  uptime_s: 3,
};
const PEERS = { peers: [], total_nodes: 1, synced: true, mode: 'local_only' };
const JSON_HEADERS = { headers: { 'content-type': 'application/json; charset=utf-8' } };

function mockAgent(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  return track(agent);
}

function errorBody(code: ErrorCode, message: string, details?: Record<string, unknown>) {
  const status = ERROR_CODES[code].status;
  return { statusCode: status, code, error: 'Reason', message, ...(details ? { details } : {}) };
}

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

describe('request shapes', () => {
  it('sends a GET with the query string, accept and user-agent headers and no body', async () => {
    const agent = mockAgent();
    const seen: Seen[] = [];
    agent
      .get(V1)
      .intercept({ path: (p) => p.startsWith('/devices'), method: 'GET' })
      .reply((opts) => {
        seen.push({
          method: opts.method,
          path: opts.path,
          headers: opts.headers as Record<string, string>,
          body: opts.body as string | undefined,
        });
        return {
          statusCode: 200,
          data: { devices: [], next_cursor: null, by_type: { native: 0, esp32: 0, esp8266: 0 }, total: 0 },
          responseOptions: JSON_HEADERS,
        };
      });
    const c = client({ url: V1, dispatcher: agent });
    const page = await c.miners.devices({ device_type: 'esp32', limit: 5 });
    expect(page.total).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe('GET');
    expect(seen[0]!.path).toBe('/devices?device_type=esp32&limit=5');
    expect(seen[0]!.headers).toMatchObject({ accept: 'application/json', 'user-agent': USER_AGENT });
    expect(seen[0]!.headers['content-type']).toBeUndefined();
    expect(seen[0]!.body ?? null).toBeNull();
  });

  it('sends a POST with a JSON body and content-type, and encodes path parameters', async () => {
    const agent = mockAgent();
    const seen: Seen[] = [];
    const capture = (opts: { method: string; path: string; headers?: unknown; body?: unknown }) => {
      seen.push({
        method: opts.method,
        path: opts.path,
        headers: opts.headers as Record<string, string>,
        body: opts.body as string,
      });
    };
    const pool = agent.get(V1);
    pool.intercept({ path: '/api/hexchain/challenge', method: 'POST' }).reply((opts) => {
      capture(opts);
      return { statusCode: 404, data: errorBody('not_found', 'x'), responseOptions: JSON_HEADERS };
    });
    pool.intercept({ path: '/api/hexchain/lattice/1/-1/0', method: 'GET' }).reply((opts) => {
      capture(opts);
      return { statusCode: 404, data: errorBody('block_not_found', 'free'), responseOptions: JSON_HEADERS };
    });
    const c = client({ url: V1, dispatcher: agent });
    await expect(c.hexchain.challenge({ slot: 7, slot_hash: 'abc' })).rejects.toThrow(ValidatorError);
    await expect(c.hexchain.block({ q: 1, r: -1, s: 0 })).rejects.toMatchObject({ code: 'block_not_found' });
    expect(seen[0]).toMatchObject({
      method: 'POST',
      path: '/api/hexchain/challenge',
      body: '{"slot":7,"slot_hash":"abc"}',
    });
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(seen[1]!.path).toBe('/api/hexchain/lattice/1/-1/0');
  });

  it('signs an operation that acts for a key: the x-tm-* headers verify over method, path and body', async () => {
    const agent = mockAgent();
    const signer = Signer.generate();
    const verdicts: unknown[] = [];
    agent
      .get(V1)
      .intercept({ path: '/base/devices/register', method: 'POST' })
      .reply((opts) => {
        verdicts.push(
          verifySignedRequest({
            method: opts.method,
            path: opts.path,
            body: opts.body as string,
            headers: opts.headers as Record<string, string>,
            now: Date.now(),
          }),
        );
        verdicts.push(JSON.parse(opts.body as string));
        return {
          statusCode: 200,
          data: {
            registered: true,
            pubkey: signer.publicKeyHex,
            device_type: 'esp32',
            port: 8080,
            registered_at: 1,
            device_id: 'dev-1',
          },
          responseOptions: JSON_HEADERS,
        };
      });
    // A base URL with a path: the signed path is the request target as sent.
    const c = client({ url: `${V1}/base/`, dispatcher: agent, signer });
    const result = await c.miners.register({ device_type: 'esp32', port: 8080 });
    expect(result.device_id).toBe('dev-1');
    expect(verdicts[0]).toMatchObject({ ok: true, publicKey: signer.publicKeyHex });
    expect(verdicts[1]).toEqual({ device_type: 'esp32', port: 8080, pubkey: signer.publicKeyHex });
  });

  it('sends the admin token as a bearer token', async () => {
    const agent = mockAgent();
    let authorization: string | undefined;
    agent
      .get(V1)
      .intercept({ path: '/admin/config', method: 'GET' })
      .reply((opts) => {
        authorization = (opts.headers as Record<string, string>).authorization;
        return {
          statusCode: 200,
          data: {
            difficulty: 2,
            max_tensor_dim: 8,
            pool_strategy: 'solo',
            hexchain_difficulty: 256,
            challenge_ttl_s: 120,
          },
          responseOptions: JSON_HEADERS,
        };
      });
    const c = client({ url: V1, dispatcher: agent, adminToken: 'a-very-secret-admin-token' });
    expect((await c.admin.config()).difficulty).toBe(2);
    expect(authorization).toBe('Bearer a-very-secret-admin-token');
  });

  it('refuses locally, before sending, a signed operation without a signer and an admin one without a token', async () => {
    const agent = mockAgent();
    const c = client({ url: V1, dispatcher: agent });
    const requests: unknown[] = [];
    c.on('request', (e) => requests.push(e));
    await expect(c.economy.stake({ amount: '1', lock_period_days: 7 })).rejects.toThrow(
      'stake: signer: stake acts for a public key and must be signed; expected a Signer (createClient({ signer }) or { signer } in the call options), got none',
    );
    await expect(c.admin.metrics()).rejects.toThrow(
      'getAdminMetrics: adminToken: getAdminMetrics is an admin operation; expected an admin token (createClient({ adminToken }) or { adminToken } in the call options), got none',
    );
    expect(requests).toEqual([]);
  });

  it('refuses a body pubkey that is not the signer', async () => {
    const c = client({ url: V1, dispatcher: mockAgent(), signer: Signer.generate() });
    const error = await c.economy.unstake({ stake_id: 's-1', pubkey: KEY }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).shortMessage).toMatch(
      /^unstake: body\.pubkey: expected the signer's public key [0-9a-f]{64}, got "abab/,
    );
  });
});

describe('error mapping', () => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];

  it.each(codes)('maps %s to a ValidatorError with its code, status and docs', async (code) => {
    const agent = mockAgent();
    const status = ERROR_CODES[code].status;
    agent
      .get(V1)
      .intercept({ path: '/network/peers', method: 'GET' })
      .reply(status, errorBody(code, `the ${code} message`, { some: 'detail' }), JSON_HEADERS);
    const c = client({ url: V1, dispatcher: agent, retry: false });
    const error = await c.node.peers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidatorError);
    expect(error).toBeInstanceOf(TensormineError);
    expect(error).toBeInstanceOf(Error);
    const e = error as ValidatorError;
    expect(e.name).toBe('ValidatorError');
    expect(e.code).toBe(code);
    expect(e.status).toBe(status);
    expect(e.isKnownCode).toBe(true);
    expect(e.description).toBe(ERROR_CODES[code].description);
    expect(e.details).toEqual({ some: 'detail' });
    expect(e.method).toBe('GET');
    expect(e.url).toBe(`${V1}/network/peers`);
    expect(e.endpoint).toBe(V1);
    expect(e.operationId).toBe('getPeers');
    expect(e.docsPath).toBe(`docs/errors.md#${code}`);
    expect(e.message).toBe(
      `the ${code} message (${code}, HTTP ${status})\n\nRequest: GET ${V1}/network/peers\nDocs: docs/errors.md#${code}`,
    );
  });

  it('keeps a code this client does not know, with its status', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: '/network/peers', method: 'GET' })
      .reply(418, { statusCode: 418, code: 'teapot', error: "I'm a teapot", message: 'short and stout' });
    const c = client({ url: V1, dispatcher: agent });
    const error = (await c.node.peers().catch((e: unknown) => e)) as ValidatorError;
    expect(error).toBeInstanceOf(ValidatorError);
    expect(error).toMatchObject({ code: 'teapot', status: 418, isKnownCode: false, description: undefined });
    expect(error.docsPath).toBe('docs/sdk.md#validatorerror');
  });

  it('answers a 5xx without an ErrorResponse (a proxy page) with an UnexpectedResponseError', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: '/network/peers', method: 'GET' })
      .reply(502, '<html>Bad gateway</html>', { headers: { 'content-type': 'text/html' } });
    const c = client({ url: V1, dispatcher: agent, retry: false });
    const error = (await c.node.peers().catch((e: unknown) => e)) as UnexpectedResponseError;
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.code).toBe('unexpected_response');
    expect(error.status).toBe(502);
    expect(error.shortMessage).toBe('HTTP 502 with text/html that is not an ErrorResponse');
  });

  it('answers a 200 that is not JSON, or not the schema, with an UnexpectedResponseError', async () => {
    const agent = mockAgent();
    const pool = agent.get(V1);
    pool.intercept({ path: '/network/peers', method: 'GET' }).reply(200, 'hello', {
      headers: { 'content-type': 'text/plain' },
    });
    pool
      .intercept({ path: '/network/peers', method: 'GET' })
      .reply(200, { ...PEERS, total_nodes: -1 }, JSON_HEADERS);
    const c = client({ url: V1, dispatcher: agent });
    await expect(c.node.peers()).rejects.toMatchObject({
      name: 'UnexpectedResponseError',
      shortMessage: 'expected a JSON body, got text/plain that is not JSON',
    });
    await expect(c.node.peers()).rejects.toMatchObject({
      name: 'UnexpectedResponseError',
      shortMessage:
        'the reply does not match the getPeers schema: reply.total_nodes: expected a number >= 0, got -1',
    });
  });

  it('can skip the reply schema check', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: '/network/peers', method: 'GET' })
      .reply(200, { ...PEERS, total_nodes: -1 }, JSON_HEADERS);
    const c = client({ url: V1, dispatcher: agent, validateResponses: false });
    expect((await c.node.peers()).total_nodes).toBe(-1);
  });

  it('maps a refused connection to a NetworkError that says the request was not sent', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: '/api/hexchain/submit', method: 'POST' })
      .replyWithError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:80'), { code: 'ECONNREFUSED' }));
    agent
      .get(V1)
      .intercept({ path: '/api/hexchain/submit', method: 'POST' })
      .replyWithError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    const c = client({ url: V1, dispatcher: agent });
    const body = {
      challenge_id: 'h-1',
      block: { coord: { q: 1, r: -1, s: 0 }, pow_hash: 'ab'.repeat(32), nonce: 1, miner_pubkey: KEY },
    };
    const refused = (await c.hexchain.submit(body).catch((e: unknown) => e)) as NetworkError;
    expect(refused).toBeInstanceOf(NetworkError);
    expect(refused.requestSent).toBe(false);
    expect(refused.shortMessage).toBe(`could not reach ${V1}: connect ECONNREFUSED 10.0.0.1:80`);
    expect((refused.cause as Error).message).toBe('connect ECONNREFUSED 10.0.0.1:80');
    // A submission is resent after a reset by default (idempotent); without retries the error shows.
    const reset = (await c.hexchain.submit(body, { retries: 0 }).catch((e: unknown) => e)) as NetworkError;
    expect(reset.requestSent).toBe(true);
    expect(reset.details).toEqual({ requestSent: true, errno: 'UND_ERR_SOCKET' });
  });
});

describe('a validator whose database is busy', () => {
  it('sends a submission again after a 503 service_unavailable (nothing was written) and its Retry-After', async () => {
    const agent = mockAgent();
    const unavailable = {
      statusCode: 503,
      code: 'service_unavailable',
      error: 'Service Unavailable',
      message:
        'the transaction lost 30 runs to concurrent transactions; nothing was written; send the request again',
    };
    agent
      .get(V1)
      .intercept({ path: '/api/hexchain/submit', method: 'POST' })
      .reply(503, unavailable, { headers: { ...JSON_HEADERS.headers, 'retry-after': '0' } });
    agent
      .get(V1)
      .intercept({ path: '/api/hexchain/submit', method: 'POST' })
      .reply(200, { accepted: true }, JSON_HEADERS);
    const c = client({ url: V1, dispatcher: agent, validateResponses: false });
    const body = {
      challenge_id: 'h-1',
      block: { coord: { q: 1, r: -1, s: 0 }, pow_hash: 'ab'.repeat(32), nonce: 1, miner_pubkey: KEY },
    };
    expect(await c.hexchain.submit(body)).toEqual({ accepted: true });
    // Without retries the 503 shows, with its code.
    agent
      .get(V1)
      .intercept({ path: '/api/hexchain/submit', method: 'POST' })
      .reply(503, unavailable, { headers: { ...JSON_HEADERS.headers, 'retry-after': '0' } });
    await expect(c.hexchain.submit(body, { retries: 0 })).rejects.toMatchObject({
      code: 'service_unavailable',
    });
  });
});

describe('timeouts and abort', () => {
  it('gives up an attempt after timeoutMs with a TimeoutError', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: '/health', method: 'GET' })
      .reply(200, HEALTH, JSON_HEADERS)
      .delay(NEVER_MS);
    const c = client({ url: V1, dispatcher: agent, retry: false, timeoutMs: 50 });
    const started = performance.now();
    const error = (await c.node.health().catch((e: unknown) => e)) as TimeoutError;
    // It gave up: it did not wait for the answer (a minute away).
    expect(performance.now() - started).toBeLessThan(NEVER_MS / 2);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', timeoutMs: 50, endpoint: V1 });
    expect(error.shortMessage).toBe(`no answer from ${V1} within 50 ms`);
  });

  it('lets one call override the timeout', async () => {
    const agent = mockAgent();
    agent.get(V1).intercept({ path: '/health', method: 'GET' }).reply(200, HEALTH, JSON_HEADERS).delay(100);
    const c = client({ url: V1, dispatcher: agent, retry: false, timeoutMs: 20 });
    expect((await c.node.health({ timeoutMs: ANSWER_MS })).status).toBe('ok');
  });

  it('stops at the signal: AbortedError with the reason as cause, no retry', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: '/health', method: 'GET' })
      .reply(200, HEALTH, JSON_HEADERS)
      .delay(NEVER_MS);
    const c = client({ url: V1, dispatcher: agent });
    const retries: RetryEvent[] = [];
    c.on('retry', (e) => retries.push(e));
    const controller = new AbortController();
    const reason = new Error('user pressed q');
    setTimeout(() => controller.abort(reason), 30);
    const error = (await c.node
      .health({ signal: controller.signal })
      .catch((e: unknown) => e)) as AbortedError;
    expect(error).toBeInstanceOf(AbortedError);
    expect(error.code).toBe('aborted');
    expect(error.cause).toBe(reason);
    expect(error.shortMessage).toBe('the request was aborted by the caller: user pressed q');
    expect(retries).toEqual([]);
  });

  it('sends nothing for an already aborted signal', async () => {
    const c = client({ url: V1, dispatcher: mockAgent() });
    const requests: unknown[] = [];
    c.on('request', (e) => requests.push(e));
    await expect(c.node.health({ signal: AbortSignal.abort() })).rejects.toThrow(AbortedError);
    expect(requests).toEqual([]);
  });

  it('stops waiting for a retry when the signal fires during the backoff', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: '/health', method: 'GET' })
      .reply(503, errorBody('service_unavailable', 'x'));
    const c = client({
      url: V1,
      dispatcher: agent,
      retry: { retries: 3, baseDelayMs: NEVER_MS, maxDelayMs: NEVER_MS },
    });
    const controller = new AbortController();
    c.on('retry', () => setTimeout(() => controller.abort(), 10));
    const started = performance.now();
    await expect(c.node.health({ signal: controller.signal })).rejects.toThrow(AbortedError);
    // It stopped waiting: the back-off (at least half a minute) did not run out.
    expect(performance.now() - started).toBeLessThan(NEVER_MS / 4);
  });
});

describe('retries', () => {
  it('retries a GET after 5xx, timeouts and network errors, with growing jittered backoff', async () => {
    const agent = mockAgent();
    const pool = agent.get(V1);
    pool
      .intercept({ path: '/health', method: 'GET' })
      .reply(503, errorBody('service_unavailable', 'starting'));
    pool
      .intercept({ path: '/health', method: 'GET' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    pool.intercept({ path: '/health', method: 'GET' }).reply(200, HEALTH, JSON_HEADERS).delay(NEVER_MS);
    pool.intercept({ path: '/health', method: 'GET' }).reply(200, HEALTH, JSON_HEADERS);
    const c = client({
      url: V1,
      dispatcher: agent,
      timeoutMs: ANSWER_MS,
      retry: { retries: 3, baseDelayMs: 20, maxDelayMs: 1_000 },
    });
    const retries: RetryEvent[] = [];
    c.on('retry', (e) => retries.push(e));
    expect((await c.node.health()).status).toBe('ok');
    expect(retries.map((r) => [r.attempt, r.error.code])).toEqual([
      [1, 'service_unavailable'],
      [2, 'network_error'],
      [3, 'timeout'],
    ]);
    // Equal jitter: retry n waits between base * 2^n / 2 and base * 2^n.
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(10);
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(20);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(20);
    expect(retries[1]!.delayMs).toBeLessThanOrEqual(40);
    expect(retries[2]!.delayMs).toBeGreaterThanOrEqual(40);
    expect(retries[2]!.delayMs).toBeLessThanOrEqual(80);
  });

  it('gives up after the configured retries with the last error', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: '/health', method: 'GET' })
      .reply(500, errorBody('internal_error', 'bug'))
      .times(3);
    const c = client({ url: V1, dispatcher: agent, retry: { retries: 2, baseDelayMs: 1 } });
    const requests: unknown[] = [];
    c.on('request', (e) => requests.push(e));
    await expect(c.node.health()).rejects.toMatchObject({ code: 'internal_error', status: 500 });
    expect(requests).toHaveLength(3);
  });

  it('waits the retry_after_s of a 429 before retrying a GET', async () => {
    const agent = mockAgent();
    const pool = agent.get(V1);
    pool
      .intercept({ path: '/health', method: 'GET' })
      .reply(429, errorBody('rate_limited', 'slow down', { retry_after_s: 0.15 }), JSON_HEADERS);
    pool.intercept({ path: '/health', method: 'GET' }).reply(200, HEALTH, JSON_HEADERS);
    const c = client({ url: V1, dispatcher: agent, retry: { retries: 1, baseDelayMs: 1 } });
    const retries: RetryEvent[] = [];
    c.on('retry', (e) => retries.push(e));
    expect((await c.node.health()).status).toBe('ok');
    expect(retries[0]!.delayMs).toBe(150);
    expect((retries[0]!.error as ValidatorError).retryAfterMs).toBe(150);
  });

  it('never retries a POST: not after a 5xx, a timeout or a reset connection', async () => {
    const agent = mockAgent();
    const pool = agent.get(V1);
    pool.intercept({ path: '/challenge', method: 'POST' }).reply(503, errorBody('service_unavailable', 'x'));
    pool.intercept({ path: '/challenge', method: 'POST' }).reply(200, {}, JSON_HEADERS).delay(NEVER_MS);
    pool
      .intercept({ path: '/challenge', method: 'POST' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const c = client({
      url: V1,
      dispatcher: agent,
      timeoutMs: ANSWER_MS,
      retry: { retries: 5, baseDelayMs: 1 },
    });
    const requests: unknown[] = [];
    const retries: unknown[] = [];
    c.on('request', (e) => requests.push(e));
    c.on('retry', (e) => retries.push(e));
    const body = { slot: 1, slot_hash: 'h' };
    await expect(c.v40.challenge(body)).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect(c.v40.challenge(body)).rejects.toMatchObject({ code: 'timeout' });
    await expect(c.v40.challenge(body)).rejects.toMatchObject({ code: 'network_error' });
    expect(requests).toHaveLength(3);
    expect(retries).toEqual([]);
  });

  it('resends an exactly-once signed operation identically, to the same validator, after a lost answer', async () => {
    const V2 = 'http://v2.test';
    const agent = mockAgent();
    const signer = Signer.generate();
    const seen: { endpoint: string; nonce: string; signature: string }[] = [];
    const record = (endpoint: string) => (opts: { headers?: unknown }) => {
      const h = opts.headers as Record<string, string>;
      seen.push({ endpoint, nonce: h['x-tm-nonce']!, signature: h['x-tm-signature']! });
    };
    const transfer = {
      transfer_id: 't-1',
      from: signer.publicKeyHex,
      to: KEY,
      token: 'PTM',
      amount: '1',
      memo: null,
      timestamp: 1,
    };
    const one = agent.get(V1);
    one.intercept({ path: '/transfer', method: 'POST' }).reply((opts) => {
      record(V1)(opts);
      return {
        statusCode: 502,
        data: errorBody('internal_error', 'proxy lost it'),
        responseOptions: JSON_HEADERS,
      };
    });
    one.intercept({ path: '/transfer', method: 'POST' }).reply((opts) => {
      record(V1)(opts);
      return { statusCode: 200, data: transfer, responseOptions: JSON_HEADERS };
    });
    agent
      .get(V2)
      .intercept({ path: '/transfer', method: 'POST' })
      .reply((opts) => {
        record(V2)(opts);
        return { statusCode: 200, data: transfer, responseOptions: JSON_HEADERS };
      });
    const c = client({ urls: [V1, V2], dispatcher: agent, signer, retry: { retries: 2, baseDelayMs: 1 } });
    expect(await c.economy.transfer({ to: KEY, token: 'PTM', amount: '1' })).toEqual(transfer);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toEqual(seen[0]);
    expect(seen.every((s) => s.endpoint === V1)).toBe(true);
  });

  it('never retries a 4xx', async () => {
    const agent = mockAgent();
    agent
      .get(V1)
      .intercept({ path: `/miners/${KEY}`, method: 'GET' })
      .reply(404, errorBody('not_found', 'no'), JSON_HEADERS);
    const c = client({ url: V1, dispatcher: agent, retry: { retries: 3, baseDelayMs: 1 } });
    const requests: unknown[] = [];
    c.on('request', (e) => requests.push(e));
    await expect(c.miners.get(KEY)).rejects.toMatchObject({ code: 'not_found' });
    expect(requests).toHaveLength(1);
  });
});
