/**
 * Lattice reads at 1,000 connections, side by side: the validator's GET /api/hexchain/status
 * (served from the in-memory lattice state) against a bare Fastify 5 route
 * (bench/bare-server.ts), alternated A B A B A B in one run.
 *
 *   npm run bench:reads -w @tensormine/validator      (writes its section of docs/benchmarks.md)
 */
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyPairFromSecret, taggedHash, utf8 } from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { buildLattice, httpCall } from './lattice.js';
import {
  type Child,
  cannon,
  fmt,
  median,
  okPerSecond,
  startChild,
  stopAll,
  table,
  withCpu,
} from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const COMMAND = 'npm run bench:reads -w @tensormine/validator';
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const MINER = keyPairFromSecret(taggedHash('bench/validator-reads', utf8('miner')));
const BLOCKS = 300;
const ROUNDS = 5;
const SECONDS = 5;
const CONNECTIONS = 1000;

const UNLIMITED = ['--rate-limit-per-second', '1000000', '--rate-limit-burst', '1000000'];

async function main(): Promise<void> {
  const startedAt = performance.now();
  const loadBefore = loadavg()[0]!.toFixed(1);
  console.log(`validator reads bench on ${machineLine()}`);
  const [validator, bare] = await Promise.all([
    startChild(
      'validator',
      'src/bin.ts',
      ['start', '--data-dir', ':memory:', '--port', '0', '--log-level', 'silent', ...UNLIMITED],
      { TENSORMINE_ADMIN_TOKEN: ADMIN_TOKEN },
    ),
    startChild('bare Fastify', 'bench/bare-server.ts'),
  ]);
  try {
    console.log(`building a lattice of ${BLOCKS} blocks`);
    await buildLattice(httpCall(validator.url), MINER, BLOCKS, ADMIN_TOKEN);
    const targets: [Child, string, string][] = [
      [validator, '/api/hexchain/status', `validator GET /api/hexchain/status (${BLOCKS + 1} cells)`],
      [bare, '/health', 'bare Fastify 5 GET /health'],
    ];
    for (const [c, path] of targets) await cannon({ url: `${c.url}${path}`, connections: 100, duration: 1 });
    const samples = targets.map(() => ({
      rate: [] as number[],
      p99: [] as number[],
      p50: [] as number[],
      cpuUs: [] as number[],
      bad: 0,
    }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, [c, path, name]] of targets.entries()) {
        const { value: r, serverCpuMs } = await withCpu(c.process.pid, () =>
          cannon({ url: `${c.url}${path}`, connections: CONNECTIONS, duration: SECONDS, timeout: 10 }),
        );
        const s = samples[i]!;
        s.rate.push(okPerSecond(r));
        s.p99.push(r.latency.p99);
        s.p50.push(r.latency.p50);
        if (serverCpuMs !== undefined) s.cpuUs.push((serverCpuMs * 1000) / r['2xx']);
        s.bad += r.non2xx + r.errors;
        console.log(`  round ${round + 1} ${name}: ${fmt(okPerSecond(r))} req/s, p99 ${r.latency.p99} ms`);
      }
    }
    const [v, b] = samples as [(typeof samples)[0], (typeof samples)[0]];
    const rateRatio = median(v.rate) / median(b.rate);
    const p99Ratio = median(v.p99) / median(b.p99);
    const row = (name: string, s: typeof v, rate: string, p99: string) => [
      name,
      fmt(median(s.rate)),
      s.rate.map((x) => fmt(x)).join(', '),
      rate,
      fmt(median(s.p50), 1),
      fmt(median(s.p99), 1),
      p99,
      s.cpuUs.length === 0
        ? 'n/a'
        : `${fmt(median(s.cpuUs), 1)} (${(median(s.cpuUs) / median(b.cpuUs)).toFixed(2)}x)`,
      String(s.bad),
    ];
    const result = table(
      [
        'server',
        'median req/s',
        'runs (req/s)',
        'req/s ratio',
        'p50 ms',
        'p99 ms',
        'p99 ratio',
        'server CPU us / req',
        'non-2xx + errors',
      ],
      [
        row(targets[0]![2], v, `**${rateRatio.toFixed(2)}x**`, `**${p99Ratio.toFixed(2)}x**`),
        row(targets[1]![2], b, '1.00x', '1.00x'),
      ],
    );
    console.log(result);
    const seconds = (performance.now() - startedAt) / 1000;
    writeSection(
      DOC_PATH,
      'validator-reads',
      `## Validator lattice reads at 1,000 connections

Command: \`${COMMAND}\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${fmt(seconds)} s; load average ${loadBefore} at the start, ${loadavg()[0]!.toFixed(1)} at the end: other processes shared the 2 cores).
The validator (in memory, rate limits raised, a lattice of ${BLOCKS} mined blocks) and a bare
Fastify 5 server (\`bench/bare-server.ts\`, one GET /health route, no hooks or schemas) run in
their own child processes; autocannon \`-c ${CONNECTIONS}\` for ${SECONDS} s against each, alternated
${ROUNDS} times (A B A B ...), medians. GET /api/hexchain/status is answered from the node's
in-memory lattice state (no database read; the body is rebuilt only after a block or a
difficulty change); the target is at least 0.8x the bare route's req/s with a p99 within 1.2x.
At 1,000 connections both servers are saturated and the p99 is mostly queueing, so it moves
with each run's throughput and with the neighbours on this shared machine: the server CPU per
request (and its ratio) is the steadier comparison.

${result}
`,
    );
    console.log(`wrote the validator-reads section of ${DOC_PATH}`);
  } finally {
    await stopAll();
  }
}

const onSignal = (signal: NodeJS.Signals) => {
  void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
