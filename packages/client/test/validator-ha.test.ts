import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  fromHex,
  type HexBlock,
  type KeyPair,
  keyPairFromSecret,
  solveBlock,
  taggedHash,
  targetFromHex,
  utf8,
} from '@tensormine/protocol';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtEntry } from '../../../test-support/services.ts';
import {
  HA_START_TIMEOUT_MS,
  HA_STEP_TIMEOUT_MS,
  HA_TEST_TIMEOUT_MS,
  WAIT_TIMEOUT_MS,
} from '../../../test-support/timeouts.ts';
import { openPostgresStorage } from '../../validator/src/store/postgres.js';
import {
  type HaCluster,
  type PatroniMember,
  startHaCluster,
  until,
} from '../../validator/test/support/ha.js';
import {
  createClient,
  type HexWork,
  NetworkError,
  Signer,
  solveWork,
  type TensormineClient,
  TensormineError,
  TimeoutError,
  ValidatorError,
} from '../src/index.js';

/**
 * Losing the database primary loses nothing (docs/cluster.md, "High availability"): two
 * validator nodes behind HAProxy, PostgreSQL as a primary and a synchronous standby under
 * Patroni (scripts/ha-up.sh, the operators' script). Miners, pool members and a payer work
 * through the SDK while the primary's postmaster is killed with SIGKILL; the standby takes
 * over; once the old primary is back as the synchronous standby, the new primary is killed the
 * same way. Then every operation a client saw acknowledged is stored exactly once, the supply
 * is conserved, both nodes serve the same lattice as the database holds, and the only 5xx any
 * client saw is the documented 503 service_unavailable with Retry-After.
 */

let ha: HaCluster;
let genesisDir: string;
const clients: TensormineClient[] = [];

const key = (name: string): KeyPair => keyPairFromSecret(taggedHash('ha-test/key', utf8(name)));
const ALICE = key('alice');
const BOB = key('bob');
const hexOf = (k: KeyPair) => Buffer.from(k.publicKey).toString('hex');

beforeAll(async () => {
  genesisDir = mkdtempSync(join(tmpdir(), 'ha-genesis-'));
  const genesisFile = join(genesisDir, 'genesis.json');
  writeFileSync(
    genesisFile,
    JSON.stringify({
      reserve: '0',
      pools: [],
      allocations: [{ pubkey: hexOf(ALICE), token: 'PTM', amount: '100000' }],
    }),
  );
  // scripts/ha-up.sh starts the nodes from the validator's build while it is current: the run
  // makes it once if it is missing or stale.
  await builtEntry('validator');
  ha = await startHaCluster({
    env: {
      TENSORMINE_GENESIS_FILE: genesisFile,
      TENSORMINE_HEX_DIFFICULTY: '256',
      TENSORMINE_DIFFICULTY: '1',
      TENSORMINE_MAX_TENSOR_DIM: '8',
      TENSORMINE_POOL_STRATEGY: 'pplns',
      TENSORMINE_POOL_MINIMUM_STAKE: '0',
      TENSORMINE_RATE_LIMIT_PER_SECOND: '1000000',
      TENSORMINE_RATE_LIMIT_BURST: '1000000',
      TENSORMINE_KEY_RATE_LIMIT_PER_SECOND: '1000000',
      TENSORMINE_KEY_RATE_LIMIT_BURST: '1000000',
    },
  });
}, HA_TEST_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await ha?.stop();
  if (genesisDir) rmSync(genesisDir, { recursive: true, force: true });
}, HA_START_TIMEOUT_MS);

/** What the clients saw: every 5xx, and the acknowledged operations. */
class Ledger {
  readonly statuses5xx: number[] = [];
  readonly errors5xx: { code: string; retryAfterMs: number | undefined }[] = [];
  readonly blocks = new Set<string>();
  readonly shares = new Set<string>();
  /** Shares whose answer was lost, found committed when sent again (share_duplicate). */
  readonly sharesFoundCommitted = new Set<string>();
  readonly transfers = new Set<string>();
  ack(set: Set<string>, id: string): void {
    set.add(id);
  }

  /** A 5xx as a client saw it (an error thrown or retried by the SDK). */
  saw(error: unknown): void {
    if (error instanceof TensormineError && error.status !== undefined && error.status >= 500) {
      this.errors5xx.push({
        code: error.code,
        retryAfterMs: error instanceof ValidatorError ? error.retryAfterMs : undefined,
      });
    }
  }
}

