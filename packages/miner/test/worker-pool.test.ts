import { describe, expect, test } from 'vitest';
import { kernelJob } from '../src/job.js';
import { WorkerPool } from '../src/worker/pool.js';
import {
  type FromWorker,
  type KernelJob,
  MAX_FOUND_IN_FLIGHT,
  MAX_FOUND_PER_MESSAGE,
} from '../src/worker/protocol.js';
import { cleanup, hexJob, waitFor } from './helpers.js';

type Found = Extract<FromWorker, { type: 'found' }>;

/** A hexchain kernel job whose target every hash meets (2^256 - 1): every nonce is a result. */
function everyNonce(): KernelJob {
  const job = kernelJob(hexJob(16));
  if (job.kind !== 'hexchain') throw new Error('expected a hexchain kernel job');
  return { ...job, target: new Uint8Array(32).fill(0xff) };
}

async function started(threads: number, onMessage: (message: FromWorker) => void): Promise<WorkerPool> {
  const pool = new WorkerPool({ threads, kernel: 'wasm', onMessage, onExit: () => undefined });
  cleanup(() => pool.stop());
  await pool.start();
  return pool;
}

describe("WorkerPool: a worker's results", () => {
  test("a job that goes on gets each batch's results in one message at its end", async () => {
    const messages: FromWorker[] = [];
    const pool = await started(2, (m) => messages.push(m));
    // A worker's first hexchain batch (16384 nonces) covers its slice of 32 at once.
    pool.dispatch(everyNonce(), 0, 64, false, 25);
    await waitFor(
      () => messages.filter((m) => m.type === 'exhausted').length === 2,
      'both workers to finish',
    );
    for (const worker of [0, 1]) {
      const found = messages.filter((m): m is Found => m.type === 'found' && m.index === worker);
      expect(found.map((m) => m.results.length)).toEqual([32]);
      expect(found.flatMap((m) => m.results.map((r) => r.nonce))).toEqual(
        Array.from({ length: 32 }, (_, i) => worker * 32 + i),
      );
      expect(found.every((m) => m.results.every((r) => r.powHash?.length === 32))).toBe(true);
    }
  });

  test('a job that ends at its first result gets it alone, and nothing after it', async () => {
    const messages: FromWorker[] = [];
    const pool = await started(1, (m) => messages.push(m));
    pool.dispatch(everyNonce(), 100, 200, true, 25);
    await waitFor(() => messages.some((m) => m.type === 'found'), 'the result');
    // The worker ended the job with it: idle, one nonce hashed, one result posted.
    await waitFor(() => pool.state(0) === 'idle', 'the worker to be idle');
    expect(pool.hashes(0)).toBe(1);
    const found = messages.filter((m): m is Found => m.type === 'found');
    expect(found.map((m) => m.results.map((r) => r.nonce))).toEqual([[100]]);
  });

  test('a worker posts at most MAX_FOUND_IN_FLIGHT messages the engine has not received, then waits', async () => {
    let found = 0;
    const pool = await started(1, (m) => {
      if (m.type === 'found') found++;
    });
    pool.dispatch(everyNonce(), 0, 2 ** 40, false, 25);
    await waitFor(() => found > 0, 'a first result');
    // This thread (the engine's) busy for a second, receiving nothing: the worker may post
    // MAX_FOUND_IN_FLIGHT messages beyond those received, of at most MAX_FOUND_PER_MESSAGE results
    // each, and hold one more message's worth; every nonce it hashed is one of those results.
    const received = Atomics.load(pool.acks, 0);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
    expect(pool.hashes(0)).toBeLessThanOrEqual((received + MAX_FOUND_IN_FLIGHT + 1) * MAX_FOUND_PER_MESSAGE);
    // Once the messages are received, it mines on.
    const before = pool.hashes(0);
    await waitFor(() => pool.hashes(0) > before + 10 * MAX_FOUND_PER_MESSAGE, 'the worker to mine on');
  });
});
