import { chmodSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ERROR_CODES, ROUTES, routesOf } from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import { createValidator } from '../src/app.js';
import { post, testValidator } from './helpers.js';

describe('node endpoints', () => {
  it('serves /health with the protocols it speaks', async () => {
    const v = await testValidator();
    const res = await v.inject('/health');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'ok',
      service: 'tensormine-validator',
      version: '4.1',
      protocols: ['4.0', '4.1'],
      node_id: v.context.nodeId,
    });
  });

  it('reports local_only peers: none, one node, synced (cluster mode alone on PostgreSQL)', async () => {
    const v = await testValidator();
    // TENSORMINE_TEST_STORAGE=postgres runs this file on PostgreSQL: a cluster of one node.
    const mode = v.cluster.enabled ? 'cluster' : 'local_only';
    expect((await v.inject('/network/peers')).json()).toEqual({
      peers: [],
      total_nodes: 1,
      synced: true,
      mode,
      node_id: v.context.nodeId,
    });
    const status = (await v.inject('/status')).json();
    expect(status).toMatchObject({
      peer_network_mode: mode,
      pool_strategy: 'solo',
      difficulty: 2,
      max_tensor_dim: 64,
      network: { peers: [], total_nodes: 1, synced: true },
      hexchain: { enabled: true, difficulty: 64, occupied: 1 },
    });
  });

  it('serves the OpenAPI document of every registered route', async () => {
    const v = await testValidator();
    const doc = (await v.inject('/openapi.json')).json();
    expect(doc.openapi).toBe('3.1.0');
    for (const id of v.registeredRoutes) {
      const route = ROUTES[id];
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      expect(doc.paths[path]?.[route.method.toLowerCase()]?.operationId).toBe(id);
    }
  });

  it('registers every validator route of the v4.0 mining, hexchain, node and admin issue', async () => {
    const v = await testValidator();
    // Every validator route of the table is served (the economy and the pool included).
    const economy = new Set<string>();
    const expected = routesOf('validator')
      .map((r) => r.operationId)
      .filter((id) => !economy.has(id));
    expect([...v.registeredRoutes].sort()).toEqual(expected.sort());
  });

  it('does not serve /api/hexchain/ when hexchain is off, and says so', async () => {
    const v = await testValidator({ hexchain: false });
    const res = await v.inject('/api/hexchain/status');
    expect(res.statusCode).toBe(404);
    expect((await v.inject('/health')).json().protocols).toEqual(['4.0']);
  });
});

describe('errors', () => {
  it('answers an unknown route with the one error shape', async () => {
    const v = await testValidator();
    const res = await v.inject('/nope?x=1');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      statusCode: 404,
      code: 'not_found',
      error: 'Not Found',
      message: 'no route GET /nope',
    });
  });

  it('rejects invalid JSON, a wrong content type and an oversized body with 4xx codes', async () => {
    const v = await testValidator({ bodyLimitBytes: 2048 });
    const bad = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: '{"slot": 1,',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_json');

    const text = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: 'slot=1',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('unsupported_media_type');

    const huge = await post(v, '/challenge', { slot: 1, slot_hash: 'x'.repeat(4096) });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().code).toBe('body_too_large');
  });

  it('lists every schema violation with its path', async () => {
    const v = await testValidator();
    const res = await post(v, '/challenge', { slot: -1, slot_hash: 7 });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('validation_failed');
    expect(body.details.errors.map((e: { path: string }) => e.path)).toEqual(
      expect.arrayContaining(['body/slot', 'body/slot_hash']),
    );
  });

  it('never answers a 5xx to hostile input', async () => {
    const v = await testValidator();
    const bodies: unknown[] = [
      null,
      [],
      'string',
      42,
      { slot: 1e300, slot_hash: 'a' },
      { slot: '1', slot_hash: 'a' },
      JSON.parse('{"__proto__": {"polluted": true}, "slot": 1, "slot_hash": "a"}'),
      { proof: { challenge_id: 'x' } },
      { challenge_id: 'x', block: { coord: { q: 1, r: 1, s: 1 } } },
    ];
    for (const url of [
      '/challenge',
      '/submit',
      '/api/hexchain/challenge',
      '/api/hexchain/submit',
      '/devices/register',
    ]) {
      for (const payload of bodies) {
        const res = await v.inject({
          method: 'POST',
          url,
          payload: JSON.stringify(payload),
          headers: { 'content-type': 'application/json' },
        });
        expect(res.statusCode, `${url} ${JSON.stringify(payload)}`).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, `${url} ${JSON.stringify(payload)}`).toBeLessThan(500);
        expect(Object.keys(ERROR_CODES)).toContain(res.json().code);
      }
    }
  });

  it('limits requests per client address with 429 and Retry-After', async () => {
    const v = await createValidator({
      dataDir: ':memory:',
      rateLimitBurst: 3,
      rateLimitPerSecond: 1,
      now: () => 1_000_000,
    });
    try {
      const codes = [];
      for (let i = 0; i < 5; i++) codes.push((await v.inject('/health')).statusCode);
      expect(codes).toEqual([200, 200, 200, 429, 429]);
      const res = await v.inject('/health');
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json().code).toBe('rate_limited');
    } finally {
      await v.close();
    }
  });
});

