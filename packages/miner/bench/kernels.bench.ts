/**
 * Miner benchmarks, as ratios measured side by side in one run. Every section runs in rounds in
 * which each case runs once, their order rotating from round to round (so a slow stretch of a
 * shared machine falls on each case in turn); rates are per second of the measuring thread's
 * CPU time (/proc/thread-self/schedstat), which a neighbour's load does not dilute; figures are
 * medians over the rounds with the rounds' range, and ratios are medians of the per-round
 * ratios.
 * 1. hexchain: the native (SHA-NI), WebAssembly SIMD and JavaScript kernels and crypto.hash over
 *    the same 88-byte header, and after each round the machine's SHA-256 compression rate,
 *    `openssl speed -bytes 16384 sha256` (SHA-NI where the CPU has it; its own CPU user time);
 * 2. the v4.0 search at each device type's largest tensor, native, wasm and js, with the
 *    reference computeWork and the validator's WebAssembly core beside them;
 * 3. the engine's scaling from 1 to 2 worker threads, against bare threads in the same rounds
 *    (scaling.ts).
 *
 *   npm run bench -w @tensormine/miner      (writes the `miner` and `miner-scaling` sections of
 *                                            docs/benchmarks.md)
 */
import { execFileSync } from 'node:child_process';
import { hash } from 'node:crypto';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { computeWork, encodeHeader, sha256, utf8, wasmMac } from '@tensormine/protocol';
import { formatRate, machineLine, writeSection } from '../../protocol/bench/harness.js';
import { benchJobs } from '../src/bench.js';
import { prepareHexchain, searchBlock } from '../src/kernels/hexchain.js';
import { selectKernel } from '../src/kernels/select.js';
import { TensorSearch } from '../src/kernels/tensor.js';
import { warmUpJsKernels } from '../src/kernels/warm-up.js';
import { measureScaling, type Stat, scalingSection, stat, threadCpuNs, times } from './scaling.js';

const docPath = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const loadAtStart = loadavg()[0]!;

const rate = (s: Stat) => `${formatRate(s.median)} (${formatRate(s.min)} – ${formatRate(s.max)})`;
const verdict = (s: Stat, target: number) => (s.median >= target ? 'met' : '**not met**');

const selection = await selectKernel('native');
if (selection.kernel !== 'native') throw new Error(`the native kernels cannot run here: ${selection.notice}`);
const js = warmUpJsKernels({ maxMs: 10_000 });
console.log(`native: ${selection.detail}; js warm-up: ${js.rounds} rounds, settled ${js.settled}`);

/** Items per second of this thread's CPU time, and per second of wall time, running `run` for `ms`. */
function measure(run: () => unknown, ms: number, perCall: number): { cpu: number; wall: number } {
  const c0 = threadCpuNs();
  const t0 = performance.now();
  let calls = 0;
  while (performance.now() - t0 < ms) {
    run();
    calls++;
  }
  const wall = performance.now() - t0;
  const cpu = threadCpuNs() - c0;
  return { cpu: (calls * perCall * 1e9) / cpu, wall: (calls * perCall * 1000) / wall };
}

/** Runs each case for `ms` first, so that every figure is of optimised code. */
function warmUp(cases: readonly { run: () => unknown }[], ms: number): void {
  for (const c of cases) {
    const end = performance.now() + ms;
    while (performance.now() < end) c.run();
  }
}

interface Case {
  readonly name: string;
  readonly run: () => unknown;
  readonly perCall: number;
}

/** `rounds` rounds of every case for `ms`, the order rotating; per case the CPU-time and wall rates of each round. */
function rounds(
  cases: readonly Case[],
  count: number,
  ms: number,
  after?: (round: number) => void,
): { cpu: number[][]; wall: number[][] } {
  const cpu = cases.map(() => [] as number[]);
  const wall = cases.map(() => [] as number[]);
  for (let r = 0; r < count; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + r) % cases.length;
      const m = measure(cases[i]!.run, ms, cases[i]!.perCall);
      cpu[i]!.push(m.cpu);
      wall[i]!.push(m.wall);
    }
    after?.(r);
  }
  return { cpu, wall };
}
const perRound = (a: readonly number[], b: readonly number[]) => stat(a.map((x, i) => x / b[i]!));

