/**
 * HTTP benchmarks of the reference validator: every server runs in a child process (loopback
 * only), autocannon runs here, and each figure is reported beside a reference measured in the
 * same run, because the machine is shared and noisy.
 *
 *   npm run bench -w @tensormine/validator      (writes its section of docs/benchmarks.md)
 *
 * 1. GET /health, validator vs a bare Fastify route (bench/bare-server.ts), A B A B A B.
 * 2. Verified v4.0 POST /submit per second at each device type's largest tensor, beside
 *    verifyProof of the same proofs in this process.
 * 3. Verified POST /api/hexchain/submit per second at difficulty 16, in rounds of one block per
 *    free frontier cell.
 * 4. Latency with 1,000 concurrent connections on GET /health and GET /api/hexchain/status.
 * 5. Invalid v4.0 proofs: verified rejections per second per core, then the refusals of keys
 *    in back-off, beside the accepted proofs of part 2.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildSubmission,
  type ChallengeWire,
  type DeviceType,
  formatPublicKey,
  fromHex,
  type HexChallenge,
  type KeyPair,
  keyPairFromSecret,
  proofBytesFromWire,
  signProof,
  signRequest,
  solveBlock,
  taggedHash,
  targetFromHex,
  utf8,
} from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import {
  admin,
  adminEnv,
  EXPECTED_DIM,
  LOCAL_VERIFY_COUNT,
  MINER,
  prepareProofs,
  registerMiner,
  VALIDATOR,
  validatorArgs,
} from './proofs.js';
import {
  type Child,
  cannon,
  fmt,
  mapConcurrent,
  median,
  okPerSecond,
  rejectionsCell,
  request,
  runBench,
  startChild,
  stopAll,
  stopChild,
  submitAll,
  table,
  withCpu,
} from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const COMMAND = 'npm run bench -w @tensormine/validator';
/** Proofs per device type: enough for a 1 to 3 s run at the expected verification rates. */
const SUBMIT_COUNTS: Readonly<Record<DeviceType, number>> = { native: 1500, esp32: 3000, esp8266: 4000 };

interface AdminMetrics {
  readonly proofs_valid: number;
  readonly proofs_rejected: number;
  readonly blocks_accepted: number;
}

// ---------------------------------------------------------------------------------------------
// 1. GET /health vs bare Fastify
// ---------------------------------------------------------------------------------------------

