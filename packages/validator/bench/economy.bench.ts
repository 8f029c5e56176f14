/**
 * Economy bench: signed POST /swap/execute and POST /stake per second, each beside GET /health
 * of the same validator process in the same run (the machine is shared: read the ratios).
 *
 *   npm run bench:economy -w @tensormine/validator      (writes its section of docs/benchmarks.md)
 *
 * The validator runs in a child process on a data directory on disk (every economy request is
 * one SQLite transaction committed with synchronous = FULL, as in production), with a genesis
 * that gives the bench keys balances. The requests are signed in this process before each run
 * (each with its own nonce; the run starts within the 60 s window), then sent once each with
 * autocannon; /health runs for 3 s. The order is health, swap, stake, health, swap, stake.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KeyPair, keyPairFromSecret, signRequest, taggedHash, toHex, utf8 } from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { cannon, fmt, median, processCpuMs, startChild, stopAll, stopChild, table } from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const COMMAND = 'npm run bench:economy -w @tensormine/validator';
const KEYS: KeyPair[] = Array.from({ length: 16 }, (_, i) =>
  keyPairFromSecret(taggedHash('bench/economy', utf8(`key-${i}`))),
);
const REQUESTS = Number(process.env.ECONOMY_BENCH_REQUESTS ?? 3000);
const CONNECTIONS = 16;

interface Run {
  readonly ok: number;
  readonly other: number;
  readonly seconds: number;
  readonly serverCpuUs: number | undefined;
  readonly p50: number;
  readonly p99: number;
}

async function health(url: string, pid: number | undefined): Promise<Run> {
  const cpu0 = processCpuMs(pid);
  const result = await cannon({ url: `${url}/health`, connections: 50, duration: 3 });
  const cpu1 = processCpuMs(pid);
  const ok = result['2xx'];
  return {
    ok,
    other: result.non2xx + result.errors,
    seconds: result.duration,
    serverCpuUs: cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1000) / ok,
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

/** Signs `REQUESTS` requests (round robin over the keys) and sends each once. */
async function signed(
  url: string,
  pid: number | undefined,
  path: string,
  body: (key: KeyPair) => object,
): Promise<Run> {
  const prepared = Array.from({ length: REQUESTS }, (_, i) => {
    const key = KEYS[i % KEYS.length]!;
    const text = JSON.stringify(body(key));
    return {
      body: text,
      headers: {
        ...signRequest({ method: 'POST', path, body: text, secretKey: key.secretKey }),
        'content-type': 'application/json',
      },
    };
  });
  let next = 0;
  let ok = 0;
  let other = 0;
  let last = 0;
  const cpu0 = processCpuMs(pid);
  const started = performance.now();
  const result = await cannon({
    url,
    connections: CONNECTIONS,
    amount: prepared.length,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path,
        setupRequest: (req) => {
          const p = prepared[Math.min(next++, prepared.length - 1)]!;
          req.body = p.body;
          req.headers = p.headers;
          return req;
        },
        onResponse: (status) => {
          last = performance.now();
          if (status === 200) ok++;
          else other++;
        },
      },
    ],
  });
  const cpu1 = processCpuMs(pid);
  return {
    ok,
    other: other + result.errors,
    seconds: (last - started) / 1000,
    serverCpuUs: cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1000) / ok,
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

