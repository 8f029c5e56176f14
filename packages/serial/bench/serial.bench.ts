/**
 * The serial bridge's costs, written to the `serial` section of docs/benchmarks.md:
 *   1. framing overhead per job and per result, in bytes and as a share of the payload;
 *   2. the time from a RESULT frame's arrival to the `found` event (decoding, the host-side
 *      verification with the protocol's reference, the emit), measured over a socat pty with
 *      the simulated board (firmware-sim/build/tm-sim) when both are there, else in process.
 *
 *   npm run bench -w @tensormine/serial
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Journal, type MiningJob, resultFromNonce } from '@tensormine/miner';
import { expand, taggedHash } from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { FrameDecoder } from '../src/codec/decoder.js';
import { FRAME_OVERHEAD } from '../src/codec/frame.js';
import {
  decodeMessage,
  encodeMessageFrame,
  JOB_HEX_BYTES,
  JOB_TENSOR_BYTES,
  MESSAGE_TYPES,
  RESULT_HEX_BYTES,
  RESULT_TENSOR_BYTES,
  type ResultMessage,
} from '../src/codec/messages.js';
import { SerialFleet } from '../src/fleet.js';
import { hexJob, tensorJob } from '../test/fake-board.js';
import { e2eUnavailable, ptyPair, startSim, stopAll } from '../test/pty.js';

const DOC = fileURLToPath(new URL('../../../docs/benchmarks.md', import.meta.url));
const HEX_RESULTS = 300;
const TENSOR_RESULTS = 150;

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;

function overheadTable(): string {
  const ack = 3 + FRAME_OVERHEAD;
  const jobDone = 13 + FRAME_OVERHEAD;
  const progress = 24 + FRAME_OVERHEAD;
  const row = (what: string, payload: number, extra: number, extraWhat: string) =>
    `| ${what} | ${payload} | ${payload + FRAME_OVERHEAD} | ${FRAME_OVERHEAD} (${pct(FRAME_OVERHEAD, payload)}) | ${extra} (${extraWhat}) | ${pct(FRAME_OVERHEAD + extra, payload)} |`;
  return [
    '| message | payload bytes | frame bytes | frame overhead (share of payload) | bytes the other way | all link bytes beyond the payload, share of payload |',
    '|---|---|---|---|---|---|',
    row('JOB_HEX (one job)', JOB_HEX_BYTES, ack + jobDone, `its ACK ${ack} + JOB_DONE ${jobDone}`),
    row('JOB_TENSOR (one job)', JOB_TENSOR_BYTES, ack + jobDone, `its ACK ${ack} + JOB_DONE ${jobDone}`),
    row('RESULT, hexchain', RESULT_HEX_BYTES, ack, `its ACK ${ack}`),
    row('RESULT, tensor', RESULT_TENSOR_BYTES, ack, `its ACK ${ack}`),
    `| PROGRESS (heartbeat, 1/s while mining) | 24 | ${progress} | ${FRAME_OVERHEAD} (${pct(FRAME_OVERHEAD, 24)}) | none | ${pct(FRAME_OVERHEAD, 24)} |`,
  ].join('\n');
}

function stats(samples: number[]): { median: number; p95: number; max: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median: at(0.5), p95: at(0.95), max: s[s.length - 1]!, n: s.length };
}

const ms = (x: number) => (x < 1 ? `${(x * 1000).toFixed(0)} us` : `${x.toFixed(2)} ms`);

/** RESULT frame arrival to `found`, over a pty with tm-sim. */
async function overPty(
  job: MiningJob,
  count: number,
  simArgs: string[],
  journal?: Journal,
): Promise<number[]> {
  const pty = await ptyPair();
  const fleet = new SerialFleet({ ports: [pty.host], jobMs: 1000, ...(journal ? { journal } : {}) });
  const samples: number[] = [];
  let arrived = 0;
  fleet.boardEvents.on('attached', (board) => {
    board.attachedSession!.on('frame', (f) => {
      if (f.type === MESSAGE_TYPES.RESULT) arrived = performance.now();
    });
  });
  fleet.on('found', () => {
    if (samples.length < count) samples.push(performance.now() - arrived);
  });
  fleet.on('error', () => {});
  await fleet.start();
  startSim(pty.device, simArgs);
  const deadline = Date.now() + 120_000;
  while (fleet.boards()[0]?.state !== 'idle' && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  fleet.setJob({ ...job, stopOnFound: false });
  while (samples.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await fleet.stop();
  await stopAll();
  return samples;
}

/** The same path in process: decode a RESULT frame, rebuild and verify it. */
function inProcess(job: MiningJob, count: number): number[] {
  const samples: number[] = [];
  const decoder = new FrameDecoder();
  for (let nonce = 0, seq = 0; samples.length < count; nonce++) {
    const verdict = resultFromNonce(job, nonce, { device: 'bench' });
    if (!verdict.ok) continue;
    const f = verdict.found;
    const message: ResultMessage =
      f.kind === 'hexchain'
        ? {
            name: 'RESULT',
            kind: 'hex',
            jobId: 1,
            nonce,
            powHash: Buffer.from(f.submission.block.pow_hash, 'hex'),
          }
        : {
            name: 'RESULT',
            kind: 'tensor',
            jobId: 1,
            nonce,
            tensorResultHash: Buffer.from(f.proof.tensor_result_hash, 'hex'),
            mmlScoreQ16: Math.round(f.proof.mml_score * 65536),
            pathSignature: Buffer.from(f.proof.path_signature, 'hex'),
            pathDistance: f.proof.path_distance,
            computationHash: Buffer.from(f.proof.computation_hash, 'hex'),
          };
    const bytes = encodeMessageFrame(message, seq++);
    const t0 = performance.now();
    const [frame] = decoder.push(bytes);
    const decoded = decodeMessage(frame!);
    const check = resultFromNonce(job, decoded.name === 'RESULT' ? decoded.nonce : -1, { device: 'bench' });
    if (!check.ok) throw new Error('bench: verification failed');
    samples.push(performance.now() - t0);
  }
  return samples;
}

async function main(): Promise<void> {
  const started = Date.now();
  const unavailable = e2eUnavailable();
  const hex = hexJob('bench-hex', 2000);
  // esp32's largest matmul for the tensor case: what a board at max N returns.
  const t32 = esp32Tensor();
  const rows: string[] = [];
  let how: string;
  if (unavailable === undefined) {
    how =
      'over a socat pseudo-terminal pair with `firmware-sim/build/tm-sim --rate-cap 50000,2000` (the real serialport binding, 115200 baud nominal: a pty ignores the rate)';
    const sim = ['--chip-id', '02b0b1b2b3b40000', '--rate-cap', '50000,2000'];
    const hexSamples = await overPty(hex, HEX_RESULTS, sim);
    rows.push(row('hexchain (D = 2000), no journal', hexSamples));
    const tensorSamples = await overPty(t32, TENSOR_RESULTS, sim);
    rows.push(row('tensor, esp32 matmul 32x32, no journal', tensorSamples));
    const dir = await mkdtemp(join(tmpdir(), 'serial-bench-'));
    try {
      const journal = await Journal.open({ path: join(dir, 'journal.jsonl') });
      const journaled = await overPty(hex, HEX_RESULTS, sim, journal);
      rows.push(row('hexchain, journaled (fsync) before the ACK', journaled));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  } else {
    how = `in process (no pty: ${unavailable}): decoding a RESULT frame and verifying it`;
    rows.push(row('hexchain (D = 2000)', inProcess(hex, HEX_RESULTS)));
    rows.push(row('tensor, esp32 matmul 32x32', inProcess(t32, TENSOR_RESULTS)));
  }
  const body = `## Serial bridge

Command: \`npm run bench -w @tensormine/serial\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; the whole bench took ${Math.round((Date.now() - started) / 1000)} s).

### Framing overhead

Every frame adds ${FRAME_OVERHEAD} bytes (magic 2, version 1, type 1, seq 2, length 2, CRC-32 4). A board job costs
one JOB frame to the board and its ACK and JOB_DONE back, whatever its nonce count, so at a few seconds
per job the link carries well under 100 bytes per second of control traffic besides the 1 s PROGRESS heartbeat.

${overheadTable()}

### From a RESULT frame to the \`found\` event

Measured ${how}: from the moment the frame is read from the port to the \`found\` event, that is
decoding, deduplication, rebuilding and verifying the result with the protocol's reference
(\`resultFromNonce\`: the header's SHA-256 and the target for hexchain, \`computeWork\` and the
thresholds for tensor), field-by-field comparison with the board's values, and the emit. With a
journal the result is written and fsynced before it is emitted and acknowledged.

| results | samples | median | p95 | max |
|---|---|---|---|---|
${rows.join('\n')}
`;
  writeSection(DOC, 'serial', body);
  console.log(body);
}

function row(what: string, samples: number[]): string {
  const s = stats(samples);
  return `| ${what} | ${s.n} | ${ms(s.median)} | ${ms(s.p95)} | ${ms(s.max)} |`;
}

function esp32Tensor(): MiningJob {
  const base = tensorJob('bench-tensor-32', {}, 8);
  const dim = 32;
  const challengeHash = base.task.challengeHash;
  return {
    ...base,
    task: {
      ...base.task,
      dim,
      input: inputFor(challengeHash, dim),
    },
  };
}

function inputFor(challengeHash: Uint8Array, dim: number): Int8Array {
  return new Int8Array(expand(taggedHash('PTM4/input', challengeHash), dim * dim).buffer);
}

await main();
process.exit(0);