function sdk(book: Ledger, signer: Signer): TensormineClient {
  const c = createClient({
    urls: [ha.url],
    signer,
    healthCheckIntervalMs: 0,
    timeoutMs: 30_000,
    // A failover takes seconds: the SDK's own retries (after Retry-After) ride it out.
    retry: { retries: 10, baseDelayMs: 250, maxDelayMs: 4_000 },
  });
  c.on('response', (e) => {
    if (e.status >= 500) book.statuses5xx.push(e.status);
  });
  c.on('retry', (e) => book.saw(e.error));
  clients.push(c);
  return c;
}

/** A failure that leaves the operation's outcome to be found out by sending it again. */
function transient(error: unknown): boolean {
  return (
    error instanceof NetworkError ||
    error instanceof TimeoutError ||
    (error instanceof ValidatorError && error.code === 'service_unavailable')
  );
}

async function pauseAfter(error: unknown): Promise<void> {
  const ms = error instanceof ValidatorError ? (error.retryAfterMs ?? 500) : 500;
  await new Promise((resolve) => setTimeout(resolve, ms));
}

interface Unresolved {
  readonly kind: 'block' | 'share';
  /** A share's pow hash (known before it is sent). */
  readonly id?: string;
  readonly send: () => Promise<string>;
}

/** The workload: solo miners, a pool member's shares, transfers; until `stop()`. */
function workload(book: Ledger) {
  let stopped = false;
  const unresolved: Unresolved[] = [];

  const miner = async (name: string) => {
    const signer = Signer.fromSecretKey(key(name).secretKey);
    const client = sdk(book, signer);
    await client.miners.register();
    while (!stopped) {
      let work: HexWork;
      try {
        work = (await client.getWork({ minerPubkey: false })) as HexWork;
      } catch (error) {
        book.saw(error);
        if (!transient(error)) throw error;
        await pauseAfter(error);
        continue;
      }
      const solution = solveWork(work, signer, { maxIterations: 5_000_000 })!;
      const send = async () => (await client.submitWork(work, solution)).result.block_hash;
      try {
        book.ack(book.blocks, await send());
      } catch (error) {
        book.saw(error);
        if (
          error instanceof ValidatorError &&
          ['coordinate_occupied', 'challenge_expired'].includes(error.code)
        )
          continue;
        if (!transient(error)) throw error;
        unresolved.push({ kind: 'block', send });
      }
    }
  };

  const member = async (name: string) => {
    const signer = Signer.fromSecretKey(key(name).secretKey);
    const client = sdk(book, signer);
    await client.miners.register();
    await client.pool.join({ stake_amount: '0', hashrate: 1 });
    while (!stopped) {
      let work: HexWork;
      try {
        work = (await client.getWork()) as HexWork;
      } catch (error) {
        book.saw(error);
        if (!transient(error)) throw error;
        await pauseAfter(error);
        continue;
      }
      const c = work.challenge;
      const solved = solveBlock({
        challengeHash: fromHex(c.challenge_hash, 32, 'challenge_hash'),
        coord: c.coord,
        minerPublicKey: signer.publicKey,
        target: targetFromHex(c.share_target!),
        maxIterations: 5_000_000,
      })!;
      const body = signer.buildHexSubmission({
        challengeId: c.id,
        challengeHash: fromHex(c.challenge_hash, 32, 'challenge_hash'),
        coord: c.coord,
        nonce: solved.nonce,
      });
      const send = async () => (await client.pool.share(body)).pow_hash;
      try {
        book.ack(book.shares, await send());
      } catch (error) {
        book.saw(error);
        if (error instanceof ValidatorError && error.code === 'share_stale') continue;
        if (!transient(error)) throw error;
        unresolved.push({ kind: 'share', id: body.block.pow_hash, send });
      }
    }
  };

  const payer = async () => {
    const client = sdk(book, Signer.fromSecretKey(ALICE.secretKey));
    while (!stopped) {
      try {
        const done = await client.economy.transfer({ to: hexOf(BOB), token: 'PTM', amount: '1' });
        book.ack(book.transfers, done.transfer_id);
      } catch (error) {
        book.saw(error);
        if (!transient(error)) throw error;
        // The SDK resent the identical signed request until it gave up: if it committed, the
        // ledger shows it (checked below through conservation), but it was not acknowledged.
        await pauseAfter(error);
      }
    }
  };

  const running = Promise.all([miner('miner-a'), miner('miner-b'), member('member'), payer()]);
  return {
    async stop(): Promise<Unresolved[]> {
      stopped = true;
      await running;
      return unresolved;
    },
    /** Rejects as soon as a worker failed (an unexpected error). */
    running,
  };
}

