/**
 * High-availability bench (docs/cluster.md, "High availability"): the topology of
 * scripts/ha-up.sh (two validator nodes behind HAProxy, PostgreSQL primary + synchronous standby
 * under Patroni, etcd), started by that script here on free ports in a temporary directory.
 *
 *   npm run bench:ha -w @tensormine/validator      (writes its section of docs/benchmarks.md)
 *
 * 1. Failover: writers issue hexchain challenges (one write transaction each) through HAProxy
 *    without pause; the primary's postmaster is killed with SIGKILL; the time from the kill to
 *    the first acknowledged write sent after it is recorded. The next kill waits until the killed node
 *    is back as the synchronous standby. FAILOVERS runs; the median is the figure.
 * 2. Throughput of synchronous against asynchronous replication, in alternating rounds
 *    (Patroni's synchronous_mode switched by PATCH /config between them, both orders), so that
 *    both see the same machine load: the same challenge writes from CONNECTIONS connections
 *    through HAProxy for ROUND_MS; and bare commits (one single-row INSERT per transaction,
 *    CONNECTIONS connections to PostgreSQL through HAProxy), the replication's own cost.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { type HaCluster, startHaCluster, until } from '../test/support/ha.js';
import { cannon, fmt, median, okPerSecond, runBench, table } from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const FAILOVERS = Number(process.env.HA_BENCH_FAILOVERS ?? 5);
const ROUNDS = Number(process.env.HA_BENCH_ROUNDS ?? 6);
const ROUND_MS = 5_000;
const CONNECTIONS = 16;
const WRITERS = 4;
/** The slot hash the validator's tests use (any 32 bytes do). */
const SLOT_HASH = '2630c8f2727c70cff0f2ec54b064e50797bd21a30f09d88052deb18a6c4fca41';
const CHALLENGE_BODY = JSON.stringify({ slot: 5000, slot_hash: SLOT_HASH });

