/**
 * Nonce rates of the C core (build/tm-bench) beside the TypeScript reference, measured in the
 * same run on the same challenges in interleaved rounds (C, TS, C, TS, ...; median per
 * series), and written to the `firmware-sim` section of docs/benchmarks.md.
 *
 *   npm run bench -w @tensormine/firmware-sim
 *
 * Tensor: each device type's largest tensor, for each operation it runs (the challenges of the
 * protocol benchmark). The C search (tm_search_tensor) runs with thresholds no result meets, so
 * every nonce is a full iteration; tm_compute_work is one full iteration with the result hash
 * (what a validator recomputes). The TypeScript computeWork is the reference solver's cost per
 * nonce; verifyProof is the figure of the protocol section. Hexchain: tm_search_block (midstate,
 * one compression per nonce) beside the reference solveBlock.
 */
import { execFileSync, spawn } from 'node:child_process';
import { hash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
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

const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}x`;

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
    let nonce = 1_000_000;
    const [cSearch, tsWork, cWork, tsVerify] = (await sideBySide([
      cRound(`tensor search ${task} ${ROUND_MS}`),
      tsRound({ name: 'computeWork', run: () => computeWork(c, miner.publicKey, nonce++).pathDistance }),
      cRound(`tensor work ${task} ${ROUND_MS}`),
      tsRound({ name: 'verifyProof', run: () => verifyProof(c, proof, { signature }).ok }),
    ])) as [number, number, number, number];
    const scratchBytes = (await core.run(`tensor work ${task} 1`))[1]!;
    const dims = operation === 'conv' ? `${c.filters}x${c.dim}x${c.dim}` : `${c.dim}x${c.dim}`;
    const row = `| ${deviceType} ${operation} ${dims} | ${formatRate(cSearch)} | ${formatRate(cWork)} | ${formatRate(tsWork)} | ${formatRate(tsVerify)} | ${ratio(cSearch, tsWork)} | ${ratio(cWork, tsWork)} |`;
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
const [cBlock, tsSolve, cPow, tsNode] = (await sideBySide([
  cRound(`block search ${prefix} ${ROUND_MS}`),
  // At the hardest target a hit is about 2^-45 likely: the solver hashes `batch` nonces.
  tsRound({
    name: 'solveBlock',
    run: () =>
      solveBlock({ challengeHash, coord, minerPublicKey, target: MIN_HEX_TARGET, maxIterations: batch }),
  }),
  cRound(`block pow ${prefix} ${ROUND_MS}`),
  tsRound({ name: 'crypto.hash', run: () => hash('sha256', header, 'buffer') }),
])) as [number, number, number, number];
core.close();
const tsSolveRate = tsSolve * batch;
const blockRows = [
  `| tm_search_block (midstate, per nonce) | ${formatRate(cBlock)} | solveBlock (reference, per nonce) ${formatRate(tsSolveRate)} | ${ratio(cBlock, tsSolveRate)} |`,
  `| tm_hex_pow_hash (whole 88-byte header) | ${formatRate(cPow)} | crypto.hash('sha256'), 88 B ${formatRate(tsNode)} | ${ratio(cPow, tsNode)} |`,
];
for (const row of blockRows) console.log(row);

writeSection(
  docPath,
  'firmware-sim',
  `## C mining core (firmware-sim), on the host

Command: \`npm run bench -w @tensormine/firmware-sim\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}).
The C core is built with \`${compiler}\`, \`-std=c99 -O2\`, and runs on one core. Its figures
(build/tm-bench) and the TypeScript reference figures are measured in the same run on the same
challenges, in interleaved rounds of ${ROUND_MS} ms (C, TS, C, TS, ...; median of ${ROUNDS} per
figure); the ratios are C over the TypeScript \`computeWork\`, the reference solver's cost per
nonce. These are host figures: an ESP32 runs the same C code far slower (its rates come with the
board, in phase B).

| device tensor | C tm_search_tensor, nonces/s | C tm_compute_work /s | TS computeWork /s | TS verifyProof /s | search / computeWork | compute_work / computeWork |
|---|---|---|---|---|---|---|
${tensorRows.join('\n')}

The search does per nonce what proves the work (weights, accumulators, fired bitmap, path
signature, MML) and computes the activations and the result hash only for a solution;
\`tm_compute_work\` always computes them (a validator's recomputation).

| C | rate | TypeScript, same run | C / TS |
|---|---|---|---|
${blockRows.join('\n')}

Working memory of one tensor iteration in the C core (caller-provided; no allocation):

| device tensor | scratch (\`tm_scratch_words\` x 4) | input X (N x N) | total |
|---|---|---|---|
${memoryRows.join('\n')}`,
);