async function json<T>(url: string): Promise<T> {
  // A plain request, not through the SDK's failover: a node that does not answer is named.
  const res = await fetch(url).catch((error: unknown) => {
    throw new Error(`${url}: ${(error as Error).message} (${String((error as Error).cause)})`, {
      cause: error,
    });
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function lattice(url: string): Promise<HexBlock[]> {
  const blocks: HexBlock[] = [];
  let cursor: string | null = null;
  do {
    const page: { blocks: HexBlock[]; next_cursor: string | null } = await json(
      `${url}/api/hexchain/lattice?limit=500${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    blocks.push(...page.blocks);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return blocks;
}

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: ha.databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe('validator nodes behind HAProxy, PostgreSQL primary and synchronous standby under Patroni', () => {
  it('loses no acknowledged operation when the primary is killed, twice', {
    timeout: HA_TEST_TIMEOUT_MS,
  }, async () => {
    const book = new Ledger();
    const work = workload(book);
    const failed = work.running.then(
      () => undefined,
      (error: unknown) => error,
    );
    const progressed = (before: { blocks: number; shares: number; transfers: number }, by: number) => () =>
      book.blocks.size >= before.blocks + by &&
      book.shares.size >= before.shares + by &&
      book.transfers.size >= before.transfers + by;
    const counts = () => ({
      blocks: book.blocks.size,
      shares: book.shares.size,
      transfers: book.transfers.size,
    });
    const guard = async (
      what: string,
      check: () => Promise<boolean> | boolean,
      ms: number = HA_STEP_TIMEOUT_MS,
    ) => {
      try {
        await until(
          what,
          async () => {
            const error = await Promise.race([failed, Promise.resolve('running')]);
            if (error !== 'running' && error !== undefined) throw error;
            return check();
          },
          ms,
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${ha.logs()}`, { cause: error });
      }
    };
    const isSyncStandby = (m: PatroniMember) =>
      m.role === 'sync_standby' && ['running', 'streaming'].includes(m.state);
    const syncStandby = async () => (await ha.members()).some(isSyncStandby);

    // The node to kill: the one that answers as the primary (GET /primary) and that Patroni
    // lists as the leader, with a synchronous standby beside it, all seen in one check (a run
    // once saw the standby listed while no node answered 200 on /primary).
    let primary: number | undefined;
    const primaryWithStandby = async () => {
      primary = undefined;
      const members = await ha.members();
      const leader = members.find((m) => m.role === 'leader' && m.state === 'running');
      if (leader === undefined || !members.some(isSyncStandby)) return false;
      const index = await ha.primary();
      if (index === undefined || `pg${index + 1}` !== leader.name) return false;
      primary = index;
      return true;
    };

    await guard('the workload to start', progressed({ blocks: 0, shares: 0, transfers: 0 }, 3));
    for (let round = 1; round <= 2; round++) {
      await guard(`a primary with a synchronous standby (round ${round})`, primaryWithStandby);
      const killed = primary!;
      const before = counts();
      ha.kill9Postmaster(killed);
      await guard(`another primary after the kill (round ${round})`, async () => {
        const now = await ha.primary();
        return now !== undefined && now !== killed;
      });
      await guard(`writes to go on after the failover (round ${round})`, progressed(before, 3));
    }
    // The old primary is back as the synchronous standby once more.
    await guard('the killed primary to rejoin as the synchronous standby', syncStandby);
    const unresolved = await work.stop();
    console.info(
      `HA test: acknowledged ${book.blocks.size} blocks, ${book.shares.size} shares, ${book.transfers.size} transfers; ` +
        `${book.errors5xx.length} 503 answers, ${unresolved.length} outcomes found out by sending again`,
    );

    // An operation whose answer was lost is sent again, identically: the original acceptance
    // if it was committed (a share: share_duplicate), or accepted now; never a second copy.
    for (const u of unresolved) {
      for (;;) {
        try {
          const id = await u.send();
          (u.kind === 'block' ? book.blocks : book.shares).add(id);
          break;
        } catch (error) {
          book.saw(error);
          if (transient(error)) {
            await pauseAfter(error);
            continue;
          }
          if (u.kind === 'share' && error instanceof ValidatorError && error.code === 'share_duplicate') {
            book.sharesFoundCommitted.add(u.id!);
            break;
          }
          expect(error).toBeInstanceOf(ValidatorError);
          expect(['coordinate_occupied', 'challenge_expired', 'share_stale']).toContain(
            (error as ValidatorError).code,
          );
          break;
        }
      }
    }

    // No 5xx but the documented 503 service_unavailable with Retry-After.
    expect(book.statuses5xx.filter((s) => s !== 503)).toEqual([]);
    for (const e of book.errors5xx) {
      expect(e.code).toBe('service_unavailable');
      expect(e.retryAfterMs).toBeGreaterThan(0);
    }

    // Both nodes serve the lattice the database holds, with every acknowledged block.
    const [stored] = await sql<{ n: string }>('SELECT count(*) AS n FROM blocks');
    // Each node directly: both still up (a node that died in a failover fails here, with the logs).
    await guard(
      'both nodes to apply every stored block',
      async () => {
        const occupied = await Promise.all(
          ha.nodeUrls.map(
            async (u) => (await json<{ occupied: number }>(`${u}/api/hexchain/status`)).occupied,
          ),
        );
        return occupied.every((o) => o === Number(stored!.n) + 1);
      },
      WAIT_TIMEOUT_MS,
    );
    const lattices = await Promise.all(ha.nodeUrls.map(lattice));
    const hashes = lattices.map((l) => l.map((b) => b.block_hash));
    expect(hashes[1]).toEqual(hashes[0]);
    const held = new Set(hashes[0]);
    for (const hash of book.blocks) expect(held.has(hash), `acknowledged block ${hash} lost`).toBe(true);

    // Exactly once: one reward per block, two ledger entries per transfer, one row per share.
    expect(
      await sql(
        "SELECT ref FROM ledger_entries WHERE type = 'mining_reward' GROUP BY ref HAVING count(*) > 1",
      ),
    ).toEqual([]);
    const transferRows = await sql<{ ref: string; n: string }>(
      "SELECT ref, count(*) AS n FROM ledger_entries WHERE type = 'transfer' GROUP BY ref",
    );
    for (const row of transferRows) expect(Number(row.n), `transfer ${row.ref}`).toBe(2);
    const storedTransfers = new Set(transferRows.map((r) => r.ref));
    for (const id of book.transfers)
      expect(storedTransfers.has(id), `acknowledged transfer ${id} lost`).toBe(true);
    const memberKey = hexOf(key('member'));
    const shareRows = await sql<{ pow_hash: string }>(
      'SELECT pow_hash FROM pool_shares WHERE pubkey = $1 AND stale = 0',
      [memberKey],
    );
    const storedShares = new Set(shareRows.map((r) => r.pow_hash));
    for (const hash of book.shares)
      expect(storedShares.has(hash), `acknowledged share ${hash} lost`).toBe(true);
    for (const hash of book.sharesFoundCommitted) expect(storedShares.has(hash)).toBe(true);
    // (Every stored share was acknowledged, or found committed when sent again.)
    expect(storedShares.size).toBe(new Set([...book.shares, ...book.sharesFoundCommitted]).size);

    // The supply is conserved: every token's balances add up to what was issued.
    const storage = await openPostgresStorage({ url: ha.databaseUrl, poolSize: 1 });
    try {
      const { supply, issued } = await storage.read(async (tx) => ({
        supply: await tx.economy.supply(),
        issued: await tx.economy.issued(),
      }));
      expect(supply).toEqual(issued);
      expect(supply.get('PTM')).toBeGreaterThan(0n);
    } finally {
      await storage.close();
    }
    // Alice paid exactly what Bob received, one PTM per stored transfer.
    const balance = async (k: KeyPair) =>
      (
        await json<{ balances: { token: string; available: string }[] }>(`${ha.url}/balances/${hexOf(k)}`)
      ).balances.find((b) => b.token === 'PTM')?.available;
    expect(await balance(BOB)).toBe(String(storedTransfers.size));
  });
});
