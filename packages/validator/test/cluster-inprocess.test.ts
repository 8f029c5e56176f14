import { formatPublicKey, type HexStatus, RETARGET_WINDOW_BLOCKS, signRequest } from '@tensormine/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { waitFor } from '../../../test-support/wait.ts';
import type { Validator } from '../src/app.js';
import { LIVE_MS } from '../src/services/cluster.js';
import { HEXCHAIN_CHANNEL } from '../src/services/hexchain.js';
import { COUNTERS } from '../src/services/metrics.js';
import { openPostgresStorage } from '../src/store/postgres.js';
import { openSqliteStorage } from '../src/store/sqlite.js';
import type { Storage } from '../src/store/types.js';
import { register, testKey, testValidator } from './helpers.js';
import { expectError, issue, mine, submit } from './hexchain-mine.js';
import { grind, join, member, pooledChallenge, shareSubmission, submitShare } from './pool-helpers.js';
import { type PostgresServer, testPostgres } from './support/postgres.js';

/**
 * Several validators on one database, in one process: the cluster logic (notifications,
 * lattice following, heartbeats, peers, run-time settings) without processes, on one SQLite
 * storage shared in process and on two PostgreSQL storages of one real database (LISTEN/NOTIFY
 * between them). The real bin in separate processes: packages/client/test/validator-cluster.test.ts.
 */

const alice = testKey('cluster-alice');
const open: Validator[] = [];
const bob = testKey('cluster-bob');

const storages: Storage[] = [];
let server: PostgresServer;
beforeAll(async () => {
  server = await testPostgres();
});
afterAll(async () => {
  await server?.stop();
});

// Registered before helpers' afterEach runs? vitest runs afterEach hooks in reverse order of
// registration, so this one (registered after helpers.ts's) runs first: close the validators here.
afterEach(async () => {
  await Promise.all(open.splice(0).map((v) => v.close()));
  await Promise.all(storages.splice(0).map((s) => s.close()));
});

/** `n` validators on one database: one shared SQLite storage, or one PostgreSQL storage each. */
type Engine = 'sqlite' | 'postgres';
type NodeOptions = Parameters<typeof testValidator>[0];
let cluster: (n: number, clocks?: (() => number)[], options?: NodeOptions) => Promise<Validator[]>;
function clusterOn(engine: Engine) {
  return async (
    n: number,
    clocks: (() => number)[] = [],
    options: NodeOptions = {},
  ): Promise<Validator[]> => {
    const nodes: Validator[] = [];
    const clock = (i: number) => ({ ...options, ...(clocks[i] === undefined ? {} : { now: clocks[i] }) });
    if (engine === 'sqlite') {
      const storage = await openSqliteStorage({ path: ':memory:' });
      storages.push(storage);
      for (let i = 0; i < n; i++) {
        nodes.push(await testValidator({ storage, cluster: true, nodeId: `node-${i}`, ...clock(i) }));
      }
    } else {
      const url = await server.createDatabase();
      for (let i = 0; i < n; i++) {
        const storage = await openPostgresStorage({ url, poolSize: 4 });
        storages.push(storage);
        nodes.push(await testValidator({ storage, nodeId: `node-${i}`, ...clock(i) }));
      }
    }
    open.push(...nodes);
    return nodes;
  };
}

/** Waits (the suite's generous bound) until `check` holds. */
function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  return waitFor(check, what, { intervalMs: 5 });
}

async function hexStatus(v: Validator): Promise<HexStatus> {
  return (await v.inject('/api/hexchain/status')).json() as HexStatus;
}

