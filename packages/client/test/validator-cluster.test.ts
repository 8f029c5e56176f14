import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type HexBlock,
  type HexStatus,
  type KeyPair,
  keyPairFromSecret,
  signRequest,
  taggedHash,
  utf8,
} from '@tensormine/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresServer } from '../../../test-support/postgres.ts';
import { builtEntry, testPostgres } from '../../../test-support/services.ts';
import { SLOW_TEST_TIMEOUT_MS, WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { waitFor, within } from '../../../test-support/wait.ts';
import {
  NODE_ADMIN_TOKEN,
  type Node,
  startNode,
  stopNodes,
} from '../../validator/test/support/cluster-nodes.js';
import {
  createClient,
  type HexWork,
  NetworkError,
  Signer,
  solveWork,
  type TensormineClient,
  type TensorWork,
  ValidatorError,
} from '../src/index.js';

/**
 * Several validator processes (the real bin) on one real PostgreSQL (docs/cluster.md): miners
 * spread over them with the SDK's failover, the first block wins at a coordinate across nodes,
 * replays through another node are refused, each node's lattice and event stream follow the
 * others' blocks by notification, and a node killed with SIGKILL under load loses no
 * acknowledged write and applies nothing twice.
 */

let pg: PostgresServer;
/** How the nodes start: from the validator's build (made once per run) while it is current. */
let entry: 'built' | 'source';
const clients: TensormineClient[] = [];

beforeAll(async () => {
  [pg, entry] = await Promise.all([testPostgres(), builtEntry('validator')]);
});

function node(nodeId: string, databaseUrl: string, env: Record<string, string>): Promise<Node> {
  return startNode({ nodeId, databaseUrl, entry, env });
}

afterAll(async () => {
  await pg?.stop();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await stopNodes();
});

const HEX = { TENSORMINE_HEX_DIFFICULTY: '16', TENSORMINE_DIFFICULTY: '1', TENSORMINE_MAX_TENSOR_DIM: '8' };

async function cluster(n: number): Promise<Node[]> {
  const databaseUrl = await pg.createDatabase();
  // All at once on a new database: they race to create the schema and write the genesis.
  return Promise.all(Array.from({ length: n }, (_, i) => node(`node-${i}`, databaseUrl, HEX)));
}

function sdk(urls: readonly string[], signer?: Signer, protocol?: '4.0' | '4.1'): TensormineClient {
  const c = createClient({
    urls,
    healthCheckIntervalMs: 0,
    timeoutMs: 10_000,
    ...(signer ? { signer } : {}),
    ...(protocol ? { protocol } : {}),
  });
  clients.push(c);
  return c;
}

function key(name: string): KeyPair {
  return keyPairFromSecret(taggedHash('cluster-test/key', utf8(name)));
}

async function json<T>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as T };
}

async function hexStatus(node: Node): Promise<HexStatus> {
  return (await json<HexStatus>(`${node.url}/api/hexchain/status`)).body;
}

/** Waits (the suite's generous bound: a loaded machine is slow, never wrong) until `check` holds. */
function until(what: string, check: () => Promise<boolean>): Promise<void> {
  return waitFor(check, what);
}

