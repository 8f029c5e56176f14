/**
 * The engine's scaling from 1 to 2 worker threads, against what the machine gives a second bare
 * thread in the same rounds (section 3 of kernels.bench.ts; alone: scaling.bench.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { targetFromDifficulty } from '@tensormine/protocol';
import { formatRate } from '../../protocol/bench/harness.js';
import { benchJobs } from '../src/bench.js';
import { MiningEngine } from '../src/engine.js';
import type { HexchainJob, MiningJob } from '../src/job.js';

export interface Stat {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}
export const stat = (xs: readonly number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, min: s[0]!, max: s.at(-1)! };
};
export const times = (s: Stat, bold = true) =>
  `${bold ? '**' : ''}${s.median.toFixed(2)}x${bold ? '**' : ''} (${s.min.toFixed(2)} – ${s.max.toFixed(2)})`;

export interface Scaling {
  readonly threads: number;
  readonly rounds: number;
  readonly scalingRows: readonly string[];
  readonly cpuRows: readonly string[];
  /** The engine's scaling over the bare threads', per round (both works). */
  readonly efficiencyNative: Stat;
  readonly efficiencyJs: Stat;
  /** The same for the tensor work checked on the engine's thread (referenceCheck `engine`). */
  readonly before: { readonly native: Stat; readonly js: Stat };
  readonly met: boolean;
  /** One line: the verdict, with both efficiencies. */
  readonly verdict: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** This thread's CPU time, ns (schedstat; else getrusage). */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    const u = process.threadCpuUsage();
    return (u.user + u.system) * 1000;
  }
}

/**
 * This process's threads' time from /proc/self/task/TID/schedstat, nanoseconds: on a CPU, and
 * runnable but waiting for one (the run queue: what the neighbours' load costs it).
 */
function schedstat(): { run: number; wait: number } {
  let run = 0;
  let wait = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const [r, w] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ');
      run += Number(r);
      wait += Number(w);
    } catch {
      // the thread ended in between
    }
  }
  return { run, wait };
}

interface Throughput {
  /** Hashes per second of wall time. */
  readonly rate: number;
  /** Hashes per second of this process's CPU time (every thread: the workers, the engine's). */
  readonly perCpu: number;
  /** CPU time over wall time: the cores the process had. */
  readonly cores: number;
  /** Run-queue wait over wall time: the cores it wanted and waited for. */
  readonly waiting: number;
  /** The main thread's (the engine's) CPU time over wall time. */
  readonly main: number;
  /** Results the engine emitted per second of wall time. */
  readonly found: number;
}

async function throughput(engine: MiningEngine, job: MiningJob, ms: number): Promise<Throughput> {
  let found = 0;
  const onFound = () => found++;
  engine.setJob(job);
  await sleep(300);
  engine.on('found', onFound);
  const h0 = engine.totalHashes();
  const s0 = schedstat();
  const m0 = threadCpuNs();
  const t0 = performance.now();
  await sleep(ms);
  const hashes = engine.totalHashes() - h0;
  const wall = performance.now() - t0;
  const m1 = threadCpuNs();
  const s1 = schedstat();
  engine.off('found', onFound);
  engine.setJob(undefined);
  const run = (s1.run - s0.run) / 1e6;
  return {
    rate: (hashes * 1000) / wall,
    perCpu: (hashes * 1000) / run,
    cores: run / wall,
    waiting: (s1.wait - s0.wait) / 1e6 / wall,
    main: (m1 - m0) / 1e6 / wall,
    found: (found * 1000) / wall,
  };
}

/**
 * The machine's own scaling at this moment, for comparison, in 1 and in 2 bare worker threads
 * (no engine): plain JavaScript integer rounds, and the native hexchain scan itself.
 */
const BARE_JS = `
const { parentPort, workerData } = require('node:worker_threads');
let a = 0x6a09e667 | 0, e = 0x510e527f | 0, n = 0;
const end = Date.now() + workerData.ms;
while (Date.now() < end) {
  for (let i = 0; i < 100000; i++) {
    const t1 = (e + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21))) + i) | 0;
    e = (a + t1) | 0;
    a = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)))) | 0;
  }
  n += 100000;
}
parentPort.postMessage(n + (a & e & 0));
`;
const BARE_NATIVE = `
const { parentPort, workerData } = require('node:worker_threads');
const koffi = require(workerData.koffi);
const scan = koffi.load(workerData.library).func('int32_t tm_native_hex_scan(const int32_t *params, uint32_t lo, uint32_t count, uint32_t t0)');
const params = new Int32Array(13).map((_, i) => (i + 1) * 0x9e3779b1);
let n = 0, lo = 0;
const end = Date.now() + workerData.ms;
while (Date.now() < end) {
  scan(params, lo, 1 << 18, 0);
  lo = (lo + (1 << 18)) >>> 0;
  n += 1 << 18;
}
parentPort.postMessage(n);
`;

/**
 * Throughput of the engine (kernel native) with every worker busy, 1 and 2 threads back to back,
 * and the bare threads, in `rounds` rounds whose order rotates, for hexchain, tensor work as the
 * engine ships, and tensor work checked on the engine's thread: about 8 s per round and work.
 */