describe.each(['sqlite', 'postgres'] as const)('validators sharing one database (%s)', (engine) => {
  beforeAll(() => {
    cluster = clusterOn(engine);
  });

  it("a block accepted by one node is in the other nodes' lattice and event stream, pushed", async () => {
    // The heartbeat (the safety-net catch-up, every 5 s) never runs in this test: its interval
    // is faked and never advanced, so only the notification can bring the block, however long
    // a loaded machine takes.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const [a, b] = await cluster(2);
    await register(a!, alice);
    const publishedBefore = b!.events.stats().published;
    const c = await issue(a!, { miner_pubkey: formatPublicKey(alice.publicKey) });
    const res = await submit(a!, mine(c, alice));
    expect(res.statusCode, res.body).toBe(200);
    const key = `${c.coord.q}/${c.coord.r}/${c.coord.s}`;
    await until('node 1 to apply the block', async () => (await hexStatus(b!)).occupied === 2);
    const block = await b!.inject(`/api/hexchain/lattice/${key}`);
    expect(block.statusCode, block.body).toBe(200);
    expect(block.json()).toMatchObject({ block_hash: res.json().block_hash });
    expect(b!.events.stats().published).toBe(publishedBefore + 1);
    expect(b!.cluster).toBeDefined();
    const peers = (await b!.inject('/network/peers')).json();
    expect(peers).toMatchObject({ mode: 'cluster', synced: true, node_id: 'node-1' });
  });

  // One storage per node on PostgreSQL (on SQLite the nodes share one, so its reads are theirs).
  if (engine === 'postgres') {
    it('applies a block from its notification without reading; a notification without it makes the node read', async () => {
      // No heartbeat (the safety net's catch-up reads): its interval is faked, never advanced.
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      onTestFinished(() => {
        vi.useRealTimers();
      });
      const [a, b] = await cluster(2);
      const storageA = a!.context.storage;
      const storageB = b!.context.storage;
      expect(storageB).not.toBe(storageA);
      await register(a!, alice);
      const c = await issue(a!, { miner_pubkey: formatPublicKey(alice.publicKey) });
      const publishedBefore = b!.events.stats().published;
      const reads = vi.spyOn(storageB, 'read');
      const transactions = vi.spyOn(storageB, 'transaction');
      const res = await submit(a!, mine(c, alice));
      expect(res.statusCode, res.body).toBe(200);
      await until('node 1 to publish the block', () => b!.events.stats().published === publishedBefore + 1);
      expect(reads).not.toHaveBeenCalled();
      expect(transactions).not.toHaveBeenCalled();
      // A notification that does not carry the write (a node of an earlier version): node 1 reads.
      await storageA.transaction((tx) =>
        tx.notify(HEXCHAIN_CHANNEL, JSON.stringify({ from: 'an-earlier-node', height: 1 })),
      );
      await until('node 1 to catch up from the storage', () => reads.mock.calls.length > 0);
      expect(b!.events.stats().published).toBe(publishedBefore + 1);
    });
  }

  it('takes a submission for a challenge issued by another node; the first block wins at a coordinate', async () => {
    const [a, b] = await cluster(2);
    await register(a!, alice);
    await register(b!, bob);
    // One challenge (no miner named), mined by two keys: two different valid blocks for one cell.
    const c = await issue(a!);
    const fromAlice = mine(c, alice);
    const fromBob = mine(c, bob);
    const [ra, rb] = await Promise.all([submit(a!, fromAlice), submit(b!, fromBob)]);
    const codes = [ra.statusCode, rb.statusCode].sort();
    expect(codes, `${ra.body} ${rb.body}`).toEqual([200, 409]);
    const loser = ra.statusCode === 409 ? ra : rb;
    expect(loser.json().code).toBe('coordinate_occupied');
    // The winner's identical resubmission through the other node: its acceptance again.
    const winner =
      ra.statusCode === 200 ? { res: ra, body: fromAlice, other: b! } : { res: rb, body: fromBob, other: a! };
    const again = await submit(winner.other, winner.body);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().block_hash).toBe(winner.res.json().block_hash);
    // One reward: the ledger of the network holds one mining reward for this block.
    const ledger = (await a!.inject('/ledger/entries?type=mining_reward')).json() as { entries: unknown[] };
    expect(ledger.entries).toHaveLength(1);
  });

  it('retargets once for blocks accepted by different nodes, and every node follows', async () => {
    const [a, b] = await cluster(2);
    await register(a!, alice);
    for (let i = 0; i < RETARGET_WINDOW_BLOCKS; i++) {
      const node = i % 2 === 0 ? a! : b!;
      const c = await issue(node, { miner_pubkey: formatPublicKey(alice.publicKey) });
      const res = await submit(i % 3 === 0 ? b! : a!, mine(c, alice));
      expect(res.statusCode, res.body).toBe(200);
    }
    const writes = await a!.context.storage.read(async (tx) => (await tx.blocks.head()).difficultySeq);
    expect(writes).toBe(1);
    await until('both nodes at the new difficulty', async () => {
      const [sa, sb] = [await hexStatus(a!), await hexStatus(b!)];
      return sa.difficulty === sb.difficulty && sa.occupied === sb.occupied && sa.difficulty !== 64;
    });
  });

  it('counts a share sent at once through every node once: one accepted, the others share_duplicate', async () => {
    // Shares are written in groups per node (services/pool/recorder.ts): a share raced through
    // three nodes is in three groups at once; its unique pow hash lets exactly one count it.
    const nodes = await cluster(3, [], { hexDifficulty: 4096n, poolStrategy: 'pplns' });
    const [a, b] = nodes as [Validator, Validator, Validator];
    await register(a, alice);
    expect((await join(a, alice)).statusCode).toBe(200);
    const c = await pooledChallenge(b, alice);
    const nonces = grind(c, alice, 0, 4000)
      .filter((h) => h.share && !h.block)
      .slice(0, 4)
      .map((h) => h.nonce);
    expect(nonces).toHaveLength(4);
    const answers = await Promise.all(
      nonces.map((nonce) => Promise.all(nodes.map((v) => submitShare(v, shareSubmission(c, alice, nonce))))),
    );
    for (const sent of answers) {
      expect(sent.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
      for (const r of sent.filter((r) => r.statusCode === 409)) expectError(r, 409, 'share_duplicate');
    }
    for (const v of nodes) expect((await member(v, alice)).shares_accepted).toBe(4);
    expect(await a.context.storage.read((tx) => tx.counters.get(COUNTERS.sharesAccepted))).toBe(4);
  });

  it('refuses a signed request replayed through another node', async () => {
    const [a, b] = await cluster(2);
    await register(a!, alice);
    // The same signed registration (same nonce) through the other node.
    const body = { pubkey: formatPublicKey(bob.publicKey), device_type: 'native' };
    const payload = JSON.stringify(body);
    const headers = {
      ...signRequest({ method: 'POST', path: '/devices/register', body: payload, secretKey: bob.secretKey }),
      'content-type': 'application/json',
    };
    const first = await a!.inject({ method: 'POST', url: '/devices/register', headers, payload });
    expect(first.statusCode, first.body).toBe(200);
    const replay = await b!.inject({ method: 'POST', url: '/devices/register', headers, payload });
    expect(replay.statusCode, replay.body).toBe(409);
    expect(replay.json().code).toBe('request_replayed');
  });

  it('follows run-time settings and difficulty changed through another node', async () => {
    const [a, b] = await cluster(2);
    const auth = { authorization: `Bearer ${a!.adminToken}` };
    const res = await a!.inject({
      method: 'POST',
      url: '/admin/config',
      headers: auth,
      payload: { difficulty: 3, hexchain_difficulty: 128 },
    });
    expect(res.statusCode, res.body).toBe(200);
    await until('node 1 to follow', async () => {
      const cfg = (
        await b!.inject({ url: '/admin/config', headers: { authorization: `Bearer ${b!.adminToken}` } })
      ).json();
      return cfg.difficulty === 3 && cfg.hexchain_difficulty === 128;
    });
  });

  it('publishes the same events under the same ids on every node: a client resumes on another node', async () => {
    const [a, b] = await cluster(2);
    await register(a!, alice);
    const start = a!.events.seq;
    expect(b!.events.seq).toBe(start);
    // Blocks through both nodes, a retarget, and an admin change through the second node.
    for (let i = 0; i < RETARGET_WINDOW_BLOCKS + 2; i++) {
      const c = await issue(i % 2 === 0 ? a! : b!, { miner_pubkey: formatPublicKey(alice.publicKey) });
      const res = await submit(i % 3 === 0 ? b! : a!, mine(c, alice));
      expect(res.statusCode, res.body).toBe(200);
      if (i === 5) {
        const changed = await b!.inject({
          method: 'POST',
          url: '/admin/config',
          headers: { authorization: `Bearer ${b!.adminToken}` },
          payload: { hexchain_difficulty: 96 },
        });
        expect(changed.statusCode, changed.body).toBe(200);
      }
    }
    // 14 blocks, one retarget, one admin change: the chain's 16 writes, on both nodes.
    await until(
      'both nodes at the last event',
      () => a!.events.seq === start + 16 && b!.events.seq === start + 16,
    );
    const first = `${a!.events.epoch}-${start + 1}`;
    const fromA = a!.events.since(first);
    const fromB = b!.events.since(first);
    expect(fromA).toEqual(fromB);
    // After the first block: the next five, the admin change, six more, the retarget, two more.
    expect('frames' in fromA && fromA.frames.map((f) => /event: (\w+)/.exec(f)?.[1])).toEqual([
      ...Array(5).fill('block'),
      'difficulty',
      ...Array(6).fill('block'),
      'retarget',
      'block',
      'block',
    ]);
    // A reader of node 0 at any id resumes on node 1 with what followed, never a reset.
    const middle = `${a!.events.epoch}-${start + 9}`;
    expect(b!.events.since(middle)).toEqual(a!.events.since(middle));
  });

  it('lists the live peers and says which node answered', async () => {
    const [a, b] = await cluster(2);
    const urlA = await a!.listen({ host: '127.0.0.1', port: 0 });
    const urlB = await b!.listen({ host: '127.0.0.1', port: 0 });
    const peers = (await a!.inject('/network/peers')).json();
    expect(peers).toMatchObject({ mode: 'cluster', total_nodes: 2, synced: true, node_id: 'node-0' });
    expect(peers.peers).toHaveLength(1);
    expect(peers.peers[0]).toMatchObject({ node_id: 'node-1', url: urlB, synced: true, latency_ms: null });
    const status = await fetch(`${urlA}/status`);
    expect(status.headers.get('x-tm-node-id')).toBe('node-0');
    expect(await status.json()).toMatchObject({ node_id: 'node-0', peer_network_mode: 'cluster' });
    const metrics = (
      await b!.inject({ url: '/admin/metrics', headers: { authorization: `Bearer ${b!.adminToken}` } })
    ).json();
    expect(metrics.node_id).toBe('node-1');
    // A node that stops cleanly leaves the list at once.
    await b!.close();
    const after = (await a!.inject('/network/peers')).json();
    expect(after).toMatchObject({ total_nodes: 1, peers: [] });
  });

  it('drops a node whose heartbeats stopped (a crash) after LIVE_MS, and says which node is behind', async () => {
    let later = 0;
    const [a, b] = await cluster(2, [Date.now, () => Date.now() + later]);
    await a!.listen({ host: '127.0.0.1', port: 0 });
    await b!.listen({ host: '127.0.0.1', port: 0 });
    expect((await b!.inject('/network/peers')).json()).toMatchObject({ total_nodes: 2 });
    // Node 1's clock runs LIVE_MS ahead: node 0's last heartbeat is now too old.
    later = LIVE_MS + 1_000;
    expect((await b!.inject('/network/peers')).json()).toMatchObject({ total_nodes: 1, peers: [] });
  });
});