/** Every mining reward of the shared ledger (all pages). */
async function rewards(node: Node): Promise<{ ref: string }[]> {
  const entries: { ref: string }[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { entries: { ref: string }[]; next_cursor: string | null } } = await json(
      `${node.url}/ledger/entries?type=mining_reward&limit=500${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    entries.push(...page.body.entries);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return entries;
}

/** Every block of the lattice as a node serves it (all pages). */
async function lattice(node: Node): Promise<HexBlock[]> {
  const blocks: HexBlock[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { blocks: HexBlock[]; next_cursor: string | null } } = await json(
      `${node.url}/api/hexchain/lattice?limit=500${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    blocks.push(...page.body.blocks);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return blocks;
}

describe('validator nodes on one PostgreSQL', () => {
  it('serves miners spread over three nodes with failover; every node sees every block, peers are live', {
    timeout: SLOW_TEST_TIMEOUT_MS,
  }, async () => {
    const nodes = await cluster(3);
    const urls = nodes.map((n) => n.url);
    const miners = [0, 1, 2].map((i) => {
      const signer = Signer.generate();
      // Each miner prefers another node: the load is spread; the others are its failover list.
      return { signer, client: sdk([...urls.slice(i), ...urls.slice(0, i)], signer) };
    });
    for (const m of miners) await m.client.miners.register();
    const accepted: string[] = [];
    await Promise.all(
      miners.map(async (m) => {
        for (let i = 0; i < 8; i++) {
          const work = (await m.client.getWork()) as HexWork;
          const solution = solveWork(work, m.signer, { maxIterations: 1_000_000 });
          try {
            const done = await m.client.submitWork(work, solution!);
            accepted.push(done.result.block_hash);
          } catch (error) {
            // A cell taken meanwhile by another miner (through another node): the first block won.
            if (!(error instanceof ValidatorError && error.code === 'coordinate_occupied')) throw error;
          }
        }
      }),
    );
    expect(accepted.length).toBeGreaterThan(0);
    // Every node's lattice holds every accepted block (pushed, well under the 5 s heartbeat).
    await until('every node to hold every block', async () =>
      (await Promise.all(nodes.map(hexStatus))).every((s) => s.occupied === accepted.length + 1),
    );
    const lattices = await Promise.all(nodes.map(lattice));
    for (const l of lattices) expect(l.map((b) => b.block_hash).sort()).toEqual([...accepted].sort());
    // One reward per block in the shared ledger.
    expect(await rewards(nodes[0]!)).toHaveLength(accepted.length);

    const peers = await json<{
      mode: string;
      total_nodes: number;
      synced: boolean;
      node_id: string;
      peers: { node_id: string; url: string }[];
    }>(`${urls[1]}/network/peers`);
    expect(peers.body).toMatchObject({ mode: 'cluster', total_nodes: 3, synced: true, node_id: 'node-1' });
    expect(peers.body.peers.map((p) => [p.node_id, p.url]).sort()).toEqual([
      ['node-0', urls[0]],
      ['node-2', urls[2]],
    ]);
    const status = await fetch(`${urls[2]}/status`);
    expect(status.headers.get('x-tm-node-id')).toBe('node-2');
    expect(await status.json()).toMatchObject({ node_id: 'node-2', peer_network_mode: 'cluster' });
    const metrics = await json<{ node_id: string; blocks_accepted: number }>(`${urls[0]}/admin/metrics`, {
      headers: { authorization: `Bearer ${NODE_ADMIN_TOKEN}` },
    });
    expect(metrics.body).toMatchObject({ node_id: 'node-0', blocks_accepted: accepted.length });
  });

  it('lets exactly one of two blocks for one cell win, sent at once through two nodes', async () => {
    const [a, b] = await cluster(2);
    const alice = Signer.generate();
    const bob = Signer.generate();
    const ca = sdk([a!.url], alice);
    const cb = sdk([b!.url], bob);
    await ca.miners.register();
    await cb.miners.register();
    for (let round = 0; round < 5; round++) {
      // One challenge naming no miner, issued by node a, solved by both keys.
      const work = (await ca.getWork({ minerPubkey: false })) as HexWork;
      const sa = solveWork(work, alice, { maxIterations: 1_000_000 })!;
      const sb = solveWork(work, bob, { maxIterations: 1_000_000 })!;
      const results = await Promise.allSettled([
        ca.submitWork(work, sa),
        cb.submitWork({ ...work, endpoint: b!.url }, sb),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'coordinate_occupied' });
    }
    const rewards = await json<{ entries: unknown[] }>(`${b!.url}/ledger/entries?type=mining_reward`);
    expect(rewards.body.entries).toHaveLength(5);
  });

  it('refuses a proof or a signed request replayed through another node', async () => {
    const [a, b] = await cluster(2);
    const signer = Signer.generate();
    // Node a first; node b is in the list so that a call may be pinned to it.
    const ca = sdk([a!.url, b!.url], signer, '4.0');
    await ca.miners.register();
    const v40 = (await ca.getWork()) as TensorWork;
    const solution = solveWork(v40, signer, { maxIterations: 500_000 })!;
    const first = await ca.submitWork(v40, solution);
    // The identical proof through node b: the original acceptance (credited once), not a second reward.
    const again = await ca.submitWork(v40, solution, { endpoint: b!.url });
    expect(again.result).toEqual(first.result);
    // Another valid nonce for the same challenge and key through node b: refused.
    const other = solveWork(v40, signer, { maxIterations: 500_000, startNonce: solution.nonce + 1 })!;
    await expect(ca.submitWork(v40, other, { endpoint: b!.url })).rejects.toMatchObject({
      code: 'proof_replayed',
    });
    const ledger = await json<{ entries: unknown[] }>(`${b!.url}/ledger/entries?type=mining_reward`);
    expect(ledger.body.entries).toHaveLength(1);

    // A signed request accepted by node a, replayed as it is to node b.
    const k = key('replay');
    const body = JSON.stringify({ pubkey: Buffer.from(k.publicKey).toString('hex'), device_type: 'native' });
    const headers = {
      ...signRequest({ method: 'POST', path: '/devices/register', body, secretKey: k.secretKey }),
      'content-type': 'application/json',
    };
    const ok = await json(`${a!.url}/devices/register`, { method: 'POST', headers, body });
    expect(ok.status).toBe(200);
    const replay = await json<{ code: string }>(`${b!.url}/devices/register`, {
      method: 'POST',
      headers,
      body,
    });
    expect(replay.status).toBe(409);
    expect(replay.body.code).toBe('request_replayed');
  });

  it('keeps the economy conserved: concurrent transfers through two nodes never overdraw an account', async () => {
    const alice = key('economy-alice');
    const bob = key('economy-bob');
    const hexOf = (k: KeyPair) => Buffer.from(k.publicKey).toString('hex');
    const dir = mkdtempSync(join(tmpdir(), 'cluster-genesis-'));
    const genesisFile = join(dir, 'genesis.json');
    writeFileSync(
      genesisFile,
      JSON.stringify({
        reserve: '0',
        pools: [],
        allocations: [{ pubkey: hexOf(alice), token: 'PTM', amount: '10' }],
      }),
    );
    try {
      const databaseUrl = await pg.createDatabase();
      const env = { ...HEX, TENSORMINE_GENESIS_FILE: genesisFile };
      const a = await node('node-0', databaseUrl, env);
      const b = await node('node-1', databaseUrl, env);
      // 40 transfers of 1 PTM from a 10 PTM balance, half through each node, all at once.
      const results = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const path = '/transfer';
          const body = JSON.stringify({ from: hexOf(alice), to: hexOf(bob), token: 'PTM', amount: '1' });
          const headers = {
            ...signRequest({ method: 'POST', path, body, secretKey: alice.secretKey }),
            'content-type': 'application/json',
          };
          return json<{ code?: string }>(`${(i % 2 === 0 ? a : b).url}${path}`, {
            method: 'POST',
            headers,
            body,
          });
        }),
      );
      const ok = results.filter((r) => r.status === 200).length;
      const refused = results.filter((r) => r.status !== 200);
      expect(ok).toBe(10);
      for (const r of refused) expect(r.body.code).toBe('insufficient_balance');
      const balance = async (k: KeyPair) =>
        (
          await json<{ balances: { token: string; available: string }[] }>(`${b.url}/balances/${hexOf(k)}`)
        ).body.balances.find((x) => x.token === 'PTM')?.available;
      expect(await balance(alice)).toBe('0');
      expect(await balance(bob)).toBe('10');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("pushes a block accepted by one node on another node's event stream", async () => {
    const [a, b] = await cluster(2);
    const signer = Signer.generate();
    const ca = sdk([a!.url], signer);
    await ca.miners.register();
    const events = sdk([b!.url]);
    const abort = new AbortController();
    const seen: unknown[] = [];
    let opened!: () => void;
    const open = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const reading = (async () => {
      try {
        for await (const e of events.hexchain.events({
          signal: abort.signal,
          onOpen: () => opened(),
        })) {
          if (e.event === 'block') seen.push(e.data);
        }
      } catch {
        // aborted
      }
    })();
    await within(open, "node b's event stream open");
    const work = (await ca.getWork()) as HexWork;
    const done = await ca.submitWork(work, solveWork(work, signer, { maxIterations: 1_000_000 })!);
    await until("the block on node b's stream", async () => seen.length > 0);
    expect(seen[0]).toMatchObject({ block: { block_hash: done.result.block_hash } });
    abort.abort();
    await reading;
  });

  it('resumes the event stream on another node after its node dies: every block, no reset', {
    timeout: SLOW_TEST_TIMEOUT_MS,
  }, async () => {
    const [a, b] = await cluster(2);
    const signer = Signer.generate();
    const miner = sdk([b!.url], signer);
    await miner.miners.register();
    // The reader prefers node a, and fails over to node b.
    const reader = sdk([a!.url, b!.url]);
    const abort = new AbortController();
    const seen: { event: string; id: string; hash?: string }[] = [];
    let opened!: () => void;
    const open = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const reading = (async () => {
      try {
        for await (const e of reader.hexchain.events({
          signal: abort.signal,
          reconnectDelayMs: 50,
          onOpen: () => opened(),
        })) {
          seen.push({
            event: e.event,
            id: e.id,
            ...(e.event === 'block' ? { hash: e.data.block.block_hash } : {}),
          });
        }
      } catch {
        // aborted
      }
    })();
    const mineOne = async () => {
      const work = (await miner.getWork()) as HexWork;
      return (await miner.submitWork(work, solveWork(work, signer, { maxIterations: 1_000_000 })!)).result
        .block_hash;
    };
    await within(open, "node a's event stream open");
    const mined = [await mineOne()];
    await until('the first block on the stream', async () => seen.length > 0);
    await a!.kill9();
    for (let i = 0; i < 3; i++) mined.push(await mineOne());
    await until('every block on the stream', async () => seen.filter((e) => e.event === 'block').length >= 4);
    abort.abort();
    await reading;
    expect(seen.some((e) => e.event === 'reset')).toBe(false);
    expect(seen.filter((e) => e.event === 'block').map((e) => e.hash)).toEqual(mined);
    // Consecutive ids of one stream.
    const seqs = seen.map((e) => Number(e.id.split('-').at(-1)));
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
  });

  it('survives kill -9 of a node under load: miners fail over, no acknowledged block is lost, none is paid twice', {
    timeout: SLOW_TEST_TIMEOUT_MS,
  }, async () => {
    const nodes = await cluster(3);
    const urls = nodes.map((n) => n.url);
    const miners = [0, 1, 2, 3, 4, 5].map((i) => {
      const signer = Signer.generate();
      return { signer, client: sdk([...urls.slice(i % 3), ...urls.slice(0, i % 3)], signer) };
    });
    for (const m of miners) await m.client.miners.register();
    const acknowledged = new Map<string, string>(); // block hash -> node that answered
    const unknown: { work: HexWork; nonce: number; signer: Signer; client: TensormineClient }[] = [];
    let failovers = 0;
    for (const m of miners) m.client.on('failover', () => failovers++);
    // Node 0 is killed once 6 blocks were acknowledged, and the miners go on until 6 more were,
    // through the survivors: counts, not a time window, so a slow machine makes a longer test.
    const beforeKill = 6;
    const afterKill = 6;
    let killed = false;
    let acknowledgedAtKill = 0;
    const enough = () => killed && acknowledged.size >= acknowledgedAtKill + afterKill && failovers > 0;
    const deadline = performance.now() + WAIT_TIMEOUT_MS;
    await Promise.all(
      miners.map(async (m) => {
        while (!enough() && performance.now() < deadline) {
          let work: HexWork;
          try {
            work = (await m.client.getWork()) as HexWork;
          } catch (error) {
            if (error instanceof NetworkError) continue;
            throw error;
          }
          const solution = solveWork(work, m.signer, { maxIterations: 1_000_000 })!;
          try {
            const done = await m.client.submitWork(work, solution, { retries: 0 });
            acknowledged.set(done.result.block_hash, done.endpoint);
            if (!killed && acknowledged.size >= beforeKill) {
              killed = true;
              acknowledgedAtKill = acknowledged.size;
              void nodes[0]!.kill9();
            }
          } catch (error) {
            if (error instanceof ValidatorError && error.code === 'coordinate_occupied') continue;
            if (error instanceof ValidatorError && error.code === 'challenge_not_found') throw error;
            // The node died with the submission in flight: its fate is unknown.
            unknown.push({ work, nonce: solution.nonce, signer: m.signer, client: m.client });
          }
        }
      }),
    );
    expect(killed).toBe(true);
    expect(failovers).toBeGreaterThan(0);
    expect(
      acknowledged.size,
      `blocks acknowledged after the kill (within ${WAIT_TIMEOUT_MS} ms)`,
    ).toBeGreaterThanOrEqual(acknowledgedAtKill + afterKill);
    const survivors = nodes.slice(1);
    // A submission whose answer was lost: the identical block through a surviving node gives
    // the original acceptance if it was committed, or is accepted now; never a second reward.
    for (const u of unknown) {
      try {
        const done = await u.client.submitWork(u.work, { nonce: u.nonce }, { endpoint: survivors[0]!.url });
        acknowledged.set(done.result.block_hash, done.endpoint);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidatorError);
        expect(['coordinate_occupied', 'challenge_expired']).toContain((error as ValidatorError).code);
      }
    }
    expect(acknowledged.size).toBeGreaterThan(5);
    await until('the survivors to agree', async () => {
      const s = await Promise.all(survivors.map(hexStatus));
      return s.every((x) => x.occupied === s[0]!.occupied);
    });
    const held = await lattice(survivors[1]!);
    const hashes = new Set(held.map((b) => b.block_hash));
    for (const hash of acknowledged.keys())
      expect(hashes.has(hash), `acknowledged block ${hash} lost`).toBe(true);
    // Nothing applied twice: one reward per stored block.
    const paid = await rewards(survivors[0]!);
    expect(paid.length).toBe(held.length);
    expect(new Set(paid.map((e) => e.ref))).toEqual(hashes);
    // The dead node leaves the peers once its heartbeat expires.
    const peers = await json<{ total_nodes: number }>(`${survivors[0]!.url}/network/peers`);
    expect(peers.body.total_nodes).toBeLessThanOrEqual(3);
  });
});