async function healthVsBare(validator: Child, bare: Child): Promise<string> {
  for (const c of [validator, bare]) {
    const health = await request<{ status: string }>(c.url, 'GET', '/health');
    if (health.status !== 'ok') throw new Error(`${c.name}: /health answered ${JSON.stringify(health)}`);
    await cannon({ url: `${c.url}/health`, connections: 50, duration: 1 }); // warm-up
  }
  interface Samples {
    rate: number[];
    serverUsPerReq: number[];
    serverBusy: number[];
    benchBusy: number[];
    p99: number[];
    bad: number;
  }
  const empty = (): Samples => ({
    rate: [],
    serverUsPerReq: [],
    serverBusy: [],
    benchBusy: [],
    p99: [],
    bad: 0,
  });
  const samples = new Map<Child, Samples>([
    [validator, empty()],
    [bare, empty()],
  ]);
  for (let round = 0; round < 3; round++) {
    for (const c of [validator, bare]) {
      const {
        value: r,
        serverCpuMs,
        benchCpuMs,
      } = await withCpu(c.process.pid, () =>
        cannon({ url: `${c.url}/health`, connections: 50, duration: 3 }),
      );
      const s = samples.get(c)!;
      s.rate.push(okPerSecond(r));
      if (serverCpuMs !== undefined) {
        s.serverUsPerReq.push((serverCpuMs * 1000) / r['2xx']);
        s.serverBusy.push(serverCpuMs / (r.duration * 1000));
      }
      s.benchBusy.push(benchCpuMs / (r.duration * 1000));
      s.p99.push(r.latency.p99);
      s.bad += r.non2xx + r.errors;
      console.log(
        `  health round ${round + 1} ${c.name}: ${fmt(okPerSecond(r))} req/s, server CPU ${serverCpuMs === undefined ? 'n/a' : `${fmt((serverCpuMs * 1000) / r['2xx'], 1)} us/req`}`,
      );
    }
  }
  const v = samples.get(validator)!;
  const b = samples.get(bare)!;
  const cpu = (s: Samples) => (s.serverUsPerReq.length === 0 ? Number.NaN : median(s.serverUsPerReq));
  const pct = (xs: number[]) => (xs.length === 0 ? 'n/a' : `${fmt(median(xs) * 100)} %`);
  const row = (name: string, s: Samples, rateRatio: string, cpuRatio: string) => [
    name,
    fmt(median(s.rate)),
    s.rate.map((x) => fmt(x)).join(', '),
    rateRatio,
    Number.isNaN(cpu(s)) ? 'n/a' : fmt(cpu(s), 1),
    cpuRatio,
    pct(s.serverBusy),
    pct(s.benchBusy),
    fmt(median(s.p99), 0),
    String(s.bad),
  ];
  const rateRatio = median(v.rate) / median(b.rate);
  const cpuRatio = cpu(v) / cpu(b);
  return table(
    [
      'server',
      'median req/s',
      'runs (req/s)',
      'req/s ratio',
      'server CPU us / req',
      'CPU ratio',
      'server CPU busy',
      'autocannon process CPU busy',
      'p99 ms',
      'non-2xx + errors',
    ],
    [
      row(
        'validator GET /health',
        v,
        `**${rateRatio.toFixed(2)}x**`,
        Number.isNaN(cpuRatio) ? 'n/a' : `**${cpuRatio.toFixed(2)}x**`,
      ),
      row('bare Fastify 5 GET /health', b, '1.00x', '1.00x'),
    ],
  );
}

// ---------------------------------------------------------------------------------------------
// 2. Verified v4.0 /submit
// ---------------------------------------------------------------------------------------------

/** Invalid proofs per device type for part 5: budget-sized batches from throwaway keys. */
const REJECT_COUNTS: Readonly<Record<DeviceType, number>> = { native: 1000, esp32: 2000, esp8266: 3000 };
/** The validator's budget of invalid proofs per key (services/mining/invalid-budget.ts). */
const INVALID_BURST = 10;

/** Registers `count` fresh keys (signed requests) and returns them. */
async function registerKeys(base: string, label: string, count: number): Promise<KeyPair[]> {
  const keys = Array.from({ length: count }, (_, i) =>
    keyPairFromSecret(taggedHash('bench/validator-http', utf8(`${label}-${i}`))),
  );
  await mapConcurrent(keys, 8, async (key) => {
    const path = '/devices/register';
    const body = JSON.stringify({ pubkey: formatPublicKey(key.publicKey), device_type: 'native' });
    const headers = signRequest({ method: 'POST', path, body, secretKey: key.secretKey });
    await request(base, 'POST', path, { body, headers });
  });
  return keys;
}

/**
 * Well-formed, correctly signed proofs whose fields are not the work's (the validator finds out
 * only by recomputing): `INVALID_BURST` per key, so each is verified before its key's back-off.
 */
function garbageProofs(wire: ChallengeWire, keys: readonly KeyPair[], count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const key = keys[Math.floor(i / INVALID_BURST)]!;
    const filler = taggedHash('bench/garbage', utf8(String(i)));
    const proof = {
      challenge_id: wire.challenge_id,
      challenge_hash: wire.hash,
      tensor_result_hash: Buffer.from(filler).toString('hex'),
      mml_score: 0.5,
      path_signature: Buffer.from(filler.subarray(0, 8)).toString('hex'),
      path_distance: 10,
      computation_nonce: i,
      computation_hash: Buffer.from(filler).toString('hex'),
      miner_pubkey: formatPublicKey(key.publicKey),
    };
    const signature = signProof(proofBytesFromWire(proof, 32768), key.secretKey);
    return JSON.stringify({ proof, signature });
  });
}

