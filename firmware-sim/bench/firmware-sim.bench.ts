/**
 * Nonce rates of the C core (build/tm-bench) beside the miner's fast TypeScript kernels
 * (@tensormine/miner) and the TypeScript reference (@tensormine/protocol), measured in the same
 * run on the same challenges and headers in interleaved rounds (C, kernel, reference, C, ...;
 * median per series), one thread each, and written to the `firmware-sim` section of
 * docs/benchmarks.md.
 *
 *   npm run bench -w @tensormine/firmware-sim
 *
 * Tensor: each device type's largest tensor, for each operation it runs (the challenges of the
 * protocol benchmark). The C search (tm_search_tensor) and the kernel search (TensorSearch) run
 * with thresholds no result meets, so every nonce is a full iteration; tm_compute_work is one
 * full iteration with the result hash (what a validator recomputes). The TypeScript computeWork
 * is the reference solver's cost per nonce; verifyProof is the figure of the protocol section.
 * Hexchain: tm_search_block and the kernel's searchBlock (midstate, one compression per nonce)
 * beside the reference solveBlock, at the hardest target.
 */
import { execFileSync, spawn } from 'node:child_process';
import { hash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { prepareHexchain, searchBlock, TensorSearch } from '@tensormine/miner';
import {
  computeWork,
  DEVICE_PROFILES,
  type DeviceType,
  deriveChallenge,
  encodeHeader,
  keyPairFromSecret,
  MIN_HEX_TARGET,
  proofBytesFromWire,
  proofFromWork,
  signProof,
  solveBlock,
  solveProof,
  taggedHash,
  targetToBytes,
  toHex,
  utf8,
  verifyProof,
} from '@tensormine/protocol';
import {
  type Case,
  formatRate,
  machineLine,
  measure,
  writeSection,
} from '../../packages/protocol/bench/harness.ts';
import { buildCore, buildDir } from '../test/driver.ts';

const docPath = join(dirname(fileURLToPath(import.meta.url)), '../../docs/benchmarks.md');
const ROUNDS = 7;
const ROUND_MS = 150;
const WARMUP_MS = 200;
/** Nonces per call of a kernel search (each call is one operation of the harness). */
const TENSOR_BATCH = 8;
const BLOCK_BATCH = 4096;
/** MML scores are at most 1.0 (Q16): every nonce passes the MML test and reaches the path test. */
const MML_ANY_Q16 = 65536;

/** build/tm-bench as a child process: each command is one timed round of the C core. */
class CoreBench {
  private readonly child = spawn(join(buildDir, 'tm-bench'), { stdio: ['pipe', 'pipe', 'inherit'] });
  private readonly lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();

  async run(command: string): Promise<number[]> {
    this.child.stdin.write(`${command}\n`);
    const { value, done } = await this.lines.next();
    if (done || value.startsWith('error')) throw new Error(`tm-bench ${command}: ${done ? 'exited' : value}`);
    return value.split(' ').map(Number);
  }

  close(): void {
    this.child.stdin.end();
  }
}

/** One round of a series: operations per second. */
type Round = () => number | Promise<number>;

/** Rounds of every series in turn, ROUNDS times; the median rate of each series. */
async function sideBySide(series: readonly Round[]): Promise<number[]> {
  const samples = series.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, round] of series.entries()) samples[i]!.push(await round());
  }
  return samples.map((s) => s.sort((a, b) => a - b)[Math.floor(s.length / 2)]!);
}

const tsRound =
  (c: Case): Round =>
  () =>
    measure([c], { rounds: 1, roundMs: ROUND_MS })[0]!.opsPerSecond;
const cRound =
  (command: string): Round =>
  async () =>
    (await core.run(command))[0]!;

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

/** Runs each case for `ms` first, so that the rounds time optimised code. */
function warmUp(cases: readonly Case[], ms = WARMUP_MS): void {
  for (const c of cases) {
    const end = performance.now() + ms;
    while (performance.now() < end) c.run();
  }
}