describe('admin', () => {
  it('refuses admin routes without the bearer token, or with a wrong one', async () => {
    const v = await testValidator();
    const none = await v.inject('/admin/metrics');
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({
      code: 'unauthorized',
      message: 'admin routes need the header Authorization: Bearer <admin token>',
    });
    expect(none.headers['www-authenticate']).toContain('Bearer');
    const wrong = await v.inject({
      url: '/admin/metrics',
      headers: { authorization: 'Bearer not-the-token' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().message).toBe('the admin token is wrong');
    const change = await post(v, '/admin/config', { difficulty: 9 });
    expect(change.statusCode).toBe(401);
  });

  it('serves metrics with the seed fields and counts rejections by reason', async () => {
    const v = await testValidator();
    await post(v, '/submit', {
      proof: {
        challenge_id: 'c-unknown',
        challenge_hash: 'ab'.repeat(32),
        tensor_result_hash: 'ab'.repeat(32),
        mml_score: 0,
        path_signature: 'ab'.repeat(8),
        path_distance: 0,
        computation_nonce: 1,
        computation_hash: 'ab'.repeat(32),
        miner_pubkey: 'ab'.repeat(32),
      },
    });
    const res = await v.inject({
      url: '/admin/metrics',
      headers: { authorization: `Bearer ${v.adminToken}` },
    });
    expect(res.statusCode).toBe(200);
    const m = res.json();
    expect(m).toMatchObject({ challenges_issued: 0, proofs_valid: 0, proofs_rejected: 1 });
    expect(m.rejections_by_reason).toEqual({ challenge_not_found: 1 });
    expect(m.uptime_pct).toBeGreaterThan(0);
    expect(typeof m.avg_response_time_ms).toBe('number');
  });

  it('validates config ranges, applies changes and persists them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tm-admin-'));
    const v = await createValidator({ dataDir, logger: false });
    const auth = { authorization: `Bearer ${v.adminToken}` };
    const bad = await v.inject({
      method: 'POST',
      url: '/admin/config',
      payload: { difficulty: 99 },
      headers: auth,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('validation_failed');
    const empty = await v.inject({ method: 'POST', url: '/admin/config', payload: {}, headers: auth });
    expect(empty.statusCode).toBe(400);
    const ok = await v.inject({
      method: 'POST',
      url: '/admin/config',
      payload: { difficulty: 9, max_tensor_dim: 16, pool_strategy: 'pplns' },
      headers: auth,
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      applied: true,
      config: { difficulty: 9, max_tensor_dim: 16, pool_strategy: 'pplns' },
    });
    const challenge = await post(v, '/challenge', { slot: 1, slot_hash: 'abc' });
    expect(challenge.json()).toMatchObject({ difficulty: 9, input_tensor: { shape: [16, 16] } });
    await v.close();

    const again = await createValidator({ dataDir, logger: false });
    try {
      expect(again.adminToken).toBe(v.adminToken);
      const status = (await again.inject('/status')).json();
      expect(status).toMatchObject({ difficulty: 9, max_tensor_dim: 16, pool_strategy: 'pplns' });
    } finally {
      await again.close();
    }
  });

  it('generates an admin token at first start and stores it with mode 0600', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tm-token-'));
    const v = await createValidator({ dataDir, logger: false });
    try {
      expect(v.adminTokenFile).toBe(join(dataDir, 'admin-token'));
      expect(readFileSync(v.adminTokenFile!, 'utf8').trim()).toBe(v.adminToken);
      expect(statSync(v.adminTokenFile!).mode & 0o777).toBe(0o600);
      expect(v.adminToken.length).toBeGreaterThanOrEqual(32);
    } finally {
      await v.close();
    }
  });

  it('sets an existing admin-token file with mode 0644 to 0600 before using it, and refuses a symlink', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tm-token-'));
    const file = join(dataDir, 'admin-token');
    writeFileSync(file, 'an-existing-admin-token-value\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    const v = await createValidator({ dataDir, logger: false });
    try {
      expect(v.adminToken).toBe('an-existing-admin-token-value');
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      await v.close();
    }
    // Too short to be a token: replaced, and 0600 even though the old file was 0644.
    writeFileSync(file, 'short\n');
    chmodSync(file, 0o644);
    const w = await createValidator({ dataDir, logger: false });
    try {
      expect(w.adminToken).not.toBe('short');
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      await w.close();
    }
    const linked = mkdtempSync(join(tmpdir(), 'tm-token-'));
    symlinkSync(file, join(linked, 'admin-token'));
    await expect(createValidator({ dataDir: linked, logger: false })).rejects.toThrow(/not a regular file/);
  });

  it('uses a configured admin token and writes no file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tm-token-'));
    const v = await createValidator({ dataDir, adminToken: 'a-configured-token-of-length', logger: false });
    try {
      expect(v.adminTokenFile).toBeUndefined();
      const res = await v.inject({
        url: '/admin/config',
        headers: { authorization: 'Bearer a-configured-token-of-length' },
      });
      expect(res.statusCode).toBe(200);
    } finally {
      await v.close();
    }
  });
});

describe('path and query parameters', () => {
  it('converts integers strictly: "1.5", "0x1", "01" and "1e3" are refused, not rounded', async () => {
    const v = await testValidator();
    for (const bad of ['1.5', '0x1', '01', '1e3', ' 1']) {
      const res = await v.inject(`/api/hexchain/lattice/${encodeURIComponent(bad)}/-1/0`);
      expect(res.statusCode, bad).toBe(400);
    }
    const limit = await v.inject('/api/hexchain/lattice?limit=1.5');
    expect(limit.statusCode).toBe(400);
    expect(limit.json().code).toBe('validation_failed');
    expect((await v.inject('/api/hexchain/lattice?limit=2')).statusCode).toBe(200);
  });
});
