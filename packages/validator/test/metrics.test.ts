/**
 * The validator's Prometheus series (docs/metrics.md): off by default; with a token, blocks
 * accepted and rejected by reason, difficulty, lattice size, event-stream readers, storage
 * transactions, per-key rate-limit refusals and the HTTP histogram by route; GET /admin/metrics
 * (JSON, the interface's) unchanged beside it.
 */
import { describe, expect, test } from 'vitest';
import { expectPromtoolClean } from '../../../test-support/prometheus.ts';
import { register, testKey, testValidator } from './helpers.js';
import { issue, mine, mineBlock, submit } from './hexchain-mine.js';

const TOKEN = 'prometheus-scrape-token-0001';

async function scrape(v: Awaited<ReturnType<typeof testValidator>>): Promise<string> {
  const res = await v.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('validator metrics', () => {
  test('off by default: GET /metrics is 404, GET /admin/metrics is still there', async () => {
    const v = await testValidator();
    expect((await v.inject('/metrics')).statusCode).toBe(404);
    const admin = await v.inject({
      url: '/admin/metrics',
      headers: { authorization: `Bearer ${v.adminToken}` },
    });
    expect(admin.statusCode).toBe(200);
    expect(admin.json()).toHaveProperty('blocks_accepted');
  });

  test('what this node did: blocks accepted and rejected by reason, difficulty, lattice, storage, routes', async () => {
    const v = await testValidator({ metricsToken: TOKEN });
    expect((await v.inject('/metrics')).statusCode).toBe(401);
    const key = testKey('metrics-miner');
    const rival = testKey('metrics-other');
    await register(v, key);
    await register(v, rival);
    const before = await scrape(v);
    expect(value(before, 'tensormine_validator_accepted_total{kind="block"}')).toBe(0);
    expect(value(before, 'tensormine_validator_hexchain_difficulty_hashes')).toBe(64);
    const blocksBefore = value(before, 'tensormine_validator_hexchain_blocks')!;

    await mineBlock(v, key);
    await mineBlock(v, key);
    // The same cell twice: the second block is coordinate_occupied.
    const challenge = await issue(v);
    const first = mine(challenge, key);
    expect((await submit(v, first)).statusCode).toBe(200);
    const other = mine(challenge, rival);
    expect((await submit(v, other)).statusCode).toBe(409);

    const text = await scrape(v);
    await expectPromtoolClean(text);
    expect(value(text, `tensormine_validator_node_info{node_id="${v.context.nodeId}",mode="single"}`)).toBe(
      1,
    );
    expect(value(text, 'tensormine_validator_accepted_total{kind="block"}')).toBe(3);
    expect(
      value(text, 'tensormine_validator_rejected_total{kind="block",reason="coordinate_occupied"}'),
    ).toBe(1);
    expect(value(text, 'tensormine_validator_challenges_issued_total{kind="hexchain"}')).toBe(3);
    expect(value(text, 'tensormine_validator_hexchain_blocks')).toBe(blocksBefore + 3);
    expect(value(text, 'tensormine_validator_event_stream_readers')).toBe(0);
    expect(value(text, 'tensormine_validator_event_stream_events_total')).toBeGreaterThanOrEqual(3);
    expect(
      value(text, 'tensormine_validator_storage_transactions_total{kind="write",outcome="committed"}'),
    ).toBeGreaterThanOrEqual(6);
    expect(value(text, 'tensormine_validator_storage_transaction_reruns_total')).toBe(0);
    expect(
      value(
        text,
        'http_request_duration_seconds_count{method="POST",route="/api/hexchain/submit",status_code="200"}',
      ),
    ).toBe(3);
    expect(
      value(
        text,
        'http_request_duration_seconds_count{method="POST",route="/api/hexchain/submit",status_code="409"}',
      ),
    ).toBe(1);

    // The interface's JSON is unchanged beside it (and counts the network's totals).
    const admin = await v.inject({
      url: '/admin/metrics',
      headers: { authorization: `Bearer ${v.adminToken}` },
    });
    expect(admin.json()).toMatchObject({ blocks_accepted: 3 });
  });

  test('per-key rate-limit refusals are counted apart from the per-address ones', async () => {
    const v = await testValidator({ metricsToken: TOKEN, keyRateLimitBurst: 2, keyRateLimitPerSecond: 1 });
    const key = testKey('metrics-limited');
    await register(v, key); // the key's first token; the block takes its second
    const challenge = await issue(v);
    const submission = mine(challenge, key);
    expect((await submit(v, submission)).statusCode).toBe(200);
    const again = await submit(v, submission);
    expect(again.statusCode).toBe(429);
    const text = await scrape(v);
    await expectPromtoolClean(text);
    expect(value(text, 'tensormine_rate_limited_requests_total{limit="key"}')).toBe(1);
    expect(value(text, 'tensormine_rate_limited_requests_total{limit="address"}')).toBe(0);
  });

  test('a listener of its own, and the start-up line says where', async () => {
    const v = await testValidator({ metricsPort: 0 });
    const url = await v.listen({ host: '127.0.0.1', port: 0 });
    const where = v.app.metrics.listenerUrl;
    expect(where).toBeDefined();
    expect(where).not.toBe(url);
    const res = await fetch(`${where}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('tensormine_validator_hexchain_blocks ');
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    const { startupLines } = await import('../src/startup.js');
    expect(startupLines(v, url)).toContain(`  metrics: ${where}/metrics`);
  });
});