buildCore();
const core = new CoreBench();
const compiler = execFileSync('cc', ['--version'], { encoding: 'utf8' }).split('\n')[0]!;
const miner = keyPairFromSecret(taggedHash('bench/key', utf8('miner')));
const validatorSeed = taggedHash('bench/seed', utf8('validator'));

const tensorRows: string[] = [];
const memoryRows: string[] = [];
for (const deviceType of Object.keys(DEVICE_PROFILES) as DeviceType[]) {
  for (const operation of DEVICE_PROFILES[deviceType].operations) {
    let serial = 0;
    let c = deriveChallenge({ validatorSeed, slot: 1, slotHash: 'bench', serial, deviceType, difficulty: 4 });
    while (c.operation !== operation) {
      serial++;
      c = deriveChallenge({ validatorSeed, slot: 1, slotHash: 'bench', serial, deviceType, difficulty: 4 });
    }
    const task = `${operation} ${c.dim} ${c.filters} ${toHex(c.challengeHash)} ${toHex(miner.publicKey)}`;
    const solved = solveProof(c, miner.publicKey)!;
    const proof = proofFromWork('bench', c.challengeHash, miner.publicKey, solved.nonce, solved.work);
    const signature = signProof(proofBytesFromWire(proof, solved.work.mmlScoreQ16), miner.secretKey);
    // The kernel checks the MML score first and the path distance second (the C core the other
    // way round): MML_ANY_Q16 lets every nonce through to the path signature and distance, and a
    // distance is never <= -1, so no nonce is a result and each one is a full iteration.
    const searchCase = (kind: 'js' | 'wasm'): Case => {
      const kernel = new TensorSearch(
        { ...c, mmlThresholdQ16: MML_ANY_Q16, pathDistanceMax: -1 },
        miner.publicKey,
        kind,
      );
      let kernelNonce = 1_000_000;
      return {
        name: `TensorSearch.search (${kind})`,
        run: () => {
          const r = kernel.search(kernelNonce, TENSOR_BATCH);
          kernelNonce += TENSOR_BATCH;
          if (r.found !== undefined || r.iterations !== TENSOR_BATCH)
            throw new Error('kernel search stopped early');
          return r.iterations;
        },
      };
    };
    const kernelCase = searchCase('js');
    const wasmCase = searchCase('wasm');
    let nonce = 1_000_000;
    const referenceCase: Case = {
      name: 'computeWork',
      run: () => computeWork(c, miner.publicKey, nonce++).pathDistance,
    };
    warmUp([kernelCase, wasmCase, referenceCase]);
    const [cSearch, tsKernelCalls, wasmCalls, tsWork, cWork, tsVerify] = (await sideBySide([
      cRound(`tensor search ${task} ${ROUND_MS}`),
      tsRound(kernelCase),
      tsRound(wasmCase),
      tsRound(referenceCase),
      cRound(`tensor work ${task} ${ROUND_MS}`),
      tsRound({ name: 'verifyProof', run: () => verifyProof(c, proof, { signature }).ok }),
    ])) as [number, number, number, number, number, number];
    const tsKernel = tsKernelCalls * TENSOR_BATCH;
    const wasmKernel = wasmCalls * TENSOR_BATCH;
    const scratchBytes = (await core.run(`tensor work ${task} 1`))[1]!;
    const dims = operation === 'conv' ? `${c.filters}x${c.dim}x${c.dim}` : `${c.dim}x${c.dim}`;
    const row = `| ${deviceType} ${operation} ${dims} | ${formatRate(cSearch)} | ${formatRate(tsKernel)} | ${formatRate(wasmKernel)} | **${ratio(wasmKernel, cSearch)}** | **${ratio(wasmKernel, tsKernel)}** | ${formatRate(tsWork)} | ${ratio(cSearch, tsKernel)} | **${ratio(tsKernel, tsWork)}** | ${formatRate(cWork)} | ${formatRate(tsVerify)} | ${ratio(cSearch, tsWork)} | ${ratio(cWork, tsWork)} |`;
    tensorRows.push(row);
    console.log(row);
    const inputBytes = c.dim * c.dim;
    memoryRows.push(
      `| ${deviceType} ${operation} ${dims} | ${scratchBytes.toLocaleString('en-US')} B | ${inputBytes.toLocaleString('en-US')} B | ${(scratchBytes + inputBytes).toLocaleString('en-US')} B |`,
    );
  }
}

