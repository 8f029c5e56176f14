/**
 * Miner benchmarks, as ratios measured side by side in one run (interleaved rounds, median):
 * - the hexchain kernel against crypto.hash('sha256') over the same 88-byte header, and against
 *   OpenSSL's own SHA-256 (`openssl speed -evp sha256 -bytes 64`) when the binary is present;
 * - the engine's scaling from 1 to 2 worker threads (throughput with every worker busy);
 * - the v4.0 kernel at each device type's largest tensor against the reference computeWork.
 *
 *   npm run bench -w @tensormine/miner      (writes the `miner` section of docs/benchmarks.md)
 */
import { execFileSync } from 'node:child_process';
import { hash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { computeWork, encodeHeader, sha256, targetFromDifficulty, utf8 } from '@tensormine/protocol';
import { formatRate, machineLine, measure, writeSection } from '../../protocol/bench/harness.js';
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
const job = prepareHexchain({ header, target: new Uint8Array(32) });
const headerView = new DataView(header.buffer);
let kernelNonce = 0;
let cryptoNonce = 0;
const hexCases = [
  {
    name: 'kernel',
    run: () => {
      const r = searchBlock(job, kernelNonce, PER_CALL);
      kernelNonce += PER_CALL;
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

/** OpenSSL's single-thread SHA-256 rate on 64-byte messages, or why there is none. */
function openssl(): { rate: number } | { missing: string } {
  try {
    const out = execFileSync('openssl', ['speed', '-evp', 'sha256', '-bytes', '64', '-seconds', '1'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // "sha256   426057.60k": thousands of bytes per second at 64-byte blocks.
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

warmUp(hexCases);
const kernelRates: number[] = [];
const cryptoRates: number[] = [];
const opensslRates: number[] = [];
let opensslMissing: string | undefined;
for (let round = 0; round < 3; round++) {
  const [k, c] = measure(hexCases, { rounds: 5, roundMs: 200 });
  kernelRates.push(k!.opsPerSecond * PER_CALL);
  cryptoRates.push(c!.opsPerSecond * PER_CALL);
  const o = openssl();
  if ('rate' in o) opensslRates.push(o.rate);
  else opensslMissing = o.missing;
}
const kernelRate = median(kernelRates);
const cryptoRate = median(cryptoRates);
console.log(`hexchain kernel ${formatRate(kernelRate)}, crypto.hash ${formatRate(cryptoRate)}`);
const opensslLine = opensslMissing
  ? `OpenSSL: not measured: ${opensslMissing}.`
  : `OpenSSL (\`openssl speed -evp sha256 -bytes 64 -seconds 1\`, one thread, alternated with the rounds above): ${formatRate(median(opensslRates))} 64-byte messages, so the kernel runs at **${ratio(kernelRate, median(opensslRates))}** of OpenSSL's message rate. A 64-byte message is two compressions (the data and the padding block) where a midstate nonce is one, so per compression the kernel does ${ratio(kernelRate, 2 * median(opensslRates))} of OpenSSL's work rate (SHA-NI).`;

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
async function throughput(engine: MiningEngine, job: MiningJob, ms: number): Promise<number> {
  engine.setJob(job);
  await sleep(300);
  const h0 = engine.totalHashes();
  const t0 = performance.now();
  await sleep(ms);
  const rate = ((engine.totalHashes() - h0) * 1000) / (performance.now() - t0);
  engine.setJob(undefined);
  return rate;
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
const efficiencies: number[] = [];
for (const { name, job } of scalingJobs) {
  const one: number[] = [];
  const two: number[] = [];
  const ratios: number[] = [];
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
    ratios.push(b / a);
    bare.push(m2 / m1);
    efficiencies.push(b / a / (m2 / m1));
  }
  scalingRows.push(
    `| ${name} | ${formatRate(median(one))} | ${formatRate(median(two))} | **${median(ratios).toFixed(2)}x** (best ${Math.max(...ratios).toFixed(2)}x) | ${median(bare).toFixed(2)}x (best ${Math.max(...bare).toFixed(2)}x) |`,
  );
  console.log(scalingRows.at(-1));
}
const efficiency = median(efficiencies);
console.log(`engine scaling / machine scaling, median of rounds: ${efficiency.toFixed(2)}`);
await Promise.all(engines.map((e) => e.stop()));

// 3. The v4.0 kernel at each device type's largest tensor vs the reference computeWork.
const tensorRows: string[] = [];
for (const { name, job: t } of benchJobs(0, 1)) {
  if (t.kind !== 'tensor') continue;
  const kernel = new TensorSearch(t.task, t.minerPublicKey);
  let a = 0;
  let b = 0;
  let c = 0;
  const cases = [
    { name: 'search', run: () => kernel.tryNonce(a++) },
    { name: 'work', run: () => kernel.work(b++).pathDistance },
    { name: 'reference', run: () => computeWork(t.task, t.minerPublicKey, c++).pathDistance },
  ];
  warmUp(cases, 300);
  const [search, work, reference] = measure(cases, { rounds: 5, roundMs: 200 });
  tensorRows.push(
    `| ${name.replace('tensor ', '')} | ${formatRate(search!.opsPerSecond)} | ${formatRate(work!.opsPerSecond)} | ${formatRate(reference!.opsPerSecond)} | **${ratio(search!.opsPerSecond, reference!.opsPerSecond)}** | ${ratio(work!.opsPerSecond, reference!.opsPerSecond)} |`,
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

| kernel (midstate, precomputed rounds, unrolled) | crypto.hash('sha256') of the 88-byte header | ratio |
|---|---|---|
| ${formatRate(kernelRate)} | ${formatRate(cryptoRate)} | **${ratio(kernelRate, cryptoRate)}** |

${opensslLine}

### Engine scaling, 1 to ${threads} worker threads

| work | engine, 1 thread | engine, ${threads} threads | engine scaling (median of rounds) | machine scaling, same rounds |
|---|---|---|---|---|
${scalingRows.join('\n')}

Throughput of the engine with every worker busy: hashes counted over 1.2 s after a 0.3 s
warm-up, the 1-thread and ${threads}-thread engines alternated in 5 rounds; scaling is the
median of the rounds' ratios. The machine is shared, and a neighbour's load falls on the
second thread, so each round also measures, just before, what the machine gives a second
thread (bare worker threads running plain integer rounds, no engine). The engine's scaling
divided by the machine's, median over all rounds: **${efficiency.toFixed(2)}**.

### v4.0: nonce iterations per second at each device type's largest tensor

\`search\` is the kernel's per-nonce path (up to the thresholds: the result hash and commitment
are computed only for a nonce that passes); \`work\` is the kernel's complete WorkResult, the
same fields as the reference \`computeWork\`.

| task | kernel search | kernel work | computeWork | search / reference | work / reference |
|---|---|---|---|---|---|
${tensorRows.join('\n')}`,
);