interface RejectionRow {
  readonly device: string;
  readonly acceptedCpuUs: number | undefined;
  readonly acceptedRate: number;
  readonly verified: Awaited<ReturnType<typeof submitAll>>;
  readonly refused: Awaited<ReturnType<typeof submitAll>>;
  readonly count: number;
}

/** Part 5: verified rejections and back-off refusals, against the accepted proofs of part 2. */
async function invalidProofs(base: string, pid: number, deviceType: DeviceType) {
  const count = REJECT_COUNTS[deviceType];
  const keys = await registerKeys(base, `garbage-${deviceType}`, count / INVALID_BURST);
  const wire = await request<ChallengeWire>(base, 'POST', '/challenge', {
    body: JSON.stringify({ slot: 1, slot_hash: `bench-garbage-${deviceType}`, device_type: deviceType }),
  });
  const bodies = garbageProofs(wire, keys, count);
  // Every key spends its budget exactly: each of these is recomputed, then refused (422).
  const verified = await submitAll(base, '/submit', bodies, 20, pid);
  // The same keys again: in back-off, refused before any verification (429).
  const refused = await submitAll(base, '/submit', bodies, 20, pid);
  return { verified, refused, count };
}

function perCore(
  run: { ok: number; rejected: ReadonlyMap<string, number>; serverCpuMs: number | undefined },
  code: string,
): string {
  const n = [...run.rejected].filter(([k]) => k.includes(code)).reduce((a, [, v]) => a + v, 0);
  return run.serverCpuMs === undefined ? 'n/a' : `${fmt((n * 1000) / run.serverCpuMs)}/s`;
}