const challengeHash = taggedHash('bench', utf8('hex-challenge'));
const minerPublicKey = taggedHash('bench', utf8('hex-miner'));
const coord = { q: 3, r: -1, s: -2 };
const header = encodeHeader({ coord, challengeHash, minerPublicKey, nonce: 0 });
const prefix = toHex(header.subarray(0, 80));
const batch = 256;
// The kernels on the same header and the reference's target (a hit is about 2^-45 likely).
const blockCase = (kind: 'js' | 'wasm'): Case => {
  const prepared = prepareHexchain({ header, target: targetToBytes(MIN_HEX_TARGET) }, kind);
  let blockNonce = 0;
  return {
    name: `searchBlock (${kind})`,
    run: () => {
      const r = searchBlock(prepared, blockNonce, BLOCK_BATCH);
      blockNonce += BLOCK_BATCH;
      if (r.found !== undefined || r.hashes !== BLOCK_BATCH)
        throw new Error('kernel block search stopped early');
      return r.hashes;
    },
  };
};
const blockKernelCase = blockCase('js');
const blockWasmCase = blockCase('wasm');
warmUp([blockKernelCase, blockWasmCase]);
const [cBlock, tsBlockCalls, wasmBlockCalls, tsSolve, cPow, tsNode] = (await sideBySide([
  cRound(`block search ${prefix} ${ROUND_MS}`),
  tsRound(blockKernelCase),
  tsRound(blockWasmCase),
  // At the hardest target a hit is about 2^-45 likely: the solver hashes `batch` nonces.
  tsRound({
    name: 'solveBlock',
    run: () =>
      solveBlock({ challengeHash, coord, minerPublicKey, target: MIN_HEX_TARGET, maxIterations: batch }),
  }),
  cRound(`block pow ${prefix} ${ROUND_MS}`),
  tsRound({ name: 'crypto.hash', run: () => hash('sha256', header, 'buffer') }),
])) as [number, number, number, number, number, number];
core.close();
const tsBlock = tsBlockCalls * BLOCK_BATCH;
const wasmBlock = wasmBlockCalls * BLOCK_BATCH;
const tsSolveRate = tsSolve * batch;
const blockSearchRow = `| hexchain, hardest target | ${formatRate(cBlock)} | ${formatRate(tsBlock)} | ${formatRate(wasmBlock)} | **${ratio(wasmBlock, cBlock)}** | ${formatRate(tsSolveRate)} | **${ratio(cBlock, tsBlock)}** | **${ratio(tsBlock, tsSolveRate)}** | ${ratio(cBlock, tsSolveRate)} |`;
const powRow = `| tm_hex_pow_hash (whole 88-byte header) | ${formatRate(cPow)} | crypto.hash('sha256'), 88 B ${formatRate(tsNode)} | ${ratio(cPow, tsNode)} |`;
console.log(blockSearchRow);
console.log(powRow);

