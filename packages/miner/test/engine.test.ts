import {
  proofBytesFromWire,
  proofMessage,
  signProof,
  verify,
  verifyBlock,
  verifyProof,
} from '@tensormine/protocol';
import { describe, expect, test, vi } from 'vitest';
import { MiningEngine, type MiningEngineOptions } from '../src/engine.js';
import type { MinerError } from '../src/errors.js';
import { type FoundResult, signFound } from '../src/found.js';
import { tensorJob } from '../src/job.js';
import {
  cleanup,
  hexJob,
  KEY,
  NEVER,
  next,
  signerOf,
  tensorChallenge,
  tensorTestJob,
  waitFor,
} from './helpers.js';

async function started(options: MiningEngineOptions = {}): Promise<MiningEngine> {
  const engine = new MiningEngine({ threads: 2, ...options });
  cleanup(() => engine.stop());
  await engine.start();
  return engine;
}

describe('MiningEngine', () => {
  test('finds a hexchain block that the reference verifier accepts, signed', async () => {
    const engine = await started();
    const job = hexJob(4096);
    const found = next<FoundResult>(engine, 'found');
    engine.setJob(job);
    const result = await found;
    expect(result.kind).toBe('hexchain');
    if (result.kind !== 'hexchain') return;
    const body = signFound(result, signerOf(KEY));
    const verdict = verifyBlock(
      { id: job.challengeId, coord: job.coord, challengeHash: job.challengeHash, target: job.target },
      body,
    );
    expect(verdict.ok).toBe(true);
    expect(result.challengeId).toBe(job.challengeId);
    expect(result.achievedDifficulty).toBeGreaterThanOrEqual(4096);
    // A solo job ends at its result.
    expect(engine.state).toBe('idle');
    expect(engine.job).toBeUndefined();
  });

  test.each([
    ['native', 'matmul', 'worker'],
    ['native', 'conv', 'worker'],
    ['esp32', 'conv', 'worker'],
    ['esp8266', 'matmul', 'worker'],
    // The reference check on the engine's thread, as before (MiningEngineOptions.referenceCheck).
    ['esp32', 'matmul', 'engine'],
  ] as const)(
    'finds a v4.0 proof (%s %s, checked by the reference in the %s) that verifyProof accepts, signed',
    async (device, operation, referenceCheck) => {
      const engine = await started({ referenceCheck });
      const { challenge, wire } = tensorChallenge(device, 4, operation);
      const found = next<FoundResult>(engine, 'found');
      engine.setJob(tensorJob(wire, KEY.publicKey));
      const result = await found;
      if (result.kind !== 'tensor') throw new Error('expected a tensor result');
      const { proof, signature } = signFound(result, signerOf(KEY));
      expect(verifyProof(challenge, proof, { signature })).toEqual({ ok: true });
      const bytes = proofBytesFromWire(proof, proof.mml_score * 65536);
      expect(
        verify(Uint8Array.from(signProof(bytes, KEY.secretKey)), proofMessage(bytes), KEY.publicKey),
      ).toBe(true);
    },
  );

  test('keeps mining after a result when the job says so, every result verified', async () => {
    const engine = await started();
    const results: FoundResult[] = [];
    engine.on('found', (f) => results.push(f));
    engine.setJob(hexJob(64, { stopOnFound: false }));
    await waitFor(() => results.length >= 5, 'five results');
    expect(new Set(results.map((r) => r.nonce)).size).toBe(results.length);
    expect(engine.state).toBe('ok');
    expect(engine.kernelErrors).toBe(0);
  });

  test('gives each worker a disjoint slice of the nonce range', async () => {
    const engine = await started();
    const results: FoundResult[] = [];
    engine.on('found', (f) => results.push(f));
    const exhausted = next<string>(engine, 'exhausted');
    const job = hexJob(16, { stopOnFound: false, nonceStart: 1000, nonceEnd: 3000 });
    engine.setJob(job);
    expect(await exhausted).toBe(job.challengeId);
    // Every nonce of [1000, 3000) hashed exactly once: the hash count is the range size.
    expect(engine.totalHashes()).toBe(2000);
    expect(results.every((r) => r.nonce >= 1000 && r.nonce < 3000)).toBe(true);
    expect(results.some((r) => r.worker === 0) && results.some((r) => r.worker === 1)).toBe(true);
    expect(results.filter((r) => r.worker === 0).every((r) => r.nonce < 2000)).toBe(true);
  });

  test('a new job replaces the current one within a batch', async () => {
    const engine = await started();
    const stale = hexJob(NEVER);
    engine.setJob(stale);
    await waitFor(() => engine.totalHashes() > 0, 'hashing');
    const fresh = hexJob(256);
    const found = next<FoundResult>(engine, 'found');
    engine.setJob(fresh);
    expect((await found).challengeId).toBe(fresh.challengeId);
  });

  test('pause stops the hash counters; resume restarts them', async () => {
    const engine = await started();
    engine.setJob(hexJob(NEVER));
    await waitFor(() => engine.totalHashes() > 0, 'hashing');
    engine.pause();
    expect(engine.state).toBe('paused');
    await waitFor(() => engine.workerStates().every((s) => s === 'paused'), 'workers paused');
    const before = engine.workerHashes();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(engine.workerHashes()).toEqual(before);
    engine.resume();
    expect(engine.state).toBe('ok');
    await waitFor(() => engine.workerHashes().every((h, i) => h > before[i]!), 'every worker hashing again');
  });

  test('stop ends the workers; a job set while stopped starts with them', async () => {
    const engine = new MiningEngine({ threads: 2 });
    cleanup(() => engine.stop());
    const job = hexJob(1024);
    engine.setJob(job);
    expect(engine.state).toBe('stopped');
    const found = next<FoundResult>(engine, 'found');
    await engine.start();
    expect((await found).challengeId).toBe(job.challengeId);
    await engine.stop();
    expect(engine.state).toBe('stopped');
    const after = engine.totalHashes();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(engine.totalHashes()).toBe(after);
  });

  test('a low intensity makes the workers sleep between batches', async () => {
    const engine = await started({ intensity: 0.1 });
    engine.setJob(tensorTestJob('esp8266', 24));
    await waitFor(() => engine.workerStates().includes('sleeping'), 'a sleeping worker');
    engine.setIntensity(1);
    expect(engine.intensity).toBe(1);
    expect(() => engine.setIntensity(0)).toThrow('intensity: expected a number in (0, 1], got 0');
  });

  test('a kernel result that the reference rejects is a kernel error, never a result', async () => {
    const engine = await started({ workerUrl: new URL('./fixtures/lying-worker.mjs', import.meta.url) });
    const found = vi.fn();
    engine.on('found', found);
    const error = next<MinerError>(engine, 'error');
    const job = hexJob(NEVER);
    engine.setJob(job);
    const e = await error;
    expect(e.code).toBe('kernel_mismatch');
    expect(e.message).toMatch(
      new RegExp(
        `^worker \\d reported nonce \\d+ for challenge ${job.challengeId}, which the reference verifier rejects: pow_above_target: `,
      ),
    );
    await waitFor(() => engine.kernelErrors === 2, 'both workers counted');
    expect(found).not.toHaveBeenCalled();
  });

  test('a tensor solution that the reference (run in its worker) rejects is a kernel error, never a result', async () => {
    const engine = await started({
      workerUrl: new URL('./fixtures/lying-tensor-worker.mjs', import.meta.url),
    });
    const found = vi.fn();
    engine.on('found', found);
    const error = next<MinerError>(engine, 'error');
    const job = tensorTestJob('esp8266', 4);
    engine.setJob(job);
    const e = await error;
    expect(e.code).toBe('kernel_mismatch');
    expect(e.message).toMatch(
      /which the reference verifier rejects: path_distance_above_max: path_distance 64 is above/,
    );
    await waitFor(() => engine.kernelErrors === 2, 'both workers counted');
    expect(found).not.toHaveBeenCalled();
  });

  test("a kernel's computation hash that differs from the reference's is a kernel error beside the result", async () => {
    const engine = await started({
      threads: 1,
      workerUrl: new URL('./fixtures/disagreeing-tensor-worker.mjs', import.meta.url),
    });
    const error = next<MinerError>(engine, 'error');
    const found = next<FoundResult>(engine, 'found');
    engine.setJob(tensorTestJob('esp8266', 4));
    const e = await error;
    expect(e.code).toBe('kernel_mismatch');
    expect(e.message).toMatch(
      /^worker 0: the kernel's computation_hash for nonce \d+ differs from the reference/,
    );
    const result = await found;
    expect(result.kind === 'tensor' && result.proof.computation_hash).toBe('00'.repeat(32));
    expect(engine.kernelErrors).toBe(1);
  });

  test('refuses a reference check place it does not know', () => {
    expect(() => new MiningEngine({ referenceCheck: 'main' as 'engine' })).toThrow(
      /referenceCheck: expected worker or engine, got main/,
    );
  });

  test('replaces a crashed worker, and gives up after repeated crashes', async () => {
    const engine = await started({
      threads: 1,
      workerUrl: new URL('./fixtures/crashing-worker.mjs', import.meta.url),
      respawnDelayMs: 10,
    });
    const errors: MinerError[] = [];
    engine.on('error', (e) => errors.push(e as MinerError));
    engine.setJob(hexJob(NEVER));
    await waitFor(() => engine.state === 'error', 'the engine to give up');
    expect(errors.map((e) => e.message)).toEqual([
      ...Array.from({ length: 5 }, () => 'worker 0 exited with code 3; restarting it'),
      'worker 0 exited with code 3; 6 crashes within a minute, not restarting',
    ]);
    expect(errors.every((e) => e.code === 'worker_failed')).toBe(true);
  });

  test('rejects a malformed job with what was expected', async () => {
    const engine = await started();
    expect(() => engine.setJob({ ...hexJob(16), minerPublicKey: new Uint8Array(31) })).toThrow(
      /minerPublicKey: expected 32 bytes, got 31/,
    );
    expect(() => engine.setJob(hexJob(16, { nonceStart: 10, nonceEnd: 5 }))).toThrow(
      'nonce range: expected integers 0 <= nonceStart <= nonceEnd <= 2^53, got [10, 5)',
    );
  });

  test('hashrate windows report n/a until they have data (fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    cleanup(() => vi.useRealTimers());
    const engine = await started();
    engine.setJob(hexJob(NEVER));
    await waitFor(() => engine.totalHashes() > 0, 'hashing');
    vi.advanceTimersByTime(9_000);
    let rate = engine.hashrate();
    expect(rate.total['10s']).toBeUndefined();
    expect(rate.total.max).toBeUndefined();
    vi.advanceTimersByTime(1_000);
    rate = engine.hashrate();
    expect(rate.total['10s']).toBeGreaterThan(0);
    expect(rate.workers).toHaveLength(2);
    expect(rate.workers.every((w) => w['10s'] !== undefined)).toBe(true);
    expect(rate.total['60s']).toBeUndefined();
    vi.advanceTimersByTime(50_000);
    rate = engine.hashrate();
    expect(rate.total['60s']).toBeGreaterThan(0);
    expect(rate.total['15m']).toBeUndefined();
    expect(rate.total.max).toBeGreaterThanOrEqual(rate.total['10s']!);
    expect(engine.expectedHashrate()).toBeGreaterThan(0);
  });
});
