import { setTimeout as sleep } from 'node:timers/promises';
import { MockAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait.ts';
import type { FailoverEvent, RecoveredEvent, RequestEvent } from '../src/index.js';
import { client, track } from './helpers.js';

/** Failover across several validators, against undici's MockAgent. */

const A = 'http://a.test';
const B = 'http://b.test';
const C = 'http://c.test';
const HEALTH = {
  status: 'ok',
  service: 'tensormine-validator',
  version: '4.1',
  protocols: ['4.0', '4.1'],
  software_version: '0.1.0',
  node_id: 'node-1',
  node_pubkey: 'ab'.repeat(32),
  uptime_s: 3,
};
const PEERS = { peers: [], total_nodes: 1, synced: true, mode: 'local_only' };
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };
const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

function mockAgent(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  return track(agent);
}

function record(c: ReturnType<typeof client>) {
  const requests: RequestEvent[] = [];
  const failovers: FailoverEvent[] = [];
  const recovered: RecoveredEvent[] = [];
  c.on('request', (e) => requests.push(e));
  c.on('failover', (e) => failovers.push(e));
  c.on('recovered', (e) => recovered.push(e));
  return { requests, failovers, recovered };
}

describe('failover', () => {
  it('uses the primary while it answers', async () => {
    const agent = mockAgent();
    agent.get(A).intercept({ path: '/network/peers' }).reply(200, PEERS, JSON_HEADERS).times(2);
    const c = client({ urls: [A, B], dispatcher: agent });
    const seen = record(c);
    await c.node.peers();
    await c.node.peers();
    expect(seen.requests.map((r) => r.endpoint)).toEqual([A, A]);
    expect(c.endpoints().map((e) => [e.url, e.primary, e.active, e.up])).toEqual([
      [A, true, true, true],
      [B, false, false, true],
    ]);
  });

  it('moves a GET to the next validator on a network error, a timeout or a 5xx, and reports it', async () => {
    const agent = mockAgent();
    agent.get(A).intercept({ path: '/network/peers' }).replyWithError(refused());
    agent.get(B).intercept({ path: '/network/peers' }).reply(200, PEERS, JSON_HEADERS).delay(60_000);
    agent
      .get(C)
      .intercept({ path: '/network/peers' })
      .reply(502, { statusCode: 502, code: 'x', error: 'e', message: 'm' });
    const c = client({
      urls: [A, B, C],
      dispatcher: agent,
      // generous: the answers of A and C (at once) never turn into timeouts on a loaded machine;
      // B's (a minute away) always does
      timeoutMs: 2_000,
      retry: { retries: 3, baseDelayMs: 1 },
    });
    const seen = record(c);
    const error = await c.node.peers().catch((e: unknown) => e);
    // Every endpoint failed once; the fourth attempt goes back to the primary, which fails again.
    expect(seen.requests.map((r) => r.endpoint)).toEqual([A, B, C, A]);
    expect(seen.failovers.map((f) => [f.from, f.to, f.reason])).toEqual([
      [A, B, 'network_error'],
      [B, C, 'timeout'],
      [C, A, 'server_error'],
    ]);
    expect(error).toMatchObject({ name: 'NetworkError', endpoint: A });
    expect(c.endpoints().every((e) => !e.up)).toBe(true);
  });

  it('stays on the fallback for later calls until the primary recovers', async () => {
    const agent = mockAgent();
    agent.get(A).intercept({ path: '/network/peers' }).replyWithError(refused());
    agent.get(B).intercept({ path: '/network/peers' }).reply(200, PEERS, JSON_HEADERS).times(3);
    const c = client({ urls: [A, B], dispatcher: agent });
    const seen = record(c);
    await c.node.peers();
    await c.node.peers();
    await c.node.peers();
    expect(seen.requests.map((r) => r.endpoint)).toEqual([A, B, B, B]);
    expect(c.endpoints().find((e) => e.url === A)).toMatchObject({
      up: false,
      active: false,
      lastError: 'network_error',
    });
  });

  it('ranks the fallbacks by the latency of their health probe', async () => {
    const agent = mockAgent();
    agent.get(A).intercept({ path: '/health' }).replyWithError(refused());
    agent.get(B).intercept({ path: '/health' }).reply(200, HEALTH, JSON_HEADERS).delay(1_000);
    agent.get(C).intercept({ path: '/health' }).reply(200, HEALTH, JSON_HEADERS).delay(5);
    agent.get(C).intercept({ path: '/network/peers' }).reply(200, PEERS, JSON_HEADERS);
    const c = client({ urls: [A, B, C], dispatcher: agent });
    const seen = record(c);
    const states = await c.probe();
    expect(states.map((s) => [s.url, s.up, s.active])).toEqual([
      [A, false, false],
      [B, true, false],
      [C, true, true],
    ]);
    expect(states[1]!.latencyMs!).toBeGreaterThan(states[2]!.latencyMs!);
    expect(seen.failovers.map((f) => [f.from, f.to, f.reason])).toEqual([[A, C, 'probe']]);
    await c.node.peers();
    expect(seen.requests.map((r) => r.endpoint)).toEqual([C]);
  });

  it('switches back to the primary when a probe finds it healthy again, and says so', async () => {
    const agent = mockAgent();
    agent.get(A).intercept({ path: '/network/peers' }).replyWithError(refused());
    agent.get(B).intercept({ path: '/network/peers' }).reply(200, PEERS, JSON_HEADERS);
    agent.get(A).intercept({ path: '/health' }).reply(200, HEALTH, JSON_HEADERS);
    agent.get(B).intercept({ path: '/health' }).reply(200, HEALTH, JSON_HEADERS);
    agent.get(A).intercept({ path: '/network/peers' }).reply(200, PEERS, JSON_HEADERS);
    const c = client({ urls: [A, B], dispatcher: agent });
    const seen = record(c);
    await c.node.peers();
    expect(c.endpoints().find((e) => e.active)?.url).toBe(B);
    await c.probe();
    expect(seen.recovered).toHaveLength(1);
    expect(seen.recovered[0]).toMatchObject({ endpoint: A, active: A });
    expect(seen.recovered[0]!.downForMs).toBeGreaterThanOrEqual(0);
    await c.node.peers();
    expect(seen.requests.map((r) => r.endpoint)).toEqual([A, B, A]);
  });

  it('probes in the background on an unref’d timer, and close() stops it', async () => {
    const agent = mockAgent();
    let probes = 0;
    for (const url of [A, B]) {
      agent
        .get(url)
        .intercept({ path: '/health' })
        .reply(() => {
          probes++;
          return { statusCode: 200, data: HEALTH, responseOptions: JSON_HEADERS };
        })
        .persist();
    }
    const c = client({ urls: [A, B], dispatcher: agent, healthCheckIntervalMs: 20 });
    await waitFor(() => probes >= 4, 'four background probes');
    expect(c.endpoints().every((e) => e.latencyMs !== undefined)).toBe(true);
    await c.close();
    const after = probes;
    await sleep(100);
    expect(probes).toBe(after);
  });

  it('sends a POST to the next validator only when the connection was refused (it never left)', async () => {
    const agent = mockAgent();
    const challenge = { slot: 1, slot_hash: 'h' };
    agent.get(A).intercept({ path: '/challenge', method: 'POST' }).replyWithError(refused());
    agent
      .get(B)
      .intercept({ path: '/challenge', method: 'POST' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const c = client({ urls: [A, B, C], dispatcher: agent });
    const seen = record(c);
    const error = await c.v40.challenge(challenge).catch((e: unknown) => e);
    // A refused: resent to B. B reset the connection after the request left: not resent to C.
    expect(seen.requests.map((r) => r.endpoint)).toEqual([A, B]);
    expect(error).toMatchObject({ name: 'NetworkError', requestSent: true, endpoint: B });
    expect(seen.failovers.map((f) => [f.from, f.to])).toEqual([
      [A, B],
      [B, C],
    ]);
  });

  it('pins a call to one endpoint: no failover, even when it fails', async () => {
    const agent = mockAgent();
    agent
      .get(B)
      .intercept({ path: '/network/peers' })
      .reply(500, { statusCode: 500, code: 'internal_error', error: 'e', message: 'm' })
      .times(2);
    const c = client({ urls: [A, B], dispatcher: agent, retry: { retries: 1, baseDelayMs: 1 } });
    const seen = record(c);
    await expect(c.node.peers({ endpoint: B })).rejects.toMatchObject({ code: 'internal_error' });
    expect(seen.requests.map((r) => r.endpoint)).toEqual([B, B]);
    await expect(c.node.peers({ endpoint: 'http://elsewhere.test' })).rejects.toMatchObject({
      name: 'InvalidInputError',
    });
  });
});