writeSection(
  docPath,
  'firmware-sim',
  `## C mining core (firmware-sim), on the host

Command: \`npm run bench -w @tensormine/firmware-sim\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}).
The C core is built with \`${compiler}\`, \`-std=c99 -O2\`, and runs on one core (build/tm-bench,
a child process). Beside it, in the same run, on the same challenges and headers and on one
thread (the bench's own), run the miner's fast TypeScript kernels (\`@tensormine/miner\`) and
the TypeScript reference (\`@tensormine/protocol\`). Every figure of a row is measured in
interleaved rounds of ${ROUND_MS} ms (C, kernel, reference, C, ...; median of ${ROUNDS} rounds per
figure, after a ${WARMUP_MS} ms warm-up of the TypeScript searches), so the ratios, measured side by
side, are what count on a shared machine; the absolute rates move with the machine's load.
These are host figures: an ESP32 runs the same C code far slower (its rates come with the
board, in phase B).

### v4.0: nonces per second at each device type's largest tensor

What each column measures (per nonce, one thread):

- **C search**: \`tm_search_tensor\` with thresholds no result meets (MML <= 0, distance <= 0),
  so every nonce is a full search iteration: work seed (midstate), weights, accumulators,
  normalisation, fired bitmap, path signature and distance (the MML score is computed only for
  a nonce within the distance; none is).
- **TS kernel search**: the miner's \`TensorSearch.search(start, ${TENSOR_BATCH})\` on the same challenge
  and key, with thresholds no result meets (MML <= 1.0, which every score passes, then distance
  <= -1, which none does), so every nonce is a full iteration: work seed, weights, accumulators,
  normalisation, fired bitmap and its MML score, path signature and distance.
- **TS reference**: \`computeWork\` of \`@tensormine/protocol\`, the reference solver's cost per
  nonce (it also computes the activations, the result hash and the computation hash).
- **wasm kernel search**: the same search with the multiply-accumulates and the passes over
  the accumulators (fold, sum, min, max; fired bitmap and MML length) in the miner's
  WebAssembly SIMD module (\`new TensorSearch(task, key, 'wasm')\`, the miner's default); the TS
  kernel search column is the JavaScript kernel (\`'js'\`). **wasm / C** is the WebAssembly
  kernel's rate over the C core's, **wasm / TS kernel** over the JavaScript kernel's.
- **C / TS kernel** and **TS kernel / reference**: the ratios of those rates.
- **C compute_work**: \`tm_compute_work\`, one iteration with the activations, result hash and
  computation hash (what a validator recomputes); **TS verifyProof**: the reference
  verification of a signed proof (the figure of the protocol section); **C search / reference**
  and **C compute_work / reference**: C over \`computeWork\`.

| device tensor | C search, nonces/s | TS kernel search (js), nonces/s | wasm kernel search, nonces/s | wasm / C | wasm / TS kernel | TS reference computeWork, nonces/s | C / TS kernel | TS kernel / reference | C compute_work /s | TS verifyProof /s | C search / reference | C compute_work / reference |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${tensorRows.join('\n')}

Neither search computes the activations or the result hash for a nonce that is not a
solution; \`tm_compute_work\` and \`computeWork\` always do. tm-bench derives the input X and
the path target from the challenge hash as the challenge does, and runs every task with the
relu activation (the searches never apply the activation; \`tm_compute_work\` applies it, one
clamp per neuron, whichever activation it is).

### Hexchain: nonces per second at the hardest target

The same 88-byte header for all three; the nonce is its last 8 bytes. **C**: \`tm_search_block\`
(midstate, one compression per nonce) with a target no hash meets. **TS kernel**: the miner's
\`prepareHexchain\` / \`searchBlock(prepared, start, ${BLOCK_BATCH})\` (midstate, one compression per
nonce) at \`MIN_HEX_TARGET\`. **TS reference**: \`solveBlock\` at \`MIN_HEX_TARGET\`,
${batch} nonces per call. At that target a hit is about 2^-45 likely, so every nonce is hashed.
Both searches compress only the second block per nonce; the kernel's generated compression also
hoists out of the loop everything that does not depend on the nonce, where \`tm_search_block\`
runs the whole compression, so a C / TS kernel ratio below 1 means the kernel is the faster.

| search | C tm_search_block | TS kernel searchBlock (js) | wasm kernel searchBlock | wasm / C | TS reference solveBlock | C / TS kernel | TS kernel / reference | C / reference |
|---|---|---|---|---|---|---|---|---|
${blockSearchRow}

Whole-header hashing (no midstate), the same rounds:

| C | rate | TypeScript, same run | C / TS |
|---|---|---|---|
${powRow}

### Working memory

Working memory of one tensor iteration in the C core (caller-provided; no allocation):

| device tensor | scratch (\`tm_scratch_words\` x 4) | input X (N x N) | total |
|---|---|---|---|
${memoryRows.join('\n')}`,
);
