import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import { allowedCpus, threadAffinity, threadIds } from '../bench/affinity.js';
import { cleanup, waitFor } from './helpers.js';

// The scaling bench (bench/scaling.ts) pins its hashing threads by thread id; these are its means.
describe.runIf(process.platform === 'linux')('the scaling bench: pinning a thread to a CPU', () => {
  test('the CPUs this process may run on are the ones the runtime counts', () => {
    const cpus = allowedCpus();
    expect(cpus.length).toBe(availableParallelism());
    expect(new Set(cpus).size).toBe(cpus.length);
  });

  test('a worker thread is found by its name and runs on the one CPU it is pinned to', async () => {
    const worker = new Worker('setInterval(() => {}, 1000);', { eval: true, name: 'affinity-probe' });
    cleanup(() => worker.terminate());
    await new Promise((resolve) => worker.once('online', resolve));
    let tids: number[] = [];
    await waitFor(() => {
      tids = threadIds('affinity-probe');
      return tids.length === 1;
    }, 'the worker thread named affinity-probe');
    const affinity = threadAffinity();
    if ('unavailable' in affinity) throw new Error(affinity.unavailable);
    const allowed = (tid: number | 'thread-self') =>
      /^Cpus_allowed_list:\s+(\S+)$/m.exec(
        readFileSync(
          tid === 'thread-self' ? '/proc/thread-self/status' : `/proc/self/task/${tid}/status`,
          'utf8',
        ),
      )?.[1];
    const mine = allowed('thread-self');
    const cpu = allowedCpus().at(-1)!;
    affinity.pin(tids[0]!, cpu);
    expect(allowed(tids[0]!)).toBe(String(cpu));
    // Only that thread: this one (the test's) runs where it ran before.
    expect(allowed('thread-self')).toBe(mine);
  });

  test('pinning a thread that does not exist is an error, not a silent no-op', () => {
    const affinity = threadAffinity();
    if ('unavailable' in affinity) throw new Error(affinity.unavailable);
    expect(() => affinity.pin(2 ** 30, 0)).toThrow(/sched_setaffinity: thread 1073741824 to CPU 0 failed/);
  });
});