async function measure(dataDir: string, genesisFile: string): Promise<string> {
  const child = await startChild('validator', 'src/bin.ts', [
    'start',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--genesis-file',
    genesisFile,
    '--log-level',
    'silent',
    '--rate-limit-per-second',
    '1000000',
    '--rate-limit-burst',
    '1000000',
    '--key-rate-limit-per-second',
    '1000000',
    '--key-rate-limit-burst',
    '1000000',
  ]);
  const pid = child.process.pid;
  await cannon({ url: `${child.url}/health`, connections: 10, duration: 1 });
  const runs: Record<'health' | 'swap' | 'stake', Run[]> = { health: [], swap: [], stake: [] };
  for (let round = 0; round < 2; round++) {
    runs.health.push(await health(child.url, pid));
    runs.swap.push(
      await signed(child.url, pid, '/swap/execute', (k) => ({
        from_token: 'USDC',
        to_token: 'PTM',
        amount: '1',
        min_received: '0',
        pubkey: toHex(k.publicKey),
      })),
    );
    runs.stake.push(
      await signed(child.url, pid, '/stake', (k) => ({
        amount: '1',
        lock_period_days: 7,
        pubkey: toHex(k.publicKey),
      })),
    );
  }
  const rate = (r: Run) => r.ok / r.seconds;
  const healthRate = median(runs.health.map(rate));
  const rows = (['health', 'swap', 'stake'] as const).map((name) => {
    const rs = runs[name];
    const m = median(rs.map(rate));
    const cpu = median(rs.map((r) => r.serverCpuUs ?? Number.NaN));
    const label = {
      health: 'GET /health (50 connections, 3 s)',
      swap: `signed POST /swap/execute (${CONNECTIONS} connections, ${REQUESTS} requests)`,
      stake: `signed POST /stake, 7-day lock (${CONNECTIONS} connections, ${REQUESTS} requests)`,
    }[name];
    return [
      label,
      `**${fmt(m)}/s**`,
      rs.map((r) => fmt(rate(r))).join(', '),
      `${(m / healthRate).toFixed(3)}x`,
      Number.isNaN(cpu) ? 'n/a' : fmt(cpu, 0),
      rs.map((r) => `${r.p50} / ${r.p99}`).join(', '),
      String(rs.reduce((s, r) => s + r.other, 0)),
    ];
  });
  await stopChild(child.process);
  return table(
    [
      'operation',
      'median ok/s',
      'runs',
      'ratio to /health',
      'server CPU us / op',
      'p50 / p99 ms per run',
      'not 200',
    ],
    rows,
  );
}

async function main(): Promise<void> {
  const began = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'economy-bench-'));
  try {
    const genesisFile = join(dir, 'genesis.json');
    writeFileSync(
      genesisFile,
      JSON.stringify({
        reserve: '1000000',
        pools: [
          { base: 'PTM', quote: 'USDC', base_reserve: '10000000', quote_reserve: '500000', fee_bps: 30 },
        ],
        allocations: KEYS.flatMap((k) => [
          { pubkey: toHex(k.publicKey), token: 'PTM', amount: '1000000' },
          { pubkey: toHex(k.publicKey), token: 'USDC', amount: '1000000' },
        ]),
      }),
    );
    const sections: string[] = [];
    for (const [where, dataDir] of [
      ['data directory on disk', process.env.ECONOMY_BENCH_DATA_DIR ?? join(dir, 'data')],
      ['in memory (no fsync)', ':memory:'],
    ] as const) {
      sections.push(`**${where}**\n\n${await measure(dataDir, genesisFile)}`);
    }
    const seconds = Math.round((performance.now() - began) / 1000);
    const body = `## Economy operations

Command: \`${COMMAND}\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; the whole bench took ${seconds} s).
A validator process (\`src/bin.ts start\`, log level silent, rate limits raised) answers GET
/health and the signed economy requests in the same run, alternated health, swap, stake, twice;
first on a data directory on disk (every commit is fsynced: \`synchronous = FULL\`), then, as a
second process, in memory, which shows what the fsync costs. Concurrent transactions are
committed in groups (one COMMIT, one fsync, per group; each in its own savepoint). The requests
are signed in the bench process before each run, sent once each by autocannon; the rate counts
200 answers over the time to the last response. Each signed request
verifies an ed25519 signature, checks its stored result, debits and credits balances through the
ledger (6 entries for a swap, 2 for a stake), writes its product row and its stored result. The
ratio is against the median /health rate of the same run.

${sections.join('\n\n')}
`;
    writeSection(DOC_PATH, 'economy', body);
    process.stdout.write(`${body}\n`);
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
