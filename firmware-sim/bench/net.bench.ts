/**
 * The board on the network, measured, and written to the `firmware-sim-net` section of
 * docs/benchmarks.md:
 *
 *   npm run bench:net -w @tensormine/firmware-sim
 *
 * 1. ed25519 signatures and verifications per second, the C core (build/tm-bench-ed25519) beside
 *    node:crypto (OpenSSL), in interleaved rounds on a 117-byte message (median per series).
 * 2. The rv32imc instructions of one signature and one verification (qemu -icount, minstret;
 *    make rv32-icount), when the cross toolchain is installed.
 * 3. How long a board keeps mining stale work: a validator in this process and three
 *    `tm-sim --net` boards, one called back, two polling their cell (every 1 s, and every 5 s,
 *    the default without a callback port). The bench takes each board's cell with a block of its
 *    own, over and over, and times from the block's submission to the board's "dropped" line
 *    (median and the largest of the samples, which is the p99 of so few).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type Coord, generateKeyPair } from '@tensormine/protocol';
import { createValidator } from '@tensormine/validator';
import { machineLine, writeSection } from '../../packages/protocol/bench/harness.ts';
import { buildCore, buildDir, packageDir } from '../test/driver.ts';
import { NetBoard } from '../test/net-board.ts';
import { BlockSolver, registerKey, takeCell as takeCell_ } from '../test/net-harness.ts';

const docPath = join(dirname(fileURLToPath(import.meta.url)), '../../docs/benchmarks.md');
const ROUNDS = 7;
const ROUND_MS = 300;
const EVENTS = Number(process.env.BENCH_NET_EVENTS ?? 20);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const max = (xs: number[]) => Math.max(...xs);

// ---- 1. ed25519, C and node:crypto side by side ---------------------------------------------
buildCore();
const compiler = execFileSync('cc', ['--version'], { encoding: 'utf8' }).split('\n')[0]!;
const c = spawn(join(buildDir, 'tm-bench-ed25519'), { stdio: ['pipe', 'pipe', 'inherit'] });
const cLines = createInterface({ input: c.stdout })[Symbol.asyncIterator]();
const cRound = async (kind: 'sign' | 'verify') => {
  c.stdin.write(`${kind} ${ROUND_MS}\n`);
  const { value } = await cLines.next();
  return Number(value);
};
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const key = createPrivateKey({
  key: Buffer.concat([PKCS8, Buffer.alloc(32, 7)]),
  format: 'der',
  type: 'pkcs8',
});
const pub = createPublicKey(key);
const message = Buffer.alloc(117, 11);
const signature = sign(null, message, key);
const nodeRound = (kind: 'sign' | 'verify') => {
  let ops = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ROUND_MS) {
    if (kind === 'sign') {
      message[0] = (message[0]! + 1) & 0xff;
      sign(null, message, key);
    } else if (!verify(null, message, pub, signature) && message[0] === 11) {
      throw new Error('node:crypto did not verify');
    }
    ops++;
    now = performance.now();
  }
  return (ops * 1000) / (now - start);
};
message[0] = 11;
const samples = {
  cSign: [] as number[],
  nodeSign: [] as number[],
  cVerify: [] as number[],
  nodeVerify: [] as number[],
};
for (let r = 0; r < ROUNDS; r++) {
  samples.cSign.push(await cRound('sign'));
  samples.nodeSign.push(nodeRound('sign'));
  message[0] = 11;
  samples.cVerify.push(await cRound('verify'));
  samples.nodeVerify.push(nodeRound('verify'));
}
c.stdin.end();
const ed = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])) as Record<
  keyof typeof samples,
  number
>;

// ---- 2. rv32imc instructions per signature ---------------------------------------------------
let icount = 'not measured (the rv32 toolchain or qemu-system-riscv32 is missing)';
const hasRv32 =
  spawnSync('sh', ['-c', 'command -v riscv64-unknown-elf-gcc && command -v qemu-system-riscv32']).status ===
  0;
if (hasRv32) {
  const out = execFileSync('make', ['-s', 'rv32-icount'], { cwd: packageDir, encoding: 'utf8' });
  const n = (name: string) =>
    Number(new RegExp(`^icount ${name}\\b.* instructions=(\\d+)`, 'm').exec(out)?.[1]);
  const ms = (i: number) => ((i / 160e6) * 1000).toFixed(0);
  icount = `signature ${(n('ed25519-sign') / 1e6).toFixed(2)} M instructions (about ${ms(n('ed25519-sign'))} ms at 160 MHz and one instruction per cycle), verification ${(n('ed25519-verify') / 1e6).toFixed(2)} M (about ${ms(n('ed25519-verify'))} ms), public key from the seed ${(n('ed25519-public-key') / 1e6).toFixed(2)} M`;
}

// ---- 3. stale work: callbacks against polling ------------------------------------------------
const v = await createValidator({
  dataDir: ':memory:',
  hexDifficulty: 16_000n, // 80 s per block at the boards' 200 nonces/s: the bench takes every cell
  blockIntervalMs: 3_600_000n, // retargets only raise it: no retarget notification during the run
  challengeTtlS: 3600,
  rateLimitPerSecond: 100_000,
  rateLimitBurst: 100_000,
  logger: false,
});
const url = await v.listen({ host: '127.0.0.1', port: 0 });
const harness = generateKeyPair();
await registerKey(url, harness, { device_type: 'native' });
const modes = [
  { name: 'callback (the board listens on its port)', args: [] as string[] },
  {
    name: 'polling every 1 s (--no-callbacks --poll-ms 1000)',
    args: ['--no-callbacks', '--poll-ms', '1000'],
  },
  { name: 'polling every 5 s (the default without a callback port)', args: ['--no-callbacks'] },
];
const boards = modes.map(
  (m, i) =>
    new NetBoard([
      '--net',
      url,
      '--seed',
      String(100 + i),
      '--listen',
      '127.0.0.1',
      '--rate-cap',
      '200',
      ...m.args,
    ]),
);
const devices = async () =>
  (
    (await (await fetch(`${url}/devices?limit=500`)).json()) as {
      devices: { pubkey: string; work: { challenge_id: string; coord: Coord; stale: boolean } | null }[];
    }
  ).devices;

const solver = new BlockSolver();
/** Takes `coord` with the harness key: performance.now() before the accepted block's submission. */
async function takeCell(coord: Coord): Promise<number | undefined> {
  const taken = await takeCell_(url, harness, coord, solver);
  return taken?.status === 200 ? taken.at : undefined;
}

