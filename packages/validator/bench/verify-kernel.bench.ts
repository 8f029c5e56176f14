/**
 * Verified native v4.0 POST /submit, the validator's two recomputation cores side by side:
 * two validator processes, one with `verifyKernel` reference (the TypeScript path, "today's
 * figure") and one with wasm (the WebAssembly SIMD multiply-accumulates), the same bench
 * miner, batches of native 64 x 64 proofs prepared untimed for each, then submitted in
 * alternating order (A B, B A, ...) for several rounds. Reported: every round's rate and server
 * CPU per proof, the per-round ratio, its median and spread, and the machine's load average.
 * Then the same two cores in process (`validator.inject`, no sockets, no load generator
 * beside the server): each proof's POST /submit timed alone in CPU time of this thread (where
 * the validator runs), the two validators alternating by blocks of proofs, so that a
 * neighbour's load weighs on both alike.
 *
 *   npm run bench:verify -w @tensormine/validator   (writes its section of docs/benchmarks.md)
 */
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type ChallengeWire, formatPublicKey, signRequest } from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { createValidator, type Validator } from '../src/app.js';
import { adminEnv, MINER, prepareProofs, registerMiner, VALIDATOR, validatorArgs } from './proofs.js';
import { type Child, fmt, median, runBench, startChild, stopChild, submitAll, table } from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const COMMAND = 'npm run bench:verify -w @tensormine/validator';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const PER_ROUND = Number(process.env.BENCH_PROOFS ?? 300);
const CONNECTIONS = 20;
/**
 * A full collection (untimed) before each block of proofs: the solving's garbage, and the other
 * validator's (the two share this process's heap), is not charged to the block.
 */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
/** In process: proofs per validator before switching to the other. */
const BLOCK = 100;

interface Sample {
  readonly rate: number;
  readonly cpuUs: number;
  readonly conv: number;
}

async function round(child: Child): Promise<Sample> {
  const prepared = await prepareProofs(child.url, 'native', PER_ROUND, 0);
  const run = await submitAll(child.url, '/submit', prepared.bodies, CONNECTIONS, child.process.pid);
  if (run.ok !== PER_ROUND) {
    throw new Error(`${child.name}: ${run.ok} of ${PER_ROUND} proofs accepted (${[...run.rejected]})`);
  }
  const conv = [...prepared.ops].filter(([op]) => op.startsWith('conv')).reduce((a, [, n]) => a + n, 0);
  return {
    rate: (run.ok * 1000) / run.elapsedMs,
    cpuUs: run.serverCpuMs === undefined ? Number.NaN : (run.serverCpuMs * 1000) / run.ok,
    conv,
  };
}

/** A validator in this process, verifyKernel `kernel`, with MINER registered. */
async function inProcess(kernel: 'reference' | 'wasm'): Promise<Validator> {
  const v = await createValidator({
    dataDir: ':memory:',
    logger: false,
    rateLimitPerSecond: 1_000_000,
    rateLimitBurst: 1_000_000,
    keyRateLimitPerSecond: 1_000_000,
    keyRateLimitBurst: 1_000_000,
    challengeTtlS: 3600,
    difficulty: 1,
    maxTensorDim: 64,
    verifyKernel: kernel,
  });
  const body = JSON.stringify({ pubkey: formatPublicKey(MINER.publicKey), device_type: 'native' });
  const headers = signRequest({
    method: 'POST',
    path: '/devices/register',
    body,
    secretKey: MINER.secretKey,
  });
  const res = await v.inject({
    method: 'POST',
    url: '/devices/register',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: body,
  });
  if (res.statusCode !== 200) throw new Error(res.body);
  return v;
}

