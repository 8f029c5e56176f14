/**
 * Miner benchmarks, as ratios measured side by side in one run (interleaved rounds, median):
 * - the hexchain kernels (WebAssembly SIMD and JavaScript) against crypto.hash('sha256') over
 *   the same 88-byte header, and against the machine's SHA-256 compression rate: OpenSSL's
 *   `openssl speed -bytes 16384 sha256` (SHA-NI where the CPU has it), bytes/s / 64;
 * - the engine's scaling from 1 to 2 worker threads (throughput with every worker busy);
 * - the v4.0 kernels at each device type's largest tensor against the reference computeWork,
 *   and the reference with the WebAssembly SIMD multiply-accumulate core (the verifier's).
 *
 *   npm run bench -w @tensormine/miner      (writes the `miner` section of docs/benchmarks.md)
 */
import { execFileSync } from 'node:child_process';
import { hash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { computeWork, encodeHeader, sha256, targetFromDifficulty, utf8, wasmMac } from '@tensormine/protocol';
import { formatRate, machineLine, writeSection } from '../../protocol/bench/harness.js';
import { benchJobs } from '../src/bench.js';
import { MiningEngine } from '../src/engine.js';
import type { HexchainJob, MiningJob } from '../src/job.js';
import { prepareHexchain, searchBlock } from '../src/kernels/hexchain.js';
import { TensorSearch } from '../src/kernels/tensor.js';

const docPath = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

// 1. Hexchain kernel vs crypto.hash over the same header.
const PER_CALL = 4096;
const header = encodeHeader({
  coord: { q: 0, r: -1, s: 1 },
  challengeHash: sha256(utf8('bench/hexchain')),
  minerPublicKey: sha256(utf8('bench/key')),
  nonce: 0,
});
// Target 0: a nonce passes only if its hash is 0, so every call hashes all PER_CALL nonces.
const wasmJob = prepareHexchain({ header, target: new Uint8Array(32) }, 'wasm');
const jsJob = prepareHexchain({ header, target: new Uint8Array(32) }, 'js');
const headerView = new DataView(header.buffer);
let wasmNonce = 0;
let jsNonce = 0;
let cryptoNonce = 0;
const hexCases = [
  {
    name: 'wasm',
    run: () => {
      const r = searchBlock(wasmJob, wasmNonce, PER_CALL);
      wasmNonce += PER_CALL;
      return r.hashes;
    },
  },
  {
    name: 'js',
    run: () => {
      const r = searchBlock(jsJob, jsNonce, PER_CALL);
      jsNonce += PER_CALL;
      return r.hashes;
    },
  },
  {
    name: 'crypto.hash',
    run: () => {
      let last: Buffer | undefined;
      for (let i = 0; i < PER_CALL; i++) {
        headerView.setUint32(80, cryptoNonce++, true);
        last = hash('sha256', header, 'buffer');
      }
      return last;
    },
  },
];

/**
 * The machine's single-thread SHA-256 compression rate: OpenSSL on 16 KiB messages (SHA-NI
 * where the CPU has it; the padding block is negligible), bytes per second / 64, or why there
 * is none.
 */
function openssl(): { rate: number } | { missing: string } {
  try {
    const out = execFileSync('openssl', ['speed', '-bytes', '16384', '-seconds', '1', 'sha256'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // "sha256   1762333.26k": thousands of bytes per second at 16384-byte messages.
    const m = /^sha256\s+([\d.]+)k/m.exec(out);
    if (!m) return { missing: 'openssl speed printed no sha256 line' };
    return { rate: (Number(m[1]) * 1000) / 64 };
  } catch (error) {
    return { missing: `openssl is not available (${(error as Error).message.split('\n')[0]})` };
  }
}

/** Runs each case for `ms` first, so that every figure is of optimised code. */
function warmUp(cases: readonly { run: () => unknown }[], ms = 500): void {
  for (const c of cases) {
    const end = performance.now() + ms;
    while (performance.now() < end) c.run();
  }
}

/**
 * Nonces per second of CPU time of this thread (process.threadCpuUsage), running `run` (which
 * does `perCall` nonces) for `ms` of wall time: `openssl speed` divides by its CPU user time too, so the two compare on a
 * machine whose other processes take cores away.
 */
function cpuRate(run: () => unknown, ms: number, perCall = PER_CALL): { cpu: number; wall: number } {
  const c0 = process.threadCpuUsage();
  const t0 = performance.now();
  let calls = 0;
  while (performance.now() - t0 < ms) {
    run();
    calls++;
  }
  const wall = performance.now() - t0;
  const c1 = process.threadCpuUsage(c0);
  return {
    cpu: (calls * perCall * 1e6) / (c1.user + c1.system),
    wall: (calls * perCall * 1000) / wall,
  };
}

warmUp(hexCases);
const wasmRates: number[] = [];
const jsRates: number[] = [];
const cryptoRates: number[] = [];
const wallRates: number[][] = [[], [], []];
const opensslRates: number[] = [];
/** Per round: the WebAssembly kernel over OpenSSL's compression rate measured just after. */
const shaNiRatios: number[] = [];
let opensslMissing: string | undefined;
for (let round = 0; round < 7; round++) {
  const [w, j, c] = hexCases.map((h) => cpuRate(h.run, 300)) as [
    { cpu: number; wall: number },
    { cpu: number; wall: number },
    { cpu: number; wall: number },
  ];
  wasmRates.push(w.cpu);
  jsRates.push(j.cpu);
  cryptoRates.push(c.cpu);
  [w, j, c].forEach((r, i) => {
    wallRates[i]!.push(r.wall);
  });
  const o = openssl();
  if ('rate' in o) {
    opensslRates.push(o.rate);
    shaNiRatios.push(wasmRates.at(-1)! / o.rate);
  } else opensslMissing = o.missing;
}
const wasmRate = median(wasmRates);
const jsRate = median(jsRates);
const cryptoRate = median(cryptoRates);
console.log(
  `hexchain wasm ${formatRate(wasmRate)}, js ${formatRate(jsRate)}, crypto.hash ${formatRate(cryptoRate)}`,
);
const opensslRate = opensslMissing ? undefined : median(opensslRates);
const opensslLine =
  opensslRate === undefined
    ? `OpenSSL: not measured: ${opensslMissing}.`
    : `The machine's SHA-256 compression rate, \`openssl speed -bytes 16384 -seconds 1 sha256\` (one thread, SHA-NI on this CPU, spawned by the bench after each round of the kernels, rate per second of its CPU user time): ${formatRate(opensslRate)} compressions (bytes/s / 64). The WebAssembly kernel (one compression per nonce, rate per second of this thread's CPU time) runs at **${ratio(wasmRate, opensslRate)}** of it (median of the per-round ratios ${median(shaNiRatios).toFixed(2)}x, best ${Math.max(...shaNiRatios).toFixed(2)}x); the JavaScript kernel at ${ratio(jsRate, opensslRate)}.`;
const wallLine = `Per second of wall time instead (what the load of other processes also weighs on): wasm ${formatRate(median(wallRates[0]!))}, js ${formatRate(median(wallRates[1]!))}, crypto.hash ${formatRate(median(wallRates[2]!))}.`;
console.log(opensslLine);

// 2. Scaling from 1 to 2 workers: the engine's throughput with every worker busy (hashes
// counted over a fixed time after a warm-up), the two engines alternated round by round.
const threads = Math.min(2, availableParallelism());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const engines = [new MiningEngine({ threads: 1 }), new MiningEngine({ threads })];
await Promise.all(engines.map((e) => e.start()));
const never = targetFromDifficulty(2n ** 53n - 1n); // no result interrupts the measurement
const hexBench = benchJobs(1, 0)[0]!;
const nativeMatmul = benchJobs(0, 1)[0]!;
const scalingJobs: { name: string; job: MiningJob }[] = [
  { name: 'hexchain', job: { ...(hexBench.job as HexchainJob), target: never, nonceEnd: 2 ** 52 } },
  { name: nativeMatmul.name, job: { ...nativeMatmul.job, nonceEnd: 2 ** 52 } },
];
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
}
async function throughput(engine: MiningEngine, job: MiningJob, ms: number): Promise<Throughput> {
  engine.setJob(job);
  await sleep(300);
  const h0 = engine.totalHashes();
  const s0 = schedstat();
  const t0 = performance.now();
  await sleep(ms);
  const hashes = engine.totalHashes() - h0;
  const wall = performance.now() - t0;
  const s1 = schedstat();
  engine.setJob(undefined);
  const run = (s1.run - s0.run) / 1e6;
  return {
    rate: (hashes * 1000) / wall,
    perCpu: (hashes * 1000) / run,
    cores: run / wall,
    waiting: (s1.wait - s0.wait) / 1e6 / wall,
  };
}
/**
 * The machine's own scaling at this moment, for comparison: the same integer work (SHA-256
 * style rounds, plain JavaScript) in 1 and in 2 bare worker threads, no engine.
 */
const BARE = `
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
async function bareRate(count: number, ms: number): Promise<number> {
  const done = Array.from(
    { length: count },
    () =>
      new Promise<number>((resolve, reject) => {
        const w = new Worker(BARE, { eval: true, workerData: { ms } });
        w.once('message', (n: number) => {
          resolve(n);
          void w.terminate();
        });
        w.once('error', reject);
      }),
  );
  return ((await Promise.all(done)).reduce((x, y) => x + y, 0) * 1000) / ms;
}
const scalingRows: string[] = [];
const cpuRows: string[] = [];
const efficiencies: number[] = [];
const fmtCores = (xs: number[]) => median(xs).toFixed(2);
for (const { name, job } of scalingJobs) {
  const one: Throughput[] = [];
  const two: Throughput[] = [];
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const bare: number[] = [];
  for (let round = 0; round < 5; round++) {
    // Each round measures the machine (bare threads) and the engine back to back, so that a
    // busy neighbour weighs on both ratios of the round alike.
    const m1 = await bareRate(1, 600);
    const m2 = await bareRate(threads, 600);
    const a = await throughput(engines[0]!, job, 1200);
    const b = await throughput(engines[1]!, job, 1200);
    one.push(a);
    two.push(b);
    ratios.push(b.rate / a.rate);
    cpuRatios.push((threads * b.perCpu) / a.perCpu);
    bare.push(m2 / m1);
    efficiencies.push(b.rate / a.rate / (m2 / m1));
  }
  scalingRows.push(
    `| ${name} | ${formatRate(median(one.map((t) => t.rate)))} | ${formatRate(median(two.map((t) => t.rate)))} | **${median(ratios).toFixed(2)}x** (${ratios.map((r) => r.toFixed(2)).join(', ')}) | ${median(bare).toFixed(2)}x (${bare.map((r) => r.toFixed(2)).join(', ')}) |`,
  );
  cpuRows.push(
    `| ${name} | ${fmtCores(one.map((t) => t.cores))} / ${fmtCores(one.map((t) => t.waiting))} | ${fmtCores(two.map((t) => t.cores))} / ${fmtCores(two.map((t) => t.waiting))} | ${formatRate(median(one.map((t) => t.perCpu)))} | ${formatRate(median(two.map((t) => t.perCpu)))} | **${median(cpuRatios).toFixed(2)}x** (${cpuRatios.map((r) => r.toFixed(2)).join(', ')}) |`,
  );
  console.log(scalingRows.at(-1));
  console.log(cpuRows.at(-1));
}
const efficiency = median(efficiencies);
console.log(`engine scaling / machine scaling, median of rounds: ${efficiency.toFixed(2)}`);
await Promise.all(engines.map((e) => e.stop()));

// 3. The v4.0 kernels at each device type's largest tensor vs the reference computeWork.
const tensorRows: string[] = [];
const mac = wasmMac();
if (mac === undefined) throw new Error('this runtime lacks WebAssembly SIMD');
for (const { name, job: t } of benchJobs(0, 1)) {
  if (t.kind !== 'tensor') continue;
  const wasm = new TensorSearch(t.task, t.minerPublicKey, 'wasm');
  const js = new TensorSearch(t.task, t.minerPublicKey, 'js');
  const n = [0, 0, 0, 0, 0];
  const cases = [
    { name: 'wasm search', run: () => wasm.tryNonce(n[0]!++) },
    { name: 'js search', run: () => js.tryNonce(n[1]!++) },
    { name: 'wasm work', run: () => wasm.work(n[2]!++).pathDistance },
    { name: 'reference', run: () => computeWork(t.task, t.minerPublicKey, n[3]!++).pathDistance },
    {
      name: 'reference + wasm MAC',
      run: () => computeWork(t.task, t.minerPublicKey, n[4]!++, mac).pathDistance,
    },
  ];
  warmUp(cases, 300);
  // Rounds of 150 ms per case, interleaved; rates per second of this thread's CPU time, median.
  const samples = cases.map(() => [] as number[]);
  for (let round = 0; round < 5; round++) {
    cases.forEach((c, i) => {
      samples[i]!.push(cpuRate(c.run, 150, 1).cpu);
    });
  }
  const [ws, js1, ww, ref, refMac] = samples.map(median) as [number, number, number, number, number];
  tensorRows.push(
    `| ${name.replace('tensor ', '')} | ${formatRate(ws)} | ${formatRate(js1)} | **${ratio(ws, js1)}** | ${formatRate(ww)} | ${formatRate(ref)} | ${ratio(ws, ref)} | ${formatRate(refMac)} | **${ratio(refMac, ref)}** |`,
  );
  console.log(tensorRows.at(-1));
}

writeSection(
  docPath,
  'miner',
  `## Miner kernels and engine

Command: \`npm run bench -w @tensormine/miner\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}).
Every ratio compares rates measured side by side in the same run (interleaved rounds, median
of rounds), single thread unless the row says otherwise. Check a build's kernels with the
offline benchmark's checksum (\`bench()\`), which is the same on every machine.

### Hexchain: nonces per second on one thread

| WebAssembly SIMD kernel (4 lanes) | JavaScript kernel (generated) | crypto.hash('sha256') of the 88-byte header | wasm / js | wasm / crypto.hash | js / crypto.hash |
|---|---|---|---|---|---|
| ${formatRate(wasmRate)} | ${formatRate(jsRate)} | ${formatRate(cryptoRate)} | **${ratio(wasmRate, jsRate)}** | **${ratio(wasmRate, cryptoRate)}** | ${ratio(jsRate, cryptoRate)} |

Both kernels start from the midstate of the header's first block and compute one compression
per nonce with everything that does not depend on the nonce hoisted out of the loop (the
first 4 rounds, part of the 5th, 3 schedule words and the constant parts of others); the
WebAssembly one runs 4 nonces per 128-bit vector and compares the first digest word with the
target inside the loop (scripts/generate-wasm.ts). Rates are nonces per second of the bench
thread's CPU time, 7 rounds of 300 ms per kernel, median. ${wallLine}

${opensslLine}

### Engine scaling, 1 to ${threads} worker threads (kernel ${engines[0]!.kernel})

| work | engine, 1 thread | engine, ${threads} threads | engine scaling, wall time: median (rounds) | machine scaling, same rounds (bare threads) |
|---|---|---|---|---|
${scalingRows.join('\n')}

Throughput of the engine with every worker busy: hashes counted over 1.2 s after a 0.3 s
warm-up, the 1-thread and ${threads}-thread engines alternated in 5 rounds; scaling is the
median of the rounds' ratios. The machine is shared, and a neighbour's load falls on the
second thread, so each round also measures, just before, what the machine gives a second
thread (bare worker threads running plain integer rounds, no engine). The engine's scaling
divided by the machine's, median over all rounds: **${efficiency.toFixed(2)}**.

Where the wall-time scaling goes, from the same windows: the cores the bench process had (its
threads' CPU time over the window, /proc/self/task/*/schedstat) and the cores it waited for
(run-queue time: runnable threads that no core was free for), and the hashes per second of
the process's CPU time (all threads: the workers, the engine's main thread, the runtime's).
The CPU-time scaling, ${threads} x (hashes per CPU second with ${threads} workers) / (with 1), is what
the engine gives when each worker has a core of its own: it is below ${threads}x only by the
engine's own costs (main-thread work per report, messages, memory contention between the
workers); the wall-time scaling is that times the share of the second core the machine gave.

| work | 1 worker: cores had / waited for | ${threads} workers: cores had / waited for | hashes per CPU second, 1 worker | per CPU second, ${threads} workers | CPU-time scaling: median (rounds) |
|---|---|---|---|---|---|
${cpuRows.join('\n')}

### v4.0: nonce iterations per second at each device type's largest tensor

\`search\` is a kernel's per-nonce path (up to the thresholds: the result hash and commitment
are computed only for a nonce that passes), with the multiply-accumulates in WebAssembly SIMD
(\`wasm\`, int8 widened to int16, 8 products per \`i32x4.dot_i16x8_s\` or 2 x 4 per extended
multiply) or in JavaScript (\`js\`, two products per float64 multiply-add); with \`wasm\` the
passes over the accumulators (the fold, sum, min and max in one pass of two i32x4 per 8
neurons; the fired bitmap by \`i32x4.gt_s\` and \`i8x16.bitmask\`, 32 neurons per word; its MML
length from windows of equal bits, 64 neurons per step) run in the module too, and Z never
leaves it for a nonce that fails. \`work\` is the wasm kernel's complete WorkResult, the same
fields as the reference \`computeWork\`. The last two columns are what a validator's
verification costs: \`computeWork\` with the WebAssembly SIMD core (\`wasmMac()\`, the
validator's \`verifyKernel\`: the multiply-accumulates and the same passes, plus the
activations) against the reference.

Rates per second of the bench thread's CPU time (5 interleaved rounds of 150 ms per case,
median), as for the hexchain kernels.

| task | wasm search | js search | wasm / js | wasm work | computeWork | wasm search / reference | computeWork, wasm core | wasm core / reference |
|---|---|---|---|---|---|---|---|---|
${tensorRows.join('\n')}`,
);
