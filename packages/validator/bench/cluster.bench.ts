/**
 * Cluster bench (docs/cluster.md): verified hexchain submits and v4.0 proofs per second, with
 * p50/p99 latency, for one SQLite node, one PostgreSQL node and two PostgreSQL nodes on one
 * database, measured side by side in one run (the machine is shared: the ratios are the result).
 *
 *   npm run bench:cluster -w @tensormine/validator      (writes its section of docs/benchmarks.md)
 *
 * Every node is the real bin in its own process; PostgreSQL is a real server started here
 * (test/support/postgres.ts) with its durability settings ON (fsync, synchronous_commit), as
 * SQLite runs with synchronous=FULL: an acknowledged write survives a crash in both.
 *
 * Work is prepared before each measured phase (challenges issued through the nodes, blocks and
 * proofs solved here) and the submissions are then sent with autocannon, spread over the nodes
 * round robin, whichever node issued the challenge.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildSubmission,
  type ChallengeWire,
  formatPublicKey,
  fromHex,
  type HexChallenge,
  type KeyPair,
  keyPairFromSecret,
  proofBytesFromWire,
  proofFromWork,
  signProof,
  signRequest,
  solveBlock,
  solveProof,
  taggedHash,
  targetFromHex,
  taskFromWire,
  utf8,
} from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { NODE_ADMIN_TOKEN, type Node, startNode, stopNodes } from '../test/support/cluster-nodes.js';
import { startPostgres } from '../test/support/postgres.js';
import { fmt, mapConcurrent, request, type SubmitRun, submitAll } from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
/** Many miners, as in a real network: one key would make every transaction update the same rows. */
const MINERS: KeyPair[] = Array.from({ length: 32 }, (_, i) =>
  keyPairFromSecret(taggedHash('bench/cluster', utf8(`miner-${i}`))),
);
const minerOf = (i: number): KeyPair => MINERS[i % MINERS.length]!;
const ENV = {
  TENSORMINE_HEX_DIFFICULTY: '16',
  TENSORMINE_DIFFICULTY: '1',
  TENSORMINE_LOG_LEVEL: 'error',
  TENSORMINE_INVALID_PROOF_BUDGET_PER_ADDRESS: '1000000',
};
/** Submissions in flight at once, over all the nodes of a setup. */
const CONNECTIONS = 32;
/**
 * Hexchain rounds: challenges issued (HEX_ROUND), kept one per free frontier cell, solved and
 * submitted at once; rounds until HEX_BLOCKS blocks or HEX_BUDGET_MS.
 */
const HEX_ROUND = 120;
const HEX_BLOCKS = 600;
const HEX_BUDGET_MS = 20_000;
/** v4.0 proofs per setup (esp8266 work: 16x16 tensors, cheap to solve here). */
const PROOFS = 600;

interface Setup {
  readonly name: string;
  readonly nodes: Node[];
}

interface Measured {
  ok: number;
  sent: number;
  elapsedMs: number;
  p50: number[];
  p99: number[];
  rejected: Map<string, number>;
}

const empty = (): Measured => ({ ok: 0, sent: 0, elapsedMs: 0, p50: [], p99: [], rejected: new Map() });

/** Sends `bodies` spread round robin over the nodes, all nodes at once; one figure for the setup. */
async function spread(setup: Setup, path: string, bodies: string[], into: Measured): Promise<void> {
  const n = setup.nodes.length;
  const shares = setup.nodes.map((_, i) => bodies.filter((_, j) => j % n === i));
  const started = performance.now();
  const runs: SubmitRun[] = await Promise.all(
    setup.nodes.map((node, i) =>
      submitAll(node.url, path, shares[i]!, Math.ceil(CONNECTIONS / n), node.child.pid),
    ),
  );
  into.elapsedMs += performance.now() - started;
  into.sent += bodies.length;
  for (const run of runs) {
    into.ok += run.ok;
    into.p50.push(run.p50);
    into.p99.push(run.p99);
    for (const [k, v] of run.rejected) into.rejected.set(k, (into.rejected.get(k) ?? 0) + v);
  }
}

async function register(setup: Setup): Promise<void> {
  const path = '/devices/register';
  for (const miner of MINERS) {
    const body = JSON.stringify({ pubkey: formatPublicKey(miner.publicKey), device_type: 'native' });
    const headers = signRequest({ method: 'POST', path, body, secretKey: miner.secretKey });
    await request(setup.nodes[0]!.url, 'POST', path, { body, headers });
  }
}