/** CPU microseconds of this thread per accepted proof, for each validator, proofs alternating. */
async function alternate(validators: readonly Validator[], first: number): Promise<Sample[]> {
  const prepared = await Promise.all(
    validators.map((v) =>
      prepareProofs(
        async (body) => {
          const res = await v.inject({
            method: 'POST',
            url: '/challenge',
            headers: { 'content-type': 'application/json' },
            payload: body,
          });
          if (res.statusCode !== 200) throw new Error(res.body);
          return res.json() as ChallengeWire;
        },
        'native',
        PER_ROUND,
        0,
      ),
    ),
  );
  const cpuUs = validators.map(() => 0);
  const wallMs = validators.map(() => 0);
  // Blocks of BLOCK proofs, alternating between the validators (A B A B ..., or B A B A ...).
  for (let start = 0, block = 0; start < PER_ROUND; start += BLOCK, block++) {
    for (let k = 0; k < validators.length; k++) {
      const j = (k + first + block) % validators.length;
      // Untimed: the other validator's garbage is not charged to this one (one heap here).
      collectGarbage();
      for (let i = start; i < Math.min(PER_ROUND, start + BLOCK); i++) {
        const c0 = process.threadCpuUsage();
        const t0 = performance.now();
        const res = await validators[j]!.inject({
          method: 'POST',
          url: '/submit',
          headers: { 'content-type': 'application/json' },
          payload: prepared[j]!.bodies[i]!,
        });
        wallMs[j]! += performance.now() - t0;
        const c = process.threadCpuUsage(c0);
        cpuUs[j]! += c.user + c.system;
        if (res.statusCode !== 200) throw new Error(`/submit: ${res.statusCode} ${res.body}`);
      }
    }
  }
  return validators.map((_, j) => ({
    rate: (PER_ROUND * 1000) / wallMs[j]!,
    cpuUs: cpuUs[j]! / PER_ROUND,
    conv: [...prepared[j]!.ops].filter(([op]) => op.startsWith('conv')).reduce((a, [, n]) => a + n, 0),
  }));
}

const list = (xs: readonly number[], digits = 0) => xs.map((x) => fmt(x, digits)).join(', ');
const spread = (xs: readonly number[]) => `${Math.min(...xs).toFixed(2)}x - ${Math.max(...xs).toFixed(2)}x`;

const load = () =>
  loadavg()
    .slice(0, 2)
    .map((v) => v.toFixed(1))
    .join(' / ');

