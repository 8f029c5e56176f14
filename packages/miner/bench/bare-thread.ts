/**
 * A bare worker thread of the scaling bench (scaling.ts): the same work as an engine worker
 * (src/worker/entry.ts) without the engine: no messages per result, no pause, intensity or
 * job-generation handling beyond one stop word, no result built on another thread. Started
 * from source through the engine's source loader.
 *
 * - `js`: plain JavaScript integer rounds (SHA-256-like mixing on two registers), no memory: what
 *   the machine gives a second thread of pure computation;
 * - a kernel job (`hexchain` or `tensor`): the native kernel's search over the job, over the
 *   slice of nonces the engine's pool gives the same worker (scaling.ts), in batches run and
 *   sized as an engine worker runs and sizes its (src/worker/entry.ts, `runBatch`): `count`
 *   nonces searched to the batch's end through its solutions, then resized from the whole
 *   batch's time to about `batchMs`; each tensor solution is recomputed with the reference
 *   (`computeWork` of @tensormine/protocol), as an engine worker does before it posts it.
 * Hashes go to this thread's slot of the shared counters after every search call, as an engine
 * worker's do, so that the bench reads both the same way.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { computeWork } from '@tensormine/protocol';
import {
  hexchainHash,
  type PreparedHexchain,
  prepareHexchain,
  searchBlock,
} from '../src/kernels/hexchain.js';
import { NativeKernels, useNativeKernels } from '../src/kernels/native/library.js';
import { TensorSearch } from '../src/kernels/tensor.js';
import type { KernelJob } from '../src/worker/protocol.js';

export interface BareInit {
  readonly index: number;
  readonly nativeLibrary: string;
  /** [0]: the run generation; a thread runs while it equals the one it was started with. */
  readonly control: Int32Array;
  /** Hashes (nonce iterations, or `js` rounds) per thread, cumulative. */
  readonly counters: BigInt64Array;
}

export interface BareRun {
  readonly generation: number;
  /** `js`, or a kernel job with the slice of nonces [start, end) this thread searches. */
  readonly work:
    | 'js'
    | { readonly job: KernelJob; readonly start: number; readonly end: number; readonly batchMs: number };
}

const init = workerData as BareInit & { readonly entry: string };
useNativeKernels(new NativeKernels(init.nativeLibrary));
const { control, counters, index } = init;

function running(generation: number): boolean {
  return Atomics.load(control, 0) === generation;
}

function runJs(generation: number): void {
  let a = 0x6a09e667 | 0;
  let e = 0x510e527f | 0;
  while (running(generation)) {
    for (let i = 0; i < 100_000; i++) {
      const t1 = (e + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21))) + i) | 0;
      e = (a + t1) | 0;
      a = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)))) | 0;
    }
    Atomics.add(counters, index, 100_000n + BigInt(a & e & 0));
  }
}

function runKernel(generation: number, job: KernelJob, start: number, end: number, batchMs: number): void {
  const hexchain: PreparedHexchain | undefined =
    job.kind === 'hexchain' ? prepareHexchain(job, 'native') : undefined;
  const tensor = job.kind === 'tensor' ? new TensorSearch(job.task, job.minerPublicKey, 'native') : undefined;
  let next = start;
  let batch = job.kind === 'hexchain' ? 16_384 : 1;
  while (running(generation)) {
    const count = Math.min(batch, end - next);
    if (count <= 0) throw new Error('bare thread: the slice of nonces is exhausted');
    const started = performance.now();
    // The engine worker's batch (runBatch): to its end through the solutions; a new run (the
    // generation) leaves it after a solution.
    const batchEnd = next + count;
    while (next < batchEnd) {
      if (hexchain !== undefined) {
        const r = searchBlock(hexchain, next, batchEnd - next);
        Atomics.add(counters, index, BigInt(r.hashes));
        next += r.hashes;
        if (r.found === undefined) continue;
        hexchainHash(hexchain, r.found);
      } else if (job.kind === 'tensor' && tensor !== undefined) {
        const r = tensor.search(next, batchEnd - next);
        Atomics.add(counters, index, BigInt(r.iterations));
        next += r.iterations;
        if (r.found === undefined) continue;
        const reference = computeWork(job.task, job.minerPublicKey, r.found.nonce);
        if (reference.computationHash.some((b, i) => b !== r.found!.work.computationHash[i])) {
          throw new Error(`bare thread: nonce ${r.found.nonce} differs from the reference`);
        }
      }
      if (!running(generation)) break;
    }
    // The engine workers' batch rule (src/worker/entry.ts): aim at batchMs, at most x2 or /2.
    const elapsed = performance.now() - started;
    const scale = elapsed > 0 ? batchMs / elapsed : 2;
    batch = Math.max(1, Math.round(batch * Math.min(2, Math.max(0.5, scale))));
  }
}

parentPort!.on('message', (run: BareRun) => {
  if (run.work === 'js') runJs(run.generation);
  else runKernel(run.generation, run.work.job, run.work.start, run.work.end, run.work.batchMs);
  parentPort!.postMessage({ done: run.generation });
});
parentPort!.postMessage({ ready: true });