async function issue(url: string): Promise<number> {
  try {
    const res = await fetch(`${url}/api/hexchain/challenge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: CHALLENGE_BODY,
      signal: AbortSignal.timeout(30_000),
    });
    await res.body?.cancel();
    return res.status;
  } catch {
    return 0; // no answer (connection refused or reset)
  }
}

async function syncStandby(cluster: HaCluster): Promise<boolean> {
  return (await cluster.members()).some(
    (m) => m.role === 'sync_standby' && ['running', 'streaming'].includes(m.state),
  );
}

interface Failover {
  readonly firstWriteMs: number;
  readonly newPrimaryMs: number;
  readonly statuses: Map<number, number>;
}

async function failover(cluster: HaCluster): Promise<Failover> {
  await until('a synchronous standby', () => syncStandby(cluster), 600_000);
  const primary = await cluster.primary();
  if (primary === undefined) throw new Error('no primary');
  const statuses = new Map<number, number>();
  let killedAt = 0;
  let firstAfter = 0;
  let stop = false;
  const writer = async () => {
    while (!stop) {
      const sentAt = Date.now();
      const status = await issue(cluster.url);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      // (A write sent before the kill and acknowledged after it does not count.)
      if (status === 200 && killedAt > 0 && sentAt >= killedAt && firstAfter === 0) firstAfter = Date.now();
      // (A client would wait Retry-After; here the next try goes at once, to time the system.)
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const writers = Array.from({ length: WRITERS }, writer);
  await until('writes before the kill', () => (statuses.get(200) ?? 0) >= 20, 60_000);
  statuses.clear();
  killedAt = Date.now();
  cluster.kill9Postmaster(primary);
  let newPrimaryAt = 0;
  await until(
    'another primary',
    async () => {
      const now = await cluster.primary();
      if (now !== undefined && now !== primary && newPrimaryAt === 0) newPrimaryAt = Date.now();
      return newPrimaryAt > 0 && firstAfter > 0;
    },
    600_000,
  );
  stop = true;
  await Promise.all(writers);
  return { firstWriteMs: firstAfter - killedAt, newPrimaryMs: newPrimaryAt - killedAt, statuses };
}

async function setSynchronous(cluster: HaCluster, on: boolean): Promise<void> {
  await cluster.patchConfig({ synchronous_mode: on });
  const client = new pg.Client({ connectionString: cluster.superuserUrl });
  await client.connect();
  try {
    await until(
      `synchronous replication ${on ? 'on' : 'off'}`,
      async () => {
        const names = (await client.query('SHOW synchronous_standby_names')).rows[0]
          .synchronous_standby_names;
        return on ? names !== '' : names === '';
      },
      120_000,
    );
  } finally {
    await client.end();
  }
}

/** Commits per second of CONNECTIONS connections each running single-row INSERT transactions. */
async function bareCommits(url: string): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  try {
    await clients[0]!.query('CREATE TABLE IF NOT EXISTS bench_commits (id bigserial PRIMARY KEY, at bigint)');
    let commits = 0;
    const end = Date.now() + ROUND_MS;
    await Promise.all(
      clients.map(async (c) => {
        while (Date.now() < end) {
          await c.query('INSERT INTO bench_commits (at) VALUES ($1)', [Date.now()]);
          commits++;
        }
      }),
    );
    return commits / (ROUND_MS / 1000);
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

interface Runs {
  readonly sync: number[];
  readonly async: number[];
}

async function throughput(cluster: HaCluster): Promise<{ writes: Runs; commits: Runs }> {
  const writes: Runs = { sync: [], async: [] };
  const commits: Runs = { sync: [], async: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Both orders: sync first in even rounds, async first in odd ones.
    for (const on of round % 2 === 0 ? [true, false] : [false, true]) {
      await setSynchronous(cluster, on);
      const result = await cannon({
        url: `${cluster.url}/api/hexchain/challenge`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: CHALLENGE_BODY,
        connections: CONNECTIONS,
        duration: ROUND_MS / 1000,
      });
      const bare = await bareCommits(cluster.superuserUrl);
      (on ? writes.sync : writes.async).push(okPerSecond(result));
      (on ? commits.sync : commits.async).push(bare);
      console.info(
        `  ${on ? 'synchronous ' : 'asynchronous'}: ${fmt(okPerSecond(result))} validator writes/s, ${fmt(bare)} bare commits/s`,
      );
    }
  }
  await setSynchronous(cluster, true);
  return { writes, commits };
}

/** Two table rows: synchronous, then asynchronous with its ratio to synchronous. */
function rows(what: string, runs: Runs): string[][] {
  const sync = median(runs.sync);
  const asyncMedian = median(runs.async);
  return [
    [`${what}, synchronous`, fmt(sync), runs.sync.map((v) => fmt(v)).join(', '), '1.00x'],
    [
      `${what}, asynchronous`,
      fmt(asyncMedian),
      runs.async.map((v) => fmt(v)).join(', '),
      `${fmt(asyncMedian / sync, 2)}x`,
    ],
  ];
}

runBench(async () => {
  console.info('starting the topology (scripts/ha-up.sh)...');
  const cluster = await startHaCluster({
    env: {
      TENSORMINE_LOG_LEVEL: 'error',
      TENSORMINE_RATE_LIMIT_PER_SECOND: '1000000',
      TENSORMINE_RATE_LIMIT_BURST: '1000000',
    },
  });
  try {
    const runs: Failover[] = [];
    for (let i = 0; i < FAILOVERS; i++) {
      const run = await failover(cluster);
      runs.push(run);
      console.info(
        `failover ${i + 1}: new primary after ${fmt(run.newPrimaryMs / 1000, 1)} s, first acknowledged write after ${fmt(run.firstWriteMs / 1000, 1)} s`,
      );
    }
    const tp = await throughput(cluster);
    const statuses = new Map<number, number>();
    for (const r of runs) for (const [s, n] of r.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
    const seconds = (ms: number) => `${fmt(ms / 1000, 1)} s`;
    const firsts = runs.map((r) => r.firstWriteMs);
    const body = [
      '## High availability: failover time, synchronous against asynchronous replication',
      '',
      'Two validator nodes behind HAProxy, PostgreSQL 15 primary + standby under Patroni 3.0 with etcd 3.4,',
      'all on one machine, started by `scripts/ha-up.sh` (its defaults: ttl 15 s, loop_wait 2 s, retry_timeout 5 s,',
      'primary_start_timeout 0; HAProxy checks every second, every 0.5 s after a failure, and marks a PostgreSQL',
      'server down at its first refused connection).',
      '',
      `**Failover** (${FAILOVERS} runs): ${WRITERS} writers issue hexchain challenges through HAProxy without pause; the`,
      "primary's postmaster is killed with SIGKILL; the time from the kill to the first acknowledged write sent after it:",
      '',
      table(
        ['', 'median', 'min', 'max', 'every run'],
        [
          [
            'first acknowledged write',
            seconds(median(firsts)),
            seconds(Math.min(...firsts)),
            seconds(Math.max(...firsts)),
            firsts.map(seconds).join(', '),
          ],
          [
            "Patroni's new primary",
            seconds(median(runs.map((r) => r.newPrimaryMs))),
            seconds(Math.min(...runs.map((r) => r.newPrimaryMs))),
            seconds(Math.max(...runs.map((r) => r.newPrimaryMs))),
            runs.map((r) => seconds(r.newPrimaryMs)).join(', '),
          ],
        ],
      ),
      '',
      `Answers during the failovers: ${[...statuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${fmt(n)} × ${s === 0 ? 'no answer' : s}`)
        .join(', ')} (503 is service_unavailable with Retry-After, from the validator or from HAProxy).`,
      '',
      `**Throughput** (${ROUNDS} rounds of ${ROUND_MS / 1000} s each way, alternating, both orders; Patroni's`,
      '`synchronous_mode` switched between rounds): validator writes are POST /api/hexchain/challenge from',
      `${CONNECTIONS} connections through HAProxy (one transaction each; each node runs its write transactions one at a`,
      `time); bare commits are single-row INSERT transactions from ${CONNECTIONS} connections to PostgreSQL through`,
      "HAProxy: the replication's own cost per commit.",
      '',
      table(
        ['', 'per second (median)', 'every round', 'vs synchronous'],
        [...rows('validator writes', tp.writes), ...rows('bare commits', tp.commits)],
      ),
      '',
      'On one machine the standby acknowledges over loopback and flushes to the same disk; between machines each',
      'synchronous commit also waits one network round trip to the standby. The validator writes are bound by the',
      'nodes themselves here (one write transaction at a time each, on two shared cores), so the replication cost',
      'hardly shows in them; the bare commits show it.',
      '',
      `Machine: ${machineLine()}. Command: \`npm run bench:ha -w @tensormine/validator\`.`,
    ].join('\n');
    writeSection(DOC_PATH, 'ha', body);
    console.info(body);
  } finally {
    await cluster.stop();
  }
});