async function main(): Promise<void> {
  const startedAt = performance.now();
  const loadBefore = load();
  console.log(`validator verify-kernel A/B on ${machineLine()}`);
  const args = validatorArgs('--difficulty', '1', '--max-tensor-dim', '64');
  const [reference, wasm] = await Promise.all([
    startChild('validator (verifyKernel reference)', VALIDATOR, args, {
      ...adminEnv,
      TENSORMINE_VERIFY_KERNEL: 'reference',
    }),
    startChild('validator (verifyKernel wasm)', VALIDATOR, args, {
      ...adminEnv,
      TENSORMINE_VERIFY_KERNEL: 'wasm',
    }),
  ]);
  const ref: Sample[] = [];
  const fast: Sample[] = [];
  try {
    await Promise.all([registerMiner(reference.url), registerMiner(wasm.url)]);
    // A warm-up batch each (JIT, the module's compilation and self-check), not counted.
    await round(reference);
    await round(wasm);
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2 === 0) {
        ref.push(await round(reference));
        fast.push(await round(wasm));
      } else {
        fast.push(await round(wasm));
        ref.push(await round(reference));
      }
      console.log(
        `round ${r + 1}: reference ${fmt(ref[r]!.rate)}/s (${fmt(ref[r]!.cpuUs)} us/proof), wasm ${fmt(fast[r]!.rate)}/s (${fmt(fast[r]!.cpuUs)} us/proof), ratio ${(fast[r]!.rate / ref[r]!.rate).toFixed(2)}x, load ${load()}`,
      );
    }
  } finally {
    await Promise.all([stopChild(reference.process), stopChild(wasm.process)]);
  }
  // In process: CPU time per proof, the two cores' proofs alternating one by one.
  const local = await Promise.all([inProcess('reference'), inProcess('wasm')]);
  const localRef: Sample[] = [];
  const localFast: Sample[] = [];
  try {
    await alternate(local, 0); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      const [a, b] = await alternate(local, r % 2);
      localRef.push(a!);
      localFast.push(b!);
      console.log(
        `in process, round ${r + 1}: reference ${fmt(a!.cpuUs)} us/proof, wasm ${fmt(b!.cpuUs)} us/proof, ratio ${(a!.cpuUs / b!.cpuUs).toFixed(2)}x, load ${load()}`,
      );
    }
  } finally {
    await Promise.all(local.map((v) => v.close()));
  }
  const localRatios = localFast.map((s, i) => localRef[i]!.cpuUs / s.cpuUs);
  const perCore = (s: readonly Sample[]) => s.map((x) => 1e6 / x.cpuUs);
  const localTable = table(
    [
      'verifyKernel',
      'accepted proofs per CPU second, by round',
      'median',
      'CPU us per proof, by round',
      'ratio: median (spread over rounds)',
      `conv proofs of ${PER_ROUND}, by round`,
    ],
    [
      [
        'reference (TypeScript)',
        list(perCore(localRef)),
        `**${fmt(median(perCore(localRef)))}/s**`,
        list(localRef.map((x) => x.cpuUs)),
        '1.00x',
        list(localRef.map((x) => x.conv)),
      ],
      [
        'wasm (WebAssembly SIMD)',
        list(perCore(localFast)),
        `**${fmt(median(perCore(localFast)))}/s**`,
        list(localFast.map((x) => x.cpuUs)),
        `**${median(localRatios).toFixed(2)}x** (${spread(localRatios)})`,
        list(localFast.map((x) => x.conv)),
      ],
    ],
  );
  console.log(localTable);
  const seconds = (performance.now() - startedAt) / 1000;
  const rateRatios = fast.map((s, i) => s.rate / ref[i]!.rate);
  const cpuRatios = fast.map((s, i) => ref[i]!.cpuUs / s.cpuUs);
  const row = (name: string, s: readonly Sample[], ratio: string, cpuRatio: string) => [
    name,
    list(s.map((x) => x.rate)),
    `**${fmt(median(s.map((x) => x.rate)))}/s**`,
    ratio,
    list(s.map((x) => x.cpuUs)),
    `${fmt(median(s.map((x) => x.cpuUs)))} us`,
    cpuRatio,
    list(s.map((x) => x.conv)),
  ];
  const result = table(
    [
      'verifyKernel',
      'accepted /s, by round',
      'median',
      'rate ratio: median (spread over rounds)',
      'server CPU us per proof, by round',
      'median',
      'CPU ratio: median (spread)',
      `conv proofs of ${PER_ROUND}, by round`,
    ],
    [
      row('reference (TypeScript)', ref, '1.00x', '1.00x'),
      row(
        'wasm (WebAssembly SIMD)',
        fast,
        `**${median(rateRatios).toFixed(2)}x** (${spread(rateRatios)})`,
        `**${median(cpuRatios).toFixed(2)}x** (${spread(cpuRatios)})`,
      ),
    ],
  );
  console.log(result);
  writeSection(
    DOC_PATH,
    'validator-verify',
    `## Validator: verified native /submit, reference against WebAssembly verification

Command: \`${COMMAND}\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; load average ${loadBefore} at the start; ${fmt(seconds)} s).
Two validator processes (\`src/bin.ts start --data-dir :memory:\`, difficulty 1, rate limits
raised) that differ only in \`TENSORMINE_VERIFY_KERNEL\`: \`reference\` (the TypeScript
recomputation, the figure before the WebAssembly core) and \`wasm\` (the multiply-accumulates
in WebAssembly SIMD, after its self-check against the reference). Each round, ${PER_ROUND} native
64 x 64 proofs are requested from each validator, solved and signed in the bench process
(untimed), then submitted to it with autocannon (${CONNECTIONS} connections, each body once); the rate is
accepted proofs over the time to the last response, the CPU is the server process's (all
threads) over the run. The order alternates (reference first in odd rounds, wasm first in even
ones), ${ROUNDS} rounds after one warm-up batch each; the ratios are per round, then their median and
their range. Every proof of every round was accepted (200). The challenges are a random mix of
matmul 64x64 and conv 8x64x64 (the last column: the conv ones per round; a conv verification
costs about 2.5 times a matmul one with the reference).

${result}

The server CPU per proof is the steadier comparison on this shared 2-core machine (the rate also
depends on how much of a core the neighbours leave the server during its run).

The same two cores in process, in the same run (\`validator.inject\`: no sockets, and no load
generator sharing the machine with the server): ${PER_ROUND} native proofs per validator and round, prepared
untimed, then each POST /submit timed alone in CPU time of the thread the validator runs on,
the two validators alternating by blocks of ${BLOCK} proofs (so that a neighbour's load weighs on
both alike), a full garbage collection (untimed) before each block (the two validators share
this process's heap: the other's garbage is not charged to a block, each block's own is, up
to its last young-generation collection); ${ROUNDS} rounds after a warm-up round. The requests go
through \`inject\` (light-my-request), which costs more per request than the HTTP server's
socket path: compare the ratios, not these absolute figures with the server's.

${localTable}`,
  );
  console.log(`wrote the validator-verify section of ${DOC_PATH} (${fmt(seconds)} s)`);
}

runBench(main);
