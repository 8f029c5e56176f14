/**
 * The control API (AxeOS and xmrig style): reads open on the loopback and refused for a foreign
 * Host, writes only with the token; the AxeOS summary with its units; the configuration read and
 * changed while mining (intensity in place, threads and kernel by restarting the workers); pause,
 * resume, restart; the Prometheus series; the page; the one error shape.
 */
import { request as httpRequest } from 'node:http';
import { MINER_KERNEL_CHOICES, MinerSystemInfoSchema } from '@tensormine/protocol';
import { Compile } from 'typebox/compile';
import { describe, expect, test } from 'vitest';
import { expectPromtoolClean } from '../../../test-support/prometheus.ts';
import { systemInfo } from '../src/control/info.js';
import { minerControlTarget } from '../src/control/target.js';
import { startControlApi } from '../src/control-api.js';
import type { DeviceUnitInfo } from '../src/device.js';
import { MiningEngine } from '../src/engine.js';
import { KERNEL_CHOICES } from '../src/kernels/choice.js';
import { Miner } from '../src/miner.js';
import { cleanup, FakeSource, fakeDate, passHashrateWindow, waitFor } from './helpers.js';

const TOKEN = 'a-control-token-of-some-length';

async function setup() {
  const engine = new MiningEngine({ threads: 2, kernel: 'wasm' });
  const miner = new Miner({ source: new FakeSource(), backends: [engine] });
  cleanup(() => miner.stop());
  await miner.start();
  const api = await startControlApi({
    target: minerControlTarget(miner, engine),
    token: TOKEN,
    version: '0.1.0',
  });
  cleanup(() => api.close());
  const call = (path: string, init: RequestInit & { token?: string } = {}) =>
    fetch(`${api.url}${path}`, {
      ...init,
      headers: {
        ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
    });
  /** A POST with the token, another token, or none (null). */
  const post = (path: string, body?: unknown, token: string | null = TOKEN) =>
    call(path, {
      method: 'POST',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(token === null ? {} : { token }),
    });
  return { engine, miner, api, call, post };
}

/** A GET with a Host header of our choosing (fetch does not let one set it). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { host } }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('control API', () => {
  test('reads are open on the loopback; every change needs the token', async () => {
    const { call, post } = await setup();
    expect((await call('/api/system/info')).status).toBe(200);
    expect((await call('/api/config')).status).toBe(200);
    for (const token of [null, 'wrong-token-of-some-length', `${TOKEN}x`]) {
      for (const path of ['/api/pause', '/api/resume', '/api/system/restart']) {
        const res = await post(path, undefined, token);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="tensormine-miner"');
        expect(await res.json()).toMatchObject({
          statusCode: 401,
          code: 'unauthorized',
          error: 'Unauthorized',
        });
      }
      expect((await post('/api/config', { intensity: 0.5 }, token)).status).toBe(401);
    }
    const missing = (await (await post('/api/pause', undefined, null)).json()) as { message: string };
    expect(missing.message).toBe(
      'control API changes need the header Authorization: Bearer <control API token>',
    );
  });

  test('answers only loopback Host names (DNS rebinding)', async () => {
    const { api } = await setup();
    const port = new URL(api.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost']) {
      expect((await getWithHost(`${api.url}/api/system/info`, host)).status).toBe(200);
    }
    const foreign = await getWithHost(`${api.url}/api/system/info`, `attacker.example:${port}`);
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ code: 'host_not_allowed' });
  });

  test('GET /api/system/info: AxeOS fields in GH/s, ours in H/s with the unit in the name', async () => {
    fakeDate();
    const { call, api, engine } = await setup();
    expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await passHashrateWindow(engine);
    await waitFor(() => engine.hashrate().total['10s'] !== undefined, 'a 10 s window');
    const res = await call('/api/system/info');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const info = (await res.json()) as Record<string, unknown> & {
      hashRate: number;
      hashesPerSecond: Record<string, number | null>;
    };
    expect(info).toMatchObject({
      hashRate_1h: null,
      sharesAccepted: 0,
      sharesRejected: 0,
      sharesStale: 0,
      sharesRejectedReasons: [],
      bestDiff: 0,
      uptimeSeconds: expect.any(Number),
      version: '0.1.0',
      validatorUrl: 'fake://source',
      paused: false,
      connected: true,
      journalPending: 0,
    });
    expect(info).not.toHaveProperty('hashrateUnit');
    // The AxeOS field is the same rate in GH/s (read a moment later, so within a factor).
    expect(info.hashRate).toBeGreaterThan(0);
    expect(info.hashesPerSecond['10s']).toBeGreaterThan(1000);
    expect(info.hashRate * 1e9).toBeCloseTo(info.hashesPerSecond['10s']!, -3);
    const devices = info.devices as {
      id: string;
      kind: string;
      workers: unknown[];
      expectedHashesPerSecond: number;
    }[];
    expect(devices.map((d) => [d.id, d.kind])).toEqual([['cpu', 'cpu']]);
    expect(devices[0]!.workers).toHaveLength(2);
    expect(await (await call('/api/summary')).json()).toMatchObject({ sharesAccepted: 0 });
  });

  test('the configuration, changed while mining: intensity in place, threads and kernel restart the workers', async () => {
    const { call, post, engine } = await setup();
    expect(await (await call('/api/config')).json()).toEqual({
      cpu: true,
      threads: 2,
      intensity: 1,
      kernel: 'wasm',
      kernelInUse: 'wasm',
      validators: ['fake://source'],
      local: false,
      pool: false,
      protocol: 'auto',
      devices: [],
      paused: false,
    });
    const intensity = await post('/api/config', { intensity: 0.5 });
    expect(intensity.status).toBe(200);
    expect(await intensity.json()).toMatchObject({
      applied: ['intensity'],
      restarted: 'none',
      config: { intensity: 0.5 },
    });
    expect(engine.intensity).toBe(0.5);

    const before = engine.totalHashes();
    const res = await post('/api/config', { threads: 1, kernel: 'js' });
    expect(await res.json()).toMatchObject({
      applied: ['threads', 'kernel'],
      restarted: 'workers',
      config: { threads: 1, kernel: 'js', kernelInUse: 'js', intensity: 0.5 },
    });
    expect(engine.threads).toBe(1);
    expect(engine.workerStates()).toHaveLength(1);
    // The totals carry on, and the new worker mines the job in hand.
    expect(engine.totalHashes()).toBeGreaterThanOrEqual(before);
    const after = engine.totalHashes();
    await waitFor(() => engine.totalHashes() > after, 'the new worker hashing');
    expect((await post('/api/config', { threads: 1 })).status).toBe(200);
  });

  test('refuses what it cannot do, and bad bodies, in the one error shape', async () => {
    const { post } = await setup();
    const validators = await post('/api/config', { validators: ['http://127.0.0.1:8420'] });
    expect(validators.status).toBe(409);
    expect(await validators.json()).toMatchObject({ code: 'miner_setting_refused' });
    for (const body of [
      {},
      { threads: 0 },
      { intensity: 1.5 },
      { kernel: 'gpu' },
      { threads: 2, colour: 'red' },
    ]) {
      const res = await post('/api/config', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'validation_failed' });
    }
  });

  test('pause, resume and restart', async () => {
    const { call, post, engine, miner } = await setup();
    await waitFor(() => engine.totalHashes() > 0, 'hashing');
    expect(await (await post('/api/pause')).json()).toEqual({ paused: true });
    expect(miner.paused).toBe(true);
    await waitFor(() => engine.workerStates().every((s) => s === 'paused'), 'workers paused');
    expect(((await (await call('/api/system/info')).json()) as { paused: boolean }).paused).toBe(true);
    const before = engine.totalHashes();
    expect(await (await post('/api/resume')).json()).toEqual({ paused: false });
    await waitFor(() => engine.totalHashes() > before, 'hashing again');

    const restart = await post('/api/system/restart');
    expect(restart.status).toBe(200);
    expect(await restart.json()).toMatchObject({ restarted: true, config: { threads: 2 } });
    expect(miner.stats().running).toBe(true);
    const again = engine.totalHashes();
    await waitFor(() => engine.totalHashes() > again, 'hashing after the restart');
  });

  test('GET /metrics: the miner in Prometheus format', async () => {
    fakeDate();
    const { call, engine } = await setup();
    await passHashrateWindow(engine);
    await waitFor(() => engine.hashrate().total['10s'] !== undefined, 'a 10 s window');
    const res = await call('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toMatch(/^tensormine_miner_hashrate_hashes_per_second\{device="cpu",window="10s"\} \d/m);
    await expectPromtoolClean(text);
    expect(text).toMatch(/^tensormine_miner_hashes_total\{device="cpu"\} \d/m);
    expect(text).toContain('tensormine_miner_results_total{outcome="accepted"} 0\n');
    expect(text).toContain('tensormine_miner_results_total{outcome="stale"} 0\n');
    expect(text).toContain('tensormine_miner_cpu_threads 2\n');
    expect(text).toContain('tensormine_miner_cpu_kernel_info{setting="wasm",kernel="wasm"} 1\n');
    expect(text).toContain('tensormine_build_info{service="miner",version="0.1.0"} 1\n');
    expect(text).toMatch(
      /^http_request_duration_seconds_count\{method="GET",route="\/metrics"|^process_cpu_seconds_total/m,
    );
  });

  test('serves its page and the page’s assets under a strict content security policy', async () => {
    const { call } = await setup();
    const page = await call('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script src="/app.js"></script>');
    expect((await call('/app.js')).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await call('/app.css')).status).toBe(200);
  });

  test('answers 404 and 405 in the one error shape', async () => {
    const { call } = await setup();
    const missing = await call('/api/nothing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404, code: 'not_found' });
    const wrong = await call('/api/pause');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(await wrong.json()).toMatchObject({ code: 'method_not_allowed' });
  });

  test('refuses a short token; off the loopback, reads need the token too', async () => {
    const engine = new MiningEngine({ threads: 1, kernel: 'wasm' });
    const miner = new Miner({ source: new FakeSource(), backends: [engine] });
    const target = minerControlTarget(miner, engine);
    await expect(startControlApi({ target, token: 'short' })).rejects.toThrow(
      'control API token: expected at least 16 characters, got 5',
    );
    const api = await startControlApi({ target, token: TOKEN, host: '0.0.0.0' });
    cleanup(() => api.close());
    const url = `http://127.0.0.1:${api.port}`;
    const open = await fetch(`${url}/api/system/info`);
    expect(open.status).toBe(401);
    expect(((await open.json()) as { message: string }).message).toBe(
      'control API requests to a miner listening off the loopback need the header Authorization: Bearer <control API token>',
    );
    const read = await fetch(`${url}/api/config`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(read.status).toBe(200);
  });

  test('a board whose self-test timed out says so, why and when it is tried again; one that failed says why', () => {
    const miner = new Miner({ source: new FakeSource(), backends: [] });
    const stats = miner.stats();
    const none = {
      '10s': undefined,
      '60s': undefined,
      '15m': undefined,
      '10m': undefined,
      '1h': undefined,
      max: undefined,
    };
    const counters = {
      found: 0,
      hardwareErrors: 0,
      crcErrors: 0,
      resyncs: 0,
      retransmissions: 0,
      reboots: 0,
      linkLosses: 0,
    };
    const outcomes = { accepted: 0, rejected: 0, rejectedReasons: [] };
    const board = (id: string, state: DeviceUnitInfo['state'], selfTest?: DeviceUnitInfo['selfTest']) => ({
      id,
      kind: 'serial',
      state,
      chipId: id.slice(7),
      port: '/dev/ttyUSB0',
      firmware: '1.0.0',
      board: 'esp32',
      hashrate: none,
      totalHashes: 0,
      expectedHashrate: undefined,
      lastFoundAtMs: undefined,
      counters,
      ...(selfTest === undefined ? {} : { selfTest }),
      ...outcomes,
    });
    const retryAtMs = Date.UTC(2026, 10, 26, 13, 10, 5);
    const info = systemInfo({
      ...stats,
      devices: [
        {
          id: 'serial',
          kind: 'serial',
          state: 'starting',
          hashrate: { total: none, workers: [] },
          totalHashes: 0,
          expectedHashrate: undefined,
          lastFoundAtMs: undefined,
          ...outcomes,
          units: [
            board('serial:0000000000000001', 'self-test', {
              reason: 'hex: no RESULT within 3000 ms',
              retryAtMs,
            }),
            board('serial:0000000000000002', 'self-test failed', { reason: 'hex: wrong RESULT' }),
            board('serial:0000000000000003', 'idle'),
          ],
        },
      ],
    });
    expect([...Compile(MinerSystemInfoSchema).Errors(info)]).toEqual([]);
    expect(info.devices[0]!.boards!.map((b) => [b.state, b.selfTest])).toEqual([
      ['self-test', { reason: 'hex: no RESULT within 3000 ms', retryAt: '2026-11-26T13:10:05.000Z' }],
      ['self-test failed', { reason: 'hex: wrong RESULT', retryAt: null }],
      ['idle', null],
    ]);
  });

  test('the kernel settings are the protocol’s string enum', () => {
    expect([...KERNEL_CHOICES]).toEqual([...MINER_KERNEL_CHOICES]);
  });
});