const times: number[][] = modes.map(() => []);
// Whatever happens, the boards are stopped with the bench.
process.on('exit', () => {
  for (const b of boards) if (b.process.exitCode === null) b.process.kill('SIGKILL');
});
await Promise.all(
  boards.map(async (board, i) => {
    const pubkey = (await board.waitFor(/net board ([0-9a-f]{64})/))[1]!;
    while (times[i]!.length < EVENTS) {
      const d = (await devices()).find((x) => x.pubkey === pubkey);
      if (!d?.work || d.work.stale) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const from = board.lines.length;
      const at = await takeCell(d.work.coord);
      if (at === undefined) continue;
      const line = await board.waitFor(
        new RegExp(`job ${d.work.challenge_id} dropped: (callback|poll)`),
        from,
        60_000,
      );
      const dropped = board.lines.find((l, k) => k >= from && l.text.includes(line[0]))!;
      times[i]!.push(dropped.at - at);
    }
  }),
);
await Promise.all(boards.map((b) => b.stop()));
solver.close();
await v.close();

// ---- the section ----------------------------------------------------------------------------
const rate = (x: number) => `${Math.round(x).toLocaleString('en-US')} /s`;
const ms = (x: number) => `${x.toFixed(x < 10 ? 1 : 0)} ms`;
const body = `## The board on the network (firmware-sim)

\`npm run bench:net -w @tensormine/firmware-sim\` (firmware-sim/bench/net.bench.ts). Machine: ${machineLine()}; C compiled with ${compiler} -O2. The machine is shared: read the ratios, which are measured side by side in one run.

**ed25519** (core/tm_ed25519.c, written from RFC 8032) on a 117-byte message, ${ROUNDS} interleaved rounds of ${ROUND_MS} ms, median:

| | C core | node:crypto (OpenSSL) | C / node |
|---|---|---|---|
| signatures | ${rate(ed.cSign)} | ${rate(ed.nodeSign)} | ${(ed.cSign / ed.nodeSign).toFixed(2)}x |
| verifications | ${rate(ed.cVerify)} | ${rate(ed.nodeVerify)} | ${(ed.cVerify / ed.nodeVerify).toFixed(2)}x |

A board signs once per block, share or request and verifies once per callback, so even the
ESP32-C3 figure below (tens of milliseconds) is no bottleneck. On rv32imc (the ESP32-C3's ISA,
bare metal under qemu, \`make rv32-icount\`): ${icount}.

**Stale work**: from the submission of another miner's block at a board's cell to the board's
"dropped" line, ${EVENTS} events per board, three \`tm-sim --net\` boards capped at 200 nonces/s
against an in-process validator:

| board | median | largest (p99 of ${EVENTS}) |
|---|---|---|
${modes.map((m, i) => `| ${m.name} | ${ms(median(times[i]!))} | ${ms(max(times[i]!))} |`).join('\n')}

A callback reaches the board while it mines (it answers between slices of about 4 ms) and costs
one HTTP request per stale job; polling costs one request per board per interval whether or not
anything changed, and still leaves the board on stale work for half an interval on average.
`;
writeSection(docPath, 'firmware-sim-net', body);
console.log(body);