async function hexchain(setup: Setup): Promise<Measured> {
  const m = empty();
  let slot = 1;
  const started = performance.now();
  while (m.sent < HEX_BLOCKS && performance.now() - started < HEX_BUDGET_MS) {
    // Retargets (every 12 blocks) raise the difficulty up to 4 times when blocks come this fast:
    // put it back to 16 through the first node; every node follows (notification), checked.
    await request(setup.nodes[0]!.url, 'POST', '/admin/config', {
      body: JSON.stringify({ hexchain_difficulty: 16 }),
      headers: { authorization: `Bearer ${NODE_ADMIN_TOKEN}` },
    });
    for (const node of setup.nodes) {
      for (
        let i = 0;
        (await request<{ difficulty: number }>(node.url, 'GET', '/api/hexchain/status')).difficulty !== 16;
        i++
      ) {
        if (i > 200) throw new Error(`${node.nodeId} did not follow the difficulty change`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const slots = Array.from({ length: HEX_ROUND }, () => slot++);
    const issued = await mapConcurrent(slots, 16, (s) =>
      request<HexChallenge>(setup.nodes[s % setup.nodes.length]!.url, 'POST', '/api/hexchain/challenge', {
        body: JSON.stringify({ slot: s, slot_hash: 'bench-cluster' }),
      }),
    );
    // One block per cell: two challenges for one cell would make the second a refusal.
    const byCell = new Map<string, HexChallenge>();
    for (const c of issued)
      byCell.set(`${c.coord.q},${c.coord.r}`, byCell.get(`${c.coord.q},${c.coord.r}`) ?? c);
    const bodies = [...byCell.values()].map((c, i) => {
      const miner = minerOf(i);
      const challengeHash = fromHex(c.challenge_hash);
      const solved = solveBlock({
        challengeHash,
        coord: c.coord,
        minerPublicKey: miner.publicKey,
        target: targetFromHex(c.target),
        maxIterations: 1_000_000,
      });
      if (solved === undefined) throw new Error(`no nonce for ${c.id}`);
      return JSON.stringify(
        buildSubmission({
          challengeId: c.id,
          challengeHash,
          coord: c.coord,
          nonce: solved.nonce,
          keyPair: miner,
        }),
      );
    });
    await spread(setup, '/api/hexchain/submit', bodies, m);
  }
  return m;
}

async function tensor(setup: Setup): Promise<Measured> {
  const slots = Array.from({ length: PROOFS }, (_, i) => i + 1);
  const wires = await mapConcurrent(slots, 16, (s) =>
    request<ChallengeWire>(setup.nodes[s % setup.nodes.length]!.url, 'POST', '/challenge', {
      body: JSON.stringify({ slot: s, slot_hash: 'bench-cluster', device_type: 'esp8266' }),
    }),
  );
  const bodies = wires.map((wire, i) => {
    const miner = minerOf(i);
    const task = taskFromWire(wire);
    const solution = solveProof(task, miner.publicKey, { maxIterations: 100_000 });
    if (!solution) throw new Error(`no proof for ${wire.challenge_id}`);
    const proof = proofFromWork(
      task.challengeId,
      task.challengeHash,
      miner.publicKey,
      solution.nonce,
      solution.work,
    );
    const signature = signProof(proofBytesFromWire(proof, solution.work.mmlScoreQ16), miner.secretKey);
    return JSON.stringify({ proof, signature });
  });
  const m = empty();
  await spread(setup, '/submit', bodies, m);
  return m;
}

const rate = (m: Measured) => (m.ok * 1000) / m.elapsedMs;
const worst = (xs: number[]) => Math.max(...xs);
const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function rejections(m: Measured): string {
  if (m.rejected.size === 0) return '0';
  return [...m.rejected].map(([k, v]) => `${k}: ${v}`).join(', ');
}

async function main(): Promise<void> {
  const pg = await startPostgres({
    settings: { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' },
  });
  const results: { setup: string; hex: Measured; proofs: Measured; blocks: number }[] = [];
  try {
    const setups: (() => Promise<Setup>)[] = [
      async () => ({ name: 'one SQLite node', nodes: [await startNode({ nodeId: 'sqlite', env: ENV })] }),
      async () => {
        const databaseUrl = await pg.createDatabase();
        return {
          name: 'one PostgreSQL node',
          nodes: [await startNode({ nodeId: 'pg-a', databaseUrl, env: ENV })],
        };
      },
      async () => {
        const databaseUrl = await pg.createDatabase();
        const a = await startNode({ nodeId: 'pg-a', databaseUrl, env: ENV });
        const b = await startNode({ nodeId: 'pg-b', databaseUrl, env: ENV });
        return { name: 'two PostgreSQL nodes, one database', nodes: [a, b] };
      },
    ];
    for (const make of setups) {
      const setup = await make();
      try {
        await register(setup);
        const hex = await hexchain(setup);
        const proofs = await tensor(setup);
        const metrics = await request<{ blocks_accepted: number }>(
          setup.nodes[0]!.url,
          'GET',
          '/admin/metrics',
          {
            headers: { authorization: `Bearer ${NODE_ADMIN_TOKEN}` },
          },
        );
        results.push({ setup: setup.name, hex, proofs, blocks: metrics.blocks_accepted });
        console.log(setup.name, rate(hex).toFixed(0), 'blocks/s', rate(proofs).toFixed(0), 'proofs/s');
      } catch (error) {
        for (const node of setup.nodes) console.error(`--- ${node.nodeId}:\n${node.output().slice(-3000)}`);
        throw error;
      } finally {
        await stopNodes();
      }
    }
  } finally {
    await stopNodes();
    await pg.stop();
  }

  const base = results[0]!;
  const rows = results.map((r) => {
    const hexRatio = rate(r.hex) / rate(base.hex);
    const proofRatio = rate(r.proofs) / rate(base.proofs);
    return `| ${r.setup} | ${fmt(rate(r.hex))} (${hexRatio.toFixed(2)}x) | ${mid(r.hex.p50).toFixed(0)} / ${worst(r.hex.p99).toFixed(0)} | ${fmt(rate(r.proofs))} (${proofRatio.toFixed(2)}x) | ${mid(r.proofs.p50).toFixed(0)} / ${worst(r.proofs.p99).toFixed(0)} | ${rejections(r.hex)}; ${rejections(r.proofs)} |`;
  });
  const pgOne = results[1]!;
  const pgTwo = results[2]!;
  const body = `## Cluster: one SQLite node, one and two PostgreSQL nodes

Command: \`npm run bench:cluster -w @tensormine/validator\` (packages/validator/bench/cluster.bench.ts).
${machineLine()}. Everything runs on these **2 cores**: the PostgreSQL server, the validator
processes and the load generator (which also solves the work between the measured phases), so
a second node adds no CPU: the two-node figures measure what sharing one database costs, not
what a second machine would add. PostgreSQL ran with fsync and synchronous_commit on, SQLite
with synchronous=FULL. ${CONNECTIONS} connections in all, spread over the nodes round robin
(whichever node issued the challenge), from ${MINERS.length} miner keys. Hexchain: rounds of one
block per free frontier cell at difficulty 16 (up to ${HEX_BLOCKS} blocks or ${HEX_BUDGET_MS / 1000} s);
v4.0: ${PROOFS} proofs of esp8266 work (16x16 tensors).

| setup | verified hexchain submits/s (vs SQLite) | p50 / p99 ms | verified v4.0 proofs/s (vs SQLite) | p50 / p99 ms | refused |
|---|---|---|---|---|---|
${rows.join('\n')}

Blocks accepted as counted by the nodes: ${results.map((r) => `${r.setup} ${r.blocks}`).join(', ')}.

### Paper estimate: how many miners one cluster serves

Per miner, the network sees about one challenge and one submission per work unit: a v4.0
miner sends a proof per challenge; a hexchain miner asks for a challenge, and submits only when
it finds a block (the retarget holds the network at one block per block interval, 10 s by
default), so its steady load is mostly challenges. Every challenge and every accepted
submission is one short SERIALIZABLE transaction on the one database.

- **What a node adds.** Verification (one hash per block; the tensor recomputation of a v4.0
  proof, the dominant cost on SQLite: ${fmt(rate(base.proofs))} proofs/s here) runs on the
  node that received the submission, so with one machine per node it scales with N.
- **What the database caps.** On PostgreSQL one node reached ${fmt(rate(pgOne.proofs))} proofs/s and two nodes
  ${fmt(rate(pgTwo.proofs))}/s (${fmt(rate(pgOne.hex))} and ${fmt(rate(pgTwo.hex))} blocks/s): far below the node's verification rate.
  The limit is the database. Each node runs its write transactions one at a time
  (docs/storage.md: ten at once conflicted with each other and halved the block rate), so the
  conflicts are between nodes: SERIALIZABLE transactions of two nodes touching the same rows
  (a block transaction reads the block count and the retarget state; a miner's balance,
  statistics and device rows; the indexes' predicate locks). The loser is re-run with a
  growing pause, up to 30 times; one that loses every run is answered 503
  \`service_unavailable\` with Retry-After (nothing was written; the identical submission may
  be sent again), counted in the "refused" column.
- **Miners per cluster, today.** With one submission per miner every 10 s, the cluster serves
  about ${fmt(rate(pgOne.proofs) * 10)} v4.0 miners (${fmt(rate(pgOne.proofs))} accepted proofs/s x 10 s); a second node made it
  ${(rate(pgTwo.proofs) / rate(pgOne.proofs)).toFixed(2)}x on this hardware, where the nodes, the database and the load share 2 cores. What would raise it further: fewer conflicts per transaction (the block count kept in a
  row of its own, the statistics moved out of the submission's transaction) and the database
  on a machine of its own; then the ceiling becomes its commit rate (not measured here: on a
  dedicated server with a fast fsync PostgreSQL commits thousands of short transactions per
  second, which would be tens of thousands of miners), and before it the nodes' verification
  (N x ${fmt(rate(base.proofs))} proofs/s on these cores).
`;
  writeSection(DOC_PATH, 'cluster', body);
  console.log(body);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopNodes();
  process.exit(1);
});