async function verifiedSubmit(): Promise<{ table: string; notes: string[]; rejections: string }> {
  const child = await startChild(
    'validator (v4.0 submit)',
    VALIDATOR,
    validatorArgs('--difficulty', '1', '--max-tensor-dim', '64'),
    adminEnv,
  );
  const rows: string[][] = [];
  const notes: string[] = [];
  const rejectionRows: RejectionRow[] = [];
  try {
    await registerMiner(child.url);
    for (const deviceType of ['native', 'esp32', 'esp8266'] as const) {
      const count = SUBMIT_COUNTS[deviceType];
      const prepared = await prepareProofs(child.url, deviceType, count);
      const before = await request<AdminMetrics>(child.url, 'GET', '/admin/metrics', { headers: admin });
      const run = await submitAll(child.url, '/submit', prepared.bodies, 20, child.process.pid);
      const after = await request<AdminMetrics>(child.url, 'GET', '/admin/metrics', { headers: admin });
      const counted = after.proofs_valid - before.proofs_valid;
      if (run.taken !== count || counted !== run.ok) {
        notes.push(
          `${deviceType}: autocannon took ${run.taken} of ${count} bodies; the validator counted ${counted} valid proofs for ${run.ok} answers 200.`,
        );
      }
      const rate = (run.ok * 1000) / run.elapsedMs;
      const localUs = 1e6 / prepared.localRate;
      const cpuUs = run.serverCpuMs === undefined ? undefined : (run.serverCpuMs * 1000) / run.ok;
      const dim = EXPECTED_DIM[deviceType];
      rows.push([
        `${deviceType} ${dim}x${dim}`,
        [...prepared.ops].map(([op, n]) => `${op}: ${n}`).join(', '),
        `${fmt(run.ok)} / ${fmt(count)}`,
        rejectionsCell(run),
        `${fmt(run.elapsedMs / 1000, 2)} s`,
        `**${fmt(rate)}/s**`,
        `${fmt(prepared.localRate)}/s`,
        `${(rate / prepared.localRate).toFixed(2)}x`,
        cpuUs === undefined
          ? 'n/a'
          : `${fmt(cpuUs)} us (${fmt((run.serverCpuMs! / run.elapsedMs) * 100)} % busy)`,
        `${fmt(localUs)} us`,
        cpuUs === undefined ? 'n/a' : `${fmt(cpuUs - localUs)} us`,
        `${fmt(run.p50, 0)} / ${fmt(run.p99, 0)}`,
      ]);
      console.log(`  /submit ${deviceType}: ${fmt(rate)}/s (local verifyProof ${fmt(prepared.localRate)}/s)`);
      const invalid = await invalidProofs(child.url, child.process.pid!, deviceType);
      rejectionRows.push({
        device: `${deviceType} ${dim}x${dim}`,
        acceptedCpuUs: cpuUs,
        acceptedRate: rate,
        ...invalid,
      });
      console.log(
        `  invalid ${deviceType}: ${rejectionsCell(invalid.verified)} then ${rejectionsCell(invalid.refused)}`,
      );
    }
  } finally {
    await stopChild(child.process);
  }
  return {
    table: table(
      [
        'device, tensor',
        'operations',
        'accepted (200)',
        'not 200',
        'submit phase',
        'verified /submit',
        'verifyProof in the bench process, same proofs',
        'rate ratio',
        'server CPU per proof',
        'verifyProof per proof',
        'server CPU outside verifyProof',
        'p50 / p99 ms',
      ],
      rows,
    ),
    notes,
    rejections: table(
      [
        'device, tensor',
        'invalid proofs sent',
        'verified rejections (422)',
        'refused in back-off (429)',
        'verified rejections / s per core',
        'accepted proofs / s per core (part 2)',
        'server CPU per verified rejection',
        'server CPU per accepted proof (part 2)',
        'rejection / acceptance CPU',
        'refusals in back-off / s per core',
        'server CPU per refusal',
        'refusal / verified rejection CPU',
      ],
      rejectionRows.map((r) => {
        const rejected = [...r.verified.rejected]
          .filter(([k]) => k.startsWith('422'))
          .reduce((a, [, v]) => a + v, 0);
        const refused = [...r.refused.rejected]
          .filter(([k]) => k.startsWith('429'))
          .reduce((a, [, v]) => a + v, 0);
        const rejectUs =
          r.verified.serverCpuMs === undefined ? undefined : (r.verified.serverCpuMs * 1000) / rejected;
        const refuseUs =
          r.refused.serverCpuMs === undefined ? undefined : (r.refused.serverCpuMs * 1000) / refused;
        return [
          r.device,
          fmt(r.count),
          rejectionsCell(r.verified),
          rejectionsCell(r.refused),
          `**${perCore(r.verified, '422')}**`,
          r.acceptedCpuUs === undefined ? 'n/a' : `${fmt(1e6 / r.acceptedCpuUs)}/s`,
          rejectUs === undefined ? 'n/a' : `${fmt(rejectUs)} us`,
          r.acceptedCpuUs === undefined ? 'n/a' : `${fmt(r.acceptedCpuUs)} us`,
          rejectUs === undefined || r.acceptedCpuUs === undefined
            ? 'n/a'
            : `**${(rejectUs / r.acceptedCpuUs).toFixed(2)}x**`,
          perCore(r.refused, '429'),
          refuseUs === undefined ? 'n/a' : `${fmt(refuseUs)} us`,
          refuseUs === undefined || rejectUs === undefined
            ? 'n/a'
            : `**${(refuseUs / rejectUs).toFixed(2)}x**`,
        ];
      }),
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// 3. Verified /api/hexchain/submit
// ---------------------------------------------------------------------------------------------

const HEX_TARGET_BLOCKS = 1500;
const HEX_BUDGET_MS = 60_000;
const HEX_MAX_ROUNDS = 200;

interface HexStatus {
  readonly frontier_size: number;
  readonly difficulty: number;
  readonly occupied: number;
  readonly max_depth: number;
}

async function verifiedHexSubmit(): Promise<{ table: string; notes: string[] }> {
  const child = await startChild(
    'validator (hexchain submit)',
    VALIDATOR,
    validatorArgs('--hex-difficulty', '16'),
    adminEnv,
  );
  const notes: string[] = [];
  let submitted = 0;
  let accepted = 0;
  let submitMs = 0;
  let issued = 0;
  let rounds = 0;
  let largestRound = 0;
  let errors = 0;
  let serverCpuMs: number | undefined = 0;
  const rejected = new Map<string, number>();
  const latencies: { p50: number; p99: number; n: number }[] = [];
  let status: HexStatus;
  try {
    await registerMiner(child.url);
    const started = performance.now();
    while (
      submitted < HEX_TARGET_BLOCKS &&
      performance.now() - started < HEX_BUDGET_MS &&
      rounds < HEX_MAX_ROUNDS
    ) {
      // Retargets (every 12 blocks) multiply the difficulty by up to 4 when blocks come this
      // fast; put it back to 16 before each round's challenges, as the bench intends.
      await request(child.url, 'POST', '/admin/config', {
        body: JSON.stringify({ hexchain_difficulty: 16 }),
        headers: admin,
      });
      status = await request<HexStatus>(child.url, 'GET', '/api/hexchain/status');
      const want = Math.min(status.frontier_size, HEX_TARGET_BLOCKS - submitted);
      // Challenges land on uniformly chosen frontier cells: collect until one per cell (coupon
      // collector, about F ln F requests), bounded.
      const cap = Math.ceil(want * (Math.log(want) + 4)) + 16;
      const held = new Map<string, HexChallenge>();
      let roundIssued = 0;
      await mapConcurrent(Array.from({ length: 8 }), 8, async () => {
        while (held.size < want && roundIssued < cap) {
          roundIssued++;
          const c = await request<HexChallenge>(child.url, 'POST', '/api/hexchain/challenge', {
            body: JSON.stringify({ slot: issued + roundIssued, slot_hash: 'bench-hexchain' }),
          });
          const key = `${c.coord.q},${c.coord.r},${c.coord.s}`;
          if (!held.has(key) && held.size < want) held.set(key, c);
        }
      });
      issued += roundIssued;
      const bodies = [...held.values()].map((c) => {
        const challengeHash = fromHex(c.challenge_hash, 32, 'challenge_hash');
        const solved = solveBlock({
          challengeHash,
          coord: c.coord,
          minerPublicKey: MINER.publicKey,
          target: targetFromHex(c.target),
          maxIterations: 1_000_000,
        });
        if (!solved) throw new Error(`no block for ${c.id} in 10^6 hashes at difficulty ${c.difficulty}`);
        return JSON.stringify(
          buildSubmission({
            challengeId: c.id,
            challengeHash,
            coord: c.coord,
            nonce: solved.nonce,
            keyPair: MINER,
          }),
        );
      });
      const run = await submitAll(child.url, '/api/hexchain/submit', bodies, 20, child.process.pid);
      rounds++;
      submitted += bodies.length;
      largestRound = Math.max(largestRound, bodies.length);
      accepted += run.ok;
      submitMs += run.elapsedMs;
      serverCpuMs =
        run.serverCpuMs === undefined || serverCpuMs === undefined
          ? undefined
          : serverCpuMs + run.serverCpuMs;
      errors += run.errors;
      latencies.push({ p50: run.p50, p99: run.p99, n: bodies.length });
      for (const [k, n] of run.rejected) rejected.set(k, (rejected.get(k) ?? 0) + n);
      if (run.taken !== bodies.length)
        notes.push(`round ${rounds}: autocannon took ${run.taken} of ${bodies.length} bodies.`);
    }
    status = await request<HexStatus>(child.url, 'GET', '/api/hexchain/status');
    const metrics = await request<AdminMetrics>(child.url, 'GET', '/admin/metrics', { headers: admin });
    if (metrics.blocks_accepted !== accepted) {
      notes.push(
        `the validator counted ${metrics.blocks_accepted} accepted blocks for ${accepted} answers 200.`,
      );
    }
  } finally {
    await stopChild(child.process);
  }
  const rate = (accepted * 1000) / submitMs;
  // Per-round latencies are over rounds of different sizes: report the block-weighted median.
  const weighted = (pick: (l: (typeof latencies)[number]) => number) => {
    const sorted = [...latencies].sort((a, b) => pick(a) - pick(b));
    let seen = 0;
    for (const l of sorted) {
      seen += l.n;
      if (seen * 2 >= submitted) return pick(l);
    }
    return Number.NaN;
  };
  return {
    table: table(
      [
        'rounds',
        'largest round',
        'challenges issued',
        'accepted (200)',
        'not 200',
        'timed submit phases',
        'accepted blocks / s',
        'server CPU per block',
        'p50 / p99 ms (median over rounds, by blocks)',
        'lattice after',
      ],
      [
        [
          String(rounds),
          `${largestRound} blocks`,
          fmt(issued),
          `${fmt(accepted)} / ${fmt(submitted)}`,
          rejectionsCell({ rejected, errors }),
          `${fmt(submitMs / 1000, 2)} s`,
          `**${fmt(rate)}/s**`,
          serverCpuMs === undefined
            ? 'n/a'
            : `${fmt((serverCpuMs * 1000) / accepted)} us (${fmt((serverCpuMs / submitMs) * 100)} % busy)`,
          `${fmt(weighted((l) => l.p50))} / ${fmt(weighted((l) => l.p99))}`,
          `${fmt(status.occupied)} cells, depth ${status.max_depth}, frontier ${status.frontier_size}`,
        ],
      ],
    ),
    notes,
  };
}

// ---------------------------------------------------------------------------------------------
// 4. 1,000 concurrent connections
// ---------------------------------------------------------------------------------------------

async function thousandConnections(validator: Child): Promise<string> {
  await cannon({ url: `${validator.url}/api/hexchain/status`, connections: 50, duration: 1 }); // warm-up
  const rows: string[][] = [];
  for (const path of ['/health', '/api/hexchain/status']) {
    const r = await cannon({ url: `${validator.url}${path}`, connections: 1000, duration: 5, timeout: 10 });
    rows.push([
      `GET ${path}`,
      fmt(r.latency.p50, 1),
      fmt(r.latency.p99, 1),
      fmt(r.latency.max, 0),
      fmt(okPerSecond(r)),
      String(r.non2xx),
      String(r.errors - r.timeouts),
      String(r.timeouts),
    ]);
    console.log(
      `  -c 1000 ${path}: p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ${fmt(okPerSecond(r))} req/s`,
    );
  }
  return table(
    ['route', 'p50 ms', 'p99 ms', 'max ms', 'req/s (2xx)', 'non-2xx', 'connection errors', 'timeouts (10 s)'],
    rows,
  );
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const startedAt = performance.now();
  console.log(`validator HTTP bench on ${machineLine()}`);
  let health: string;
  let thousand: string;
  {
    const [validator, bare] = await Promise.all([
      startChild('validator', VALIDATOR, validatorArgs(), adminEnv),
      startChild('bare Fastify', 'bench/bare-server.ts'),
    ]);
    try {
      console.log('1. GET /health, validator vs bare Fastify (50 connections, 3 s runs, A B A B A B)');
      health = await healthVsBare(validator, bare);
      console.log(`${health}\n`);
      await stopChild(bare.process);
      console.log('4. 1,000 concurrent connections, 5 s each');
      thousand = await thousandConnections(validator);
    } finally {
      await stopAll();
    }
  }
  console.log('2. verified v4.0 /submit (difficulty 1, 20 connections)');
  const submit = await verifiedSubmit();
  console.log(`${submit.table}\n`);
  console.log('3. verified /api/hexchain/submit (difficulty 16, rounds of one block per frontier cell)');
  const hex = await verifiedHexSubmit();
  console.log(`${hex.table}\n`);
  console.log(`4. 1,000 concurrent connections\n${thousand}\n`);
  console.log(`5. invalid proofs: verified rejections and back-off refusals\n${submit.rejections}\n`);
  const seconds = (performance.now() - startedAt) / 1000;

  const notes = [...submit.notes, ...hex.notes];
  const body = `## Validator HTTP

Command: \`${COMMAND}\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; the whole bench took ${fmt(seconds)} s).
Every server runs in its own child process (\`node --import tsx src/bin.ts start --data-dir :memory:\`,
log level silent, rate limits raised to 10^6) on 127.0.0.1, and autocannon 8 runs in the bench
process; on this 2-core machine the load generator and the server each have about one core.
Read the ratios: they are measured side by side in one run, the absolute figures move with the
neighbours. "Server CPU" is the CPU time of the server process (all its threads, from
/proc/PID/task/*/schedstat) over a run, divided by the requests answered; "busy" is that CPU time
over the run's wall time (100 % = one core).

### 1. GET /health against a bare Fastify route

The validator's GET /health (rate limiter, metrics hook, response schema) against a bare Fastify 5
server answering a JSON object of the same shape (\`bench/bare-server.ts\`), 50 connections, 3 s runs
alternated A B A B A B after a 1 s warm-up each; medians of the three runs. When the autocannon
process is near 100 % busy and the servers are not, the load generator is the limit and the req/s
ratio understates the difference: the server CPU per request is then the comparison to read
(and when neither is near 100 %, other processes held the cores during the run).

${health}

### 2. Verified v4.0 /submit

Proofs accepted per second by POST /submit, each fully verified (signature, recomputation of the
tensor work, the ledger transaction and the signed receipt), at each device type's largest tensor,
difficulty 1; the proofs were requested over HTTP, solved and signed in the bench process, then
all submitted with autocannon (20 connections, each body exactly once); the rate is accepted
proofs over the time to the last response. Beside it, \`verifyProof\` (signature and
recomputation) over the first ${LOCAL_VERIFY_COUNT} of the same proofs in the bench process, just before; the
last column is the server CPU per proof minus that verifyProof time: what a request costs the
validator besides the verification itself (HTTP, JSON and schema, storage reads, the ledger
transaction, the challenge rebuilt from its record, the signed receipt).

${submit.table}

### 3. Verified /api/hexchain/submit

Blocks accepted per second by POST /api/hexchain/submit at difficulty 16: in rounds, challenges
are requested until one is held per free frontier cell (each block needs its own cell), the
blocks are mined and signed in the bench process, and the round is submitted with autocannon
(up to 20 connections); rounds repeat, the frontier growing, until ${fmt(HEX_TARGET_BLOCKS)} blocks or
${HEX_BUDGET_MS / 1000} s. The rate counts only the timed submit phases. The retarget rule runs as usual
(every 12 blocks it multiplies the difficulty by up to 4 at this pace); the bench sets the
difficulty back to 16 through POST /admin/config before each round's challenges.

${hex.table}

### 4. 1,000 concurrent connections

autocannon \`-c 1000\` for 5 s against the validator of part 1 (in memory, no blocks): p50 and
p99 latency, 2xx per second, and every non-2xx, connection error and timeout.

${thousand}

### 5. Invalid proofs: verified rejections, then the back-off

What garbage costs the validator (issue 9). In the validator of part 2, right after each
device type's accepted proofs: throwaway keys are registered, and each sends exactly its budget
of invalid proofs (${INVALID_BURST}: well-formed, correctly signed, for an open challenge, with fields that
are not the work's), so every one is recomputed and refused (422); then the same bodies again,
which the keys, now in back-off, see refused before any verification (429
\`invalid_submission_backoff\`). "Per core" is answers per second of server CPU time. The
ratios compare, in the same run, a verified rejection with an accepted proof of part 2 (the
acceptance adds the ledger transaction and the signed receipt) and a refusal with a verified
rejection: a key gets at most ${INVALID_BURST} recomputations, then one more per minute at best, the wait
doubling at each exhaustion (docs/validator.md).

${submit.rejections}
${notes.length === 0 ? '' : `\nAccounting notes:\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`}`;
  writeSection(DOC_PATH, 'validator', body);
  console.log(`wrote the validator section of ${DOC_PATH} (${fmt(seconds)} s)`);
}

runBench(main);
