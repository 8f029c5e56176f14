/**
 * Lattice reads at 1,000 connections, side by side: the validator's GET /api/hexchain/status
 * and GET /api/hexchain/lattice (served from the in-memory lattice state) against a bare
 * Fastify 5 server answering the same paths with the same bytes (bench/bare-server.ts),
 * alternated A B, B A, ... in one run (each pair on its own).
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
  alternateReads,
  fmt,
  type ReadTarget,
  readRatios,
  readTable,
  runBench,
  startChild,
  stopAll,
} from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const COMMAND = 'npm run bench:reads -w @tensormine/validator';
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const MINER = keyPairFromSecret(taggedHash('bench/validator-reads', utf8('miner')));
const BLOCKS = 300;
const ROUNDS = 11;
const SECONDS = 3;
const CONNECTIONS = 1000;
const STATUS = '/api/hexchain/status';
const LATTICE = '/api/hexchain/lattice';

const UNLIMITED = ['--rate-limit-per-second', '1000000', '--rate-limit-burst', '1000000'];

async function main(): Promise<void> {
  const startedAt = performance.now();
  const loadBefore = loadavg().map((l) => l.toFixed(1));
  console.log(`validator reads bench on ${machineLine()}`);
  const validator = await startChild(
    'validator',
    'src/bin.ts',
    ['start', '--data-dir', ':memory:', '--port', '0', '--log-level', 'silent', ...UNLIMITED],
    { TENSORMINE_ADMIN_TOKEN: ADMIN_TOKEN },
  );
  try {
    console.log(`building a lattice of ${BLOCKS} blocks`);
    await buildLattice(httpCall(validator.url), MINER, BLOCKS, ADMIN_TOKEN);
    // The bare server answers the bytes the validator answers now (later, the status differs
    // only by its open_challenges count as the challenges of the build expire).
    const bodies: Record<string, string> = {};
    for (const path of [STATUS, LATTICE])
      bodies[path] = await (await fetch(`${validator.url}${path}`)).text();
    const bare = await startChild('bare Fastify', 'bench/bare-server.ts', [], {
      BARE_ROUTES: JSON.stringify(bodies),
    });
    const bytes = (path: string) => `${fmt(Buffer.byteLength(bodies[path]!))} B`;
    const targets: ReadTarget[] = [
      {
        name: `validator GET ${STATUS} (${BLOCKS + 1} cells, ${bytes(STATUS)})`,
        child: validator,
        path: STATUS,
        versus: 1,
      },
      { name: `bare Fastify 5, same path and bytes`, child: bare, path: STATUS },
      {
        name: `validator GET ${LATTICE} (first page: 100 blocks, ${bytes(LATTICE)})`,
        child: validator,
        path: LATTICE,
        versus: 3,
      },
      { name: `bare Fastify 5, same path and bytes`, child: bare, path: LATTICE },
    ];
    // One pair after the other: a status run never follows the heavy lattice answers.
    const options = { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS };
    const samples = [
      ...(await alternateReads(targets.slice(0, 2), options)),
      ...(await alternateReads(targets.slice(2), options)),
    ];
    const result = readTable(targets, samples);
    console.log(result);
    const status = readRatios(targets, samples, 0);
    const met = status.rate >= 0.8 && status.p99 <= 1.2;
    const verdict = `GET ${STATUS}: ${status.rate.toFixed(2)}x the bare route's req/s and ${status.p99.toFixed(2)}x its p99 (ratios of the medians of ${ROUNDS} rounds; the medians of the per-round ratios: ${status.pairedRate.toFixed(2)}x and ${status.pairedP99.toFixed(2)}x), ${status.cpu.toFixed(2)}x its server CPU per answer: the target (at least 0.8x, p99 within 1.2x) is ${met ? '**met**' : '**not met**'} on the ratios of the medians.`;
    console.log(verdict);
    const seconds = (performance.now() - startedAt) / 1000;
    writeSection(
      DOC_PATH,
      'validator-reads',
      `## Validator lattice reads at 1,000 connections

Command: \`${COMMAND}\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${fmt(seconds)} s; load average ${loadBefore.join(' / ')} (1 / 5 / 15 min) at the start: other processes shared the 2 cores).

The validator (in memory, rate limits raised, every hook in place: address rate limit, metrics,
logger, error handler; a lattice of ${BLOCKS} mined blocks) and a bare Fastify 5 server
(\`bench/bare-server.ts\`: no hooks, no schemas, no logger, each route answering the bytes the
validator answered, as one constant string) run in their own child processes; autocannon
\`-c ${CONNECTIONS}\` for ${SECONDS} s against each route of a pair, alternated ${ROUNDS} times (A B, B A, A B, ...;
the status pair, then the lattice pair), medians; in parentheses the lowest and highest ratio
of a round against the bare run next to it, and the median of those per-round ratios.
Both routes are answered from the node's in-memory lattice state, kept serialized (by the
route's response schema) until the next block, difficulty change or open-challenge count
change. At 1,000 connections both servers are saturated and the p99 is mostly queueing, so it
moves with each round's throughput and with the neighbours on this shared machine.

${result}

${verdict}

History: before the per-request work was removed (commit 645c0c2, a quiet machine, load 0.4, and
an easier baseline: a bare GET /health of 190 B), GET ${STATUS} ran at 0.67x, p99 1.90x, with
1.55x the server CPU per answer.
`,
    );
    console.log(`wrote the validator-reads section of ${DOC_PATH}`);
  } finally {
    await stopAll();
  }
}

runBench(main);