export async function measureScaling(nativeLibrary: string, rounds = 5): Promise<Scaling> {
  const threads = Math.min(2, availableParallelism());
  const koffiPath = createRequire(import.meta.url).resolve('koffi');
  async function bareRate(code: string, count: number, ms: number): Promise<number> {
    const done = Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve, reject) => {
          const w = new Worker(code, {
            eval: true,
            workerData: { ms, koffi: koffiPath, library: nativeLibrary },
          });
          w.once('message', (n: number) => {
            resolve(n);
            void w.terminate();
          });
          w.once('error', reject);
        }),
    );
    return ((await Promise.all(done)).reduce((x, y) => x + y, 0) * 1000) / ms;
  }
  // The engines as they ship (a tensor solution checked in its worker), and for the tensor work
  // beside them the same engines checking on their own thread, as the engine did before.
  const pair = (referenceCheck: 'worker' | 'engine') => [
    new MiningEngine({ threads: 1, kernel: 'native', referenceCheck }),
    new MiningEngine({ threads, kernel: 'native', referenceCheck }),
  ];
  const engines = pair('worker');
  const engineCheck = pair('engine');
  await Promise.all([...engines, ...engineCheck].map((e) => e.start()));
  const never = targetFromDifficulty(2n ** 53n - 1n); // no result interrupts the measurement
  const hexBench = benchJobs(1, 0)[0]!;
  const nativeMatmul = benchJobs(0, 1)[0]!;
  const tensorJob: MiningJob = { ...nativeMatmul.job, nonceEnd: 2 ** 52 };
  const scalingJobs: { name: string; job: MiningJob; engines: MiningEngine[]; verdict: boolean }[] = [
    {
      name: 'hexchain',
      job: { ...(hexBench.job as HexchainJob), target: never, nonceEnd: 2 ** 52 },
      engines,
      verdict: true,
    },
    { name: `${nativeMatmul.name}, checked in the workers`, job: tensorJob, engines, verdict: true },
    {
      name: `${nativeMatmul.name}, checked on the engine's thread (before)`,
      job: tensorJob,
      engines: engineCheck,
      verdict: false,
    },
  ];
  // Every worker loads the reference with its first tensor job (from source: seconds on a busy
  // machine): mine until each engine has emitted results for a while before anything is timed.
  for (const e of [...engines, ...engineCheck]) {
    const before = e.foundCount;
    e.setJob({ ...tensorJob, nonceStart: 2 ** 40, nonceEnd: 2 ** 41 });
    const until = performance.now() + 30_000;
    while (e.foundCount < before + 20 * e.threads && performance.now() < until) await sleep(100);
    await sleep(500);
    e.setJob(undefined);
  }
  const scalingRows: string[] = [];
  const cpuRows: string[] = [];
  const efficienciesJs: number[] = [];
  const efficienciesNative: number[] = [];
  const beforeJs: number[] = [];
  const beforeNative: number[] = [];
  const fmt = (xs: number[]) => stat(xs).median.toFixed(2);
  for (const {
    name,
    job,
    engines: [one1, two2],
    verdict,
  } of scalingJobs) {
    const one: Throughput[] = [];
    const two: Throughput[] = [];
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const bareJs: number[] = [];
    const bareNative: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Each round measures the machine (bare threads) and the engines back to back, in an order
      // that alternates, so that a busy neighbour weighs on the round's ratios alike.
      const steps = [
        async () => bareJs.push((await bareRate(BARE_JS, threads, 600)) / (await bareRate(BARE_JS, 1, 600))),
        async () =>
          bareNative.push(
            (await bareRate(BARE_NATIVE, threads, 600)) / (await bareRate(BARE_NATIVE, 1, 600)),
          ),
        async () => {
          const a = await throughput(one1!, job, 1200);
          const b = await throughput(two2!, job, 1200);
          one.push(a);
          two.push(b);
          ratios.push(b.rate / a.rate);
          cpuRatios.push((threads * b.perCpu) / a.perCpu);
        },
      ];
      for (let k = 0; k < steps.length; k++) await steps[(k + round) % steps.length]!();
      (verdict ? efficienciesJs : beforeJs).push(ratios.at(-1)! / bareJs.at(-1)!);
      (verdict ? efficienciesNative : beforeNative).push(ratios.at(-1)! / bareNative.at(-1)!);
    }
    scalingRows.push(
      `| ${name} | ${formatRate(stat(one.map((t) => t.rate)).median)} | ${formatRate(stat(two.map((t) => t.rate)).median)} | ${times(stat(ratios))} | ${times(stat(bareNative), false)} | ${times(stat(bareJs), false)} |`,
    );
    cpuRows.push(
      `| ${name} | ${fmt(one.map((t) => t.cores))} / ${fmt(one.map((t) => t.waiting))} | ${fmt(two.map((t) => t.cores))} / ${fmt(two.map((t) => t.waiting))} | ${fmt(one.map((t) => t.main))} / ${fmt(two.map((t) => t.main))} | ${formatRate(stat(one.map((t) => t.found)).median)} / ${formatRate(stat(two.map((t) => t.found)).median)} | ${formatRate(stat(one.map((t) => t.perCpu)).median)} | ${formatRate(stat(two.map((t) => t.perCpu)).median)} | ${times(stat(cpuRatios))} |`,
    );
    console.log(scalingRows.at(-1));
    console.log(cpuRows.at(-1));
  }
  await Promise.all([...engines, ...engineCheck].map((e) => e.stop()));
  const efficiencyNative = stat(efficienciesNative);
  const efficiencyJs = stat(efficienciesJs);
  const met = efficiencyNative.median >= 0.95 && efficiencyJs.median >= 0.95;
  const before = { native: stat(beforeNative), js: stat(beforeJs) };
  const verdict = `engine scaling 1 -> ${threads} workers / the machine's, median of ${rounds} rounds (range): ${times(efficiencyNative, false)} against bare native threads, ${times(efficiencyJs, false)} against bare JavaScript threads; target >= 0.95 on both: ${met ? 'met' : 'NOT MET'} (the tensor work checked on the engine's thread instead, as before: ${times(before.native, false)} / ${times(before.js, false)})`;
  return { threads, rounds, scalingRows, cpuRows, efficiencyNative, efficiencyJs, before, met, verdict };
}
