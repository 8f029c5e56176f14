import { describe, expect, test } from 'vitest';
import { startControlApi } from '../src/control-api.js';
import { MiningEngine } from '../src/engine.js';
import { Miner } from '../src/miner.js';
import { cleanup, FakeSource, waitFor } from './helpers.js';

const TOKEN = 'a-control-token-of-some-length';

async function setup() {
  const engine = new MiningEngine({ threads: 2 });
  const miner = new Miner({ source: new FakeSource(), backends: [engine] });
  cleanup(() => miner.stop());
  await miner.start();
  const api = await startControlApi({ target: miner, token: TOKEN, version: '0.1.0' });
  cleanup(() => api.close());
  const call = (path: string, init: RequestInit & { token?: string | null } = {}) =>
    fetch(`${api.url}${path}`, {
      ...init,
      headers: init.token === null ? {} : { authorization: `Bearer ${init.token ?? TOKEN}` },
    });
  return { engine, miner, api, call };
}

describe('control API', () => {
  test('requires the bearer token', async () => {
    const { call } = await setup();
    for (const token of [null, 'wrong-token-of-some-length', `${TOKEN}x`]) {
      const res = await call('/api/system/info', { token });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.json()).toEqual({
        code: 'unauthorized',
        message: 'expected Authorization: Bearer <control API token>',
      });
    }
    const pause = await call('/api/pause', { method: 'POST', token: null });
    expect(pause.status).toBe(401);
    expect((await call('/api/system/info')).status).toBe(200);
  });

  test('GET /api/system/info reports AxeOS fields and ours', async () => {
    const { call, api } = await setup();
    expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await call('/api/system/info');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const info = (await res.json()) as Record<string, unknown>;
    expect(info).toMatchObject({
      hashRate_1m: null, // n/a: a minute has not passed
      hashRate_10m: null,
      hashRate_1h: null,
      sharesAccepted: 0,
      sharesRejected: 0,
      sharesRejectedReasons: [],
      bestDiff: 0,
      uptimeSeconds: expect.any(Number),
      version: '0.1.0',
      validatorUrl: 'fake://source',
      paused: false,
      connected: true,
      hashrateUnit: 'H/s',
      journalPending: 0,
    });
    expect(Object.keys(info)).toEqual(
      expect.arrayContaining([
        'hashRate',
        'expectedHashrate',
        'protocolVersion',
        'devices',
        'hashrate',
        'job',
      ]),
    );
    const devices = info.devices as { id: string; kind: string; state: string; workers: unknown[] }[];
    expect(devices.map((d) => [d.id, d.kind])).toEqual([['cpu', 'cpu']]);
    expect(devices[0]!.workers).toHaveLength(2);
    expect(await (await call('/api/summary')).json()).toMatchObject({ sharesAccepted: 0 });
  });

  test('pause and resume work through the API', async () => {
    const { call, engine, miner } = await setup();
    await waitFor(() => engine.totalHashes() > 0, 'hashing');
    const paused = await call('/api/pause', { method: 'POST' });
    expect(await paused.json()).toEqual({ paused: true });
    expect(miner.paused).toBe(true);
    await waitFor(() => engine.workerStates().every((s) => s === 'paused'), 'workers paused');
    const before = engine.totalHashes();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(engine.totalHashes()).toBe(before);
    expect(((await (await call('/api/system/info')).json()) as { paused: boolean }).paused).toBe(true);

    const resumed = await call('/api/resume', { method: 'POST' });
    expect(await resumed.json()).toEqual({ paused: false });
    await waitFor(() => engine.totalHashes() > before, 'hashing again');
  });

  test('answers 404 and 405 with a code', async () => {
    const { call } = await setup();
    const missing = await call('/api/nothing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: 'not_found', message: 'no route /api/nothing' });
    const wrong = await call('/api/pause');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(await wrong.json()).toEqual({
      code: 'method_not_allowed',
      message: '/api/pause takes POST, got GET',
    });
  });

  test('refuses a short token and a non-loopback address', async () => {
    const target = { stats: () => ({}) as never, pause() {}, resume() {} };
    await expect(startControlApi({ target, token: 'short' })).rejects.toThrow(
      'control API token: expected at least 16 characters, got 5',
    );
    await expect(startControlApi({ target, token: TOKEN, host: '0.0.0.0' })).rejects.toThrow(
      'control API host: expected a loopback address, got 0.0.0.0',
    );
  });
});