// 1. Hexchain.
const header = encodeHeader({
  coord: { q: 0, r: -1, s: 1 },
  challengeHash: sha256(utf8('bench/hexchain')),
  minerPublicKey: sha256(utf8('bench/key')),
  nonce: 0,
});
const zero = new Uint8Array(32); // no hash meets it: every call hashes all its nonces
const headerView = new DataView(header.buffer);
const hexCase = (name: string, kernel: 'native' | 'wasm' | 'js', perCall: number): Case => {
  const job = prepareHexchain({ header, target: zero }, kernel);
  let nonce = 0;
  return {
    name,
    perCall,
    run: () => {
      const r = searchBlock(job, nonce, perCall);
      nonce += perCall;
      return r.hashes;
    },
  };
};
let cryptoNonce = 0;
const hexCases: Case[] = [
  hexCase('native', 'native', 65_536),
  hexCase('wasm', 'wasm', 16_384),
  hexCase('js', 'js', 8192),
  {
    name: 'crypto.hash',
    perCall: 2048,
    run: () => {
      let last: Buffer | undefined;
      for (let i = 0; i < 2048; i++) {
        headerView.setUint32(80, cryptoNonce++, true);
        last = hash('sha256', header, 'buffer');
      }
      return last;
    },
  },
];

/**
 * The machine's single-thread SHA-256 compression rate: OpenSSL on 16 KiB messages (SHA-NI
 * where the CPU has it; the padding block is negligible), bytes per second of its CPU user time
 * / 64, or why there is none.
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

warmUp(hexCases, 500);
const opensslRates: number[] = [];
let opensslMissing: string | undefined;
const HEX_ROUNDS = 7;
const hex = rounds(hexCases, HEX_ROUNDS, 300, () => {
  const o = openssl();
  if ('rate' in o) opensslRates.push(o.rate);
  else opensslMissing = o.missing;
});
const [nativeHex, wasmHex, jsHex, cryptoHex] = hex.cpu as [number[], number[], number[], number[]];
const hexNativeOverWasm = perRound(nativeHex, wasmHex);
const hexRows = hexCases
  .map((c, i) => `| ${c.name} | ${rate(stat(hex.cpu[i]!))} | ${formatRate(stat(hex.wall[i]!).median)} |`)
  .join('\n');
let opensslText: string;
let hexNativeOverOpenssl: Stat | undefined;
if (opensslMissing === undefined) {
  hexNativeOverOpenssl = perRound(nativeHex, opensslRates);
  const wasmOverOpenssl = perRound(wasmHex, opensslRates);
  opensslText = `| OpenSSL SHA-256, compressions (\`openssl speed -bytes 16384 -seconds 1 sha256\`, bytes/s / 64, per second of its CPU user time) | ${rate(stat(opensslRates))} | |

| ratio, median of the per-round ratios (range) | figure | target |
|---|---|---|
| native / OpenSSL's SHA-NI compression rate | ${times(hexNativeOverOpenssl)} | >= 0.9x: ${verdict(hexNativeOverOpenssl, 0.9)} |
| native / wasm | ${times(hexNativeOverWasm)} | >= 1.7x: ${verdict(hexNativeOverWasm, 1.7)} |
| wasm / OpenSSL | ${times(wasmOverOpenssl, false)} | |
| wasm / js | ${times(perRound(wasmHex, jsHex), false)} | |
| native / crypto.hash | ${times(perRound(nativeHex, cryptoHex), false)} | |`;
} else {
  opensslText = `OpenSSL: not measured: ${opensslMissing}.

| native / wasm, median of the per-round ratios (range) | ${times(hexNativeOverWasm)} | >= 1.7x: ${verdict(hexNativeOverWasm, 1.7)} |
|---|---|---|`;
}
console.log(hexRows);
console.log(opensslText);

// 2. v4.0: the search at each device type's largest tensor.
const mac = wasmMac();
if (mac === undefined) throw new Error('this runtime lacks WebAssembly SIMD');
const tensorRows: string[] = [];
const tensorTargets: { name: string; ratio: Stat }[] = [];
for (const { name, job: t } of benchJobs(0, 1)) {
  if (t.kind !== 'tensor') continue;
  const perCall = t.task.dim >= 64 ? 4 : t.task.dim >= 32 ? 16 : 64;
  const search = (kernel: 'native' | 'wasm' | 'js'): Case => {
    const s = new TensorSearch(t.task, t.minerPublicKey, kernel);
    let nonce = 0;
    return {
      name: kernel,
      perCall,
      run: () => {
        const r = s.search(nonce, perCall);
        nonce += r.iterations;
        return r.iterations;
      },
    };
  };
  let refNonce = 0;
  let macNonce = 0;
  const cases: Case[] = [
    search('native'),
    search('wasm'),
    search('js'),
    {
      name: 'reference',
      perCall: 1,
      run: () => computeWork(t.task, t.minerPublicKey, refNonce++).pathDistance,
    },
    {
      name: 'reference + wasm core',
      perCall: 1,
      run: () => computeWork(t.task, t.minerPublicKey, macNonce++, mac).pathDistance,
    },
  ];
  warmUp(cases, 300);
  const r = rounds(cases, 7, 150);
  const [n, w, j, ref, refMac] = r.cpu as [number[], number[], number[], number[], number[]];
  const nativeOverWasm = perRound(n, w);
  tensorTargets.push({ name: name.replace('tensor ', ''), ratio: nativeOverWasm });
  tensorRows.push(
    `| ${name.replace('tensor ', '')} | ${rate(stat(n))} | ${rate(stat(w))} | ${formatRate(stat(j).median)} | ${times(nativeOverWasm)} ${nativeOverWasm.median >= 1.5 ? '' : '(below 1.5x)'} | ${times(perRound(w, j), false)} | ${formatRate(stat(ref).median)} | ${formatRate(stat(refMac).median)} | ${times(perRound(refMac, ref), false)} |`,
  );
  console.log(tensorRows.at(-1));
}

const tensorVerdicts = tensorTargets.map((t) => `${t.name} ${verdict(t.ratio, 1.5)}`).join('; ');
writeSection(
  docPath,
  'miner',
  `## Miner kernels and engine

Command: \`npm run bench -w @tensormine/miner\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; load average ${loadAtStart.toFixed(1)} at the start).
Every figure comes from rounds in which each case runs once, the order rotating from round to
round; rates are per second of the measuring thread's CPU time (/proc/thread-self/schedstat),
which other processes' load does not dilute (it still costs caches and memory bandwidth, so
absolute rates move with the load: compare the ratios). Figures are medians over the rounds,
with the rounds' range in brackets; ratios are medians of the per-round ratios, with their
range. Single thread unless the row says otherwise. The native kernels here: ${selection.detail}.
Check a build's kernels with the offline benchmark's checksum (\`miner bench\`), the same on
every machine and for every kernel.

### Hexchain: nonces per second on one thread

${HEX_ROUNDS} rounds of 300 ms per kernel over the same header, at a target no hash meets (every
nonce hashed); OpenSSL spawned after each round.

| kernel | nonces per CPU second: median (range) | per wall second, median |
|---|---|---|
${hexRows}
${opensslText}

All kernels start from the midstate of the header's first block and compute one compression
per nonce. The native kernel (\`firmware-sim/native\`) runs rounds 4..63 of 2 nonces side by
side on \`SHA256RNDS2\` (rounds 0..3 depend only on the header: once per call of 65,536
nonces); the WebAssembly one runs 4 nonces per 128-bit vector with everything that does not
depend on the nonce hoisted out of the loop (scripts/generate-wasm.ts), the JavaScript one the
same compression unrolled. OpenSSL's figure is one long message on the same instructions: a
chain of dependent compressions, where the native scan interleaves independent ones.

### v4.0: nonce iterations per second at each device type's largest tensor

Each kernel's \`TensorSearch.search(start, count)\` on the offline benchmark's tasks (their
thresholds, difficulty level 10: a solution's work is computed too, about 1 nonce in 170), in
calls of 4 (N = 64), 16 (N = 32) or 64 (N = 16) nonces; 7 rounds of 150 ms per case. \`native\`:
the whole per-nonce search in C (seed and weights on SHA-NI, the multiply-accumulates on AVX2
\`VPMADDWD\` with the accumulator fold, sum, minimum and maximum interleaved, the fired bitmap
by compare and movemask, the path signature on SHA-NI, the MML score only when the distance
passes); \`wasm\`: the multiply-accumulates and the passes over the accumulators in WebAssembly
SIMD, the hashes in JavaScript; \`js\`: all JavaScript. The last three columns are what a
validator's verification costs: the reference \`computeWork\`, and with the WebAssembly core
(\`wasmMac()\`, the validator's \`verifyKernel\`).

| task | native search: median (range) | wasm search: median (range) | js search | native / wasm (target 1.5x) | wasm / js | computeWork | computeWork, wasm core | wasm core / reference |
|---|---|---|---|---|---|---|---|---|
${tensorRows.join('\n')}

Native / wasm >= 1.5x at every device type's tensor: ${tensorVerdicts}.

The engine's scaling from 1 to 2 worker threads: the next section.`,
);

// 3. Scaling from 1 to 2 workers (bench/scaling.ts; alone: npm run bench:scaling), its own section.
const scalingLoad = loadavg()[0]!;
const scaling = await measureScaling(selection.nativeLibrary!);
writeSection(docPath, 'miner-scaling', scalingSection(scaling, scalingLoad));
console.log(scaling.verdict);
