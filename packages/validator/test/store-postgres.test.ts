import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { waitFor, within } from '../../../test-support/wait.ts';
import { StorageError } from '../src/store/errors.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from '../src/store/migrations.js';
import {
  isConnectionError,
  isNotPrimary,
  openPostgresStorage,
  type PostgresStorage,
  redactDatabaseUrl,
  translate,
} from '../src/store/postgres.js';
import { migratePostgres, postgresSchemaVersion } from '../src/store/postgres-migrations.js';
import { InsufficientBalanceError, type Storage } from '../src/store/types.js';
import { describeStorageConformance, poolMember } from './storage-conformance.js';
import { type PostgresServer, testPostgres, uniqueDatabaseName } from './support/postgres.js';

/**
 * The storage on a real PostgreSQL server (the test run's, test-support/services.ts):
 * the conformance suite, migrations, notifications across two storages on one database,
 * conservation under concurrent transfers from two storages, and connections lost and back.
 */

let server: PostgresServer;
const TEMPLATE = uniqueDatabaseName('tm_migrated');

beforeAll(async () => {
  server = await testPostgres();
  // A migrated database to copy: each conformance test gets a fresh copy.
  const storage = await openPostgresStorage({ url: await server.createDatabase(TEMPLATE) });
  await storage.close();
});

afterAll(async () => {
  await server?.stop();
});

describeStorageConformance('postgres', async () =>
  openPostgresStorage({ url: await server.createDatabase(undefined, { template: TEMPLATE }), poolSize: 4 }),
);

const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);
const T = 1_700_000_000;

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Waits (the suite's bound) until `check` holds. */
function eventually(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  return waitFor(check, what, { intervalMs: 25 });
}

describe('PostgreSQL migrations', () => {
  it('migrates an empty database to the latest version, then re-opens it without applying anything', async () => {
    const url = await server.createDatabase();
    const first = await openPostgresStorage({ url });
    expect(first.migration).toEqual({
      from: 0,
      to: LATEST_SCHEMA_VERSION,
      applied: MIGRATIONS.map((m) => m.version),
    });
    await first.transaction((tx) => tx.meta.set('seed', 'kept'));
    await first.close();
    const second = await openPostgresStorage({ url });
    expect(second.migration).toEqual({ from: LATEST_SCHEMA_VERSION, to: LATEST_SCHEMA_VERSION, applied: [] });
    expect(await second.read((tx) => tx.meta.get('seed'))).toBe('kept');
    await second.close();
  });

  it('applies each step once when several processes open a new database at once', async () => {
    const url = await server.createDatabase();
    const storages = await Promise.all([1, 2, 3].map(() => openPostgresStorage({ url, poolSize: 2 })));
    const applied = storages.flatMap((s) => s.migration.applied).sort();
    expect(applied).toEqual(MIGRATIONS.map((m) => m.version));
    await Promise.all(storages.map((s) => s.close()));
  });

  it('refuses a database written by a newer validator, and rolls back a failed step alone', async () => {
    const url = await server.createDatabase();
    await admin(url, async (client) => {
      const steps: Migration[] = [
        { version: 1, name: 'one', sql: 'CREATE TABLE a (x BIGINT);' },
        { version: 2, name: 'two', sql: 'CREATE TABLE b (x BIGINT); INSERT INTO nowhere VALUES (1);' },
      ];
      await expect(migratePostgres(client, { location: 'db', migrations: steps })).rejects.toMatchObject({
        code: 'migration_failed',
      });
      expect(await postgresSchemaVersion(client)).toBe(1);
      const tables = await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'b'");
      expect(tables.rows[0].n).toBe(0);
      await client.query('UPDATE tensormine_schema SET version = 99');
    });
    const error = await openPostgresStorage({ url }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('schema_too_new');
  });

  it('keeps ledger entries and blocks immutable, as on SQLite', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const storage = await openPostgresStorage({ url });
    await storage.transaction((tx) =>
      tx.ledger.apply([{ type: 'genesis', pubkey: A, token: 'TMN', amount: 5n, timestamp: T, ref: null }]),
    );
    await storage.close();
    await admin(url, async (client) => {
      await expect(client.query("UPDATE ledger_entries SET amount = '6'")).rejects.toThrow(/append-only/);
      await expect(client.query('DELETE FROM ledger_entries')).rejects.toThrow(/append-only/);
      await expect(client.query("UPDATE balances SET amount = '-1'")).rejects.toThrow(/check constraint/);
    });
  });
});

describe('PostgreSQL executor', () => {
  it('translates ? and ?N placeholders outside string literals', () => {
    expect(translate("SELECT ? , '?', ?").text).toBe("SELECT $1 , '?', $2");
    expect(translate('SELECT ?1 = ?1 AND ?2').text).toBe('SELECT $1 = $1 AND $2');
  });

  it('logs a URL without its password', () => {
    expect(redactDatabaseUrl('postgres://tm:s3cret@db.example:5432/tensormine?sslmode=require')).toBe(
      'postgres://tm@db.example:5432/tensormine?sslmode=require',
    );
    expect(redactDatabaseUrl('postgresql://h/db?password=s3cret&x=1')).toBe('postgresql://h/db?x=1');
    expect(redactDatabaseUrl('not a url')).not.toContain('not a url');
  });

  it('refuses a URL that is not postgres://', async () => {
    await expect(openPostgresStorage({ url: 'mysql://h/db' })).rejects.toMatchObject({
      code: 'invalid_value',
    });
  });
});

describe('two storages on one PostgreSQL database', () => {
  let url: string;
  let one: Storage;
  let two: Storage;

  beforeAll(async () => {
    url = await server.createDatabase(undefined, { template: TEMPLATE });
    one = await openPostgresStorage({ url, poolSize: 4, applicationName: 'node-one' });
    two = await openPostgresStorage({ url, poolSize: 4, applicationName: 'node-two' });
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('delivers a notification to the listeners of both, only once committed', async () => {
    const got: string[][] = [[], []];
    const stops = await Promise.all(
      [one, two].map((s, i) => s.listen('cluster_blocks', (payload) => got[i]!.push(payload))),
    );
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const pending = one.transaction(async (tx) => {
      await tx.notify('cluster_blocks', 'from-one');
      await gate;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(got).toEqual([[], []]); // queued, not delivered before COMMIT
    release();
    await pending;
    await expect(
      two.transaction(async (tx) => {
        await tx.notify('cluster_blocks', 'rolled-back');
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await two.transaction((tx) => tx.notify('cluster_blocks', 'from-two'));
    await eventually('both notifications on both nodes', () => got.every((g) => g.length === 2));
    expect(got).toEqual([
      ['from-one', 'from-two'],
      ['from-one', 'from-two'],
    ]);
    await Promise.all(stops.map((stop) => stop()));
  });

  it('conserves money under concurrent transfers from both, and never goes negative', async () => {
    const accounts = [A, B, 'cc'.repeat(32), 'dd'.repeat(32)];
    await one.transaction((tx) =>
      tx.ledger.apply(
        accounts.map((pubkey) => ({
          type: 'genesis',
          pubkey,
          token: 'TMN',
          amount: 100n,
          timestamp: T,
          ref: null,
        })),
      ),
    );
    let refused = 0;
    const transfer = async (storage: Storage, i: number) => {
      const from = accounts[i % 4]!;
      const to = accounts[(i * 7 + 1) % 4]!;
      const amount = BigInt(10 + (i % 45));
      try {
        await storage.transaction(async (tx) => {
          // Read, then debit: the read-check-write that SERIALIZABLE keeps exact across nodes.
          const balance = await tx.ledger.balance(from, 'TMN');
          if (balance < amount) throw new InsufficientBalanceError(from, 'TMN', balance, amount);
          await tx.ledger.apply([
            { type: 'transfer', pubkey: from, token: 'TMN', amount: -amount, timestamp: T, ref: `t${i}` },
            { type: 'transfer', pubkey: to, token: 'TMN', amount, timestamp: T, ref: `t${i}` },
          ]);
          await tx.counters.add('transfers', 1);
        });
      } catch (error) {
        if (!(error instanceof InsufficientBalanceError)) throw error;
        refused++;
      }
    };
    await Promise.all(Array.from({ length: 120 }, (_, i) => transfer(i % 2 === 0 ? one : two, i)));
    const { balances, supply, count, entries } = await two.read(async (tx) => ({
      balances: await Promise.all(accounts.map((a) => tx.ledger.balance(a, 'TMN'))),
      supply: (await tx.economy.supply()).get('TMN'),
      count: await tx.counters.get('transfers'),
      entries: await tx.ledger.list({ type: 'transfer', limit: 1000 }),
    }));
    expect(supply).toBe(400n);
    expect(balances.reduce((a, b) => a + b, 0n)).toBe(400n);
    for (const balance of balances) expect(balance >= 0n).toBe(true);
    expect(count + refused).toBe(120);
    expect(entries).toHaveLength(2 * count);
    const sumOfEntries = entries.reduce((sum, e) => sum + e.amount, 0n);
    expect(sumOfEntries).toBe(0n);
  });

  it("records a group of shares without waiting for a member's row another transaction holds", async () => {
    const [m1, m2] = ['c1'.repeat(32), 'c2'.repeat(32)];
    const member = (pubkey: string) => poolMember(pubkey);
    const toRecord = (pubkey: string, n: number) => ({
      share: {
        pubkey,
        challengeId: 'hex-busy',
        powHash: `b${n}`.padEnd(64, '0'),
        difficulty: 16n,
        blockDifficulty: 4096n,
        stale: false,
        createdAtMs: T * 1000,
      },
      from: member(pubkey),
      next: { ...member(pubkey), vardiffShares: 1, lastShareAt: T },
    });
    await one.transaction(async (tx) => {
      await tx.hexChallenges.insert({
        id: 'hex-busy',
        serial: 9_000,
        coord: { q: 1, r: -1, s: 0 },
        slot: 9_000,
        slotHash: '78'.repeat(32),
        challengeHash: '9a'.repeat(32),
        target: `0000${'ff'.repeat(30)}`,
        difficulty: 4096n,
        entropy: 'bc'.repeat(32),
        parents: [],
        depth: 1,
        minerPubkey: m1,
        issuedAt: T,
        expiresAt: T + 300,
      });
      await tx.pool.putMember(member(m1));
      await tx.pool.putMember(member(m2));
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holding = one.transaction(
      async (tx) => {
        await tx.pool.getMember(m1, { lock: true });
        locked();
        await gate;
      },
      { isolation: 'row-locks' },
    );
    await isLocked;
    // m1's row is held: its share is busy (nothing written), m2's is recorded, without waiting.
    expect(
      await two.transaction((tx) => tx.pool.recordShares([toRecord(m1, 1), toRecord(m2, 2)]), {
        isolation: 'row-locks',
      }),
    ).toEqual([
      { busy: true, inserted: false, advanced: false },
      { busy: false, inserted: true, advanced: true },
    ]);
    release();
    await holding;
    const shares = await two.read((tx) => tx.pool.sharesBefore(1e12, 0, 100));
    expect(shares.filter((x) => x.challengeId === 'hex-busy').map((x) => x.pubkey)).toEqual([m2]);
    expect((await two.read((tx) => tx.pool.getMember(m1)))?.sharesAccepted).toBe(0);
    // Once it is free, the same share is recorded.
    expect(await two.transaction((tx) => tx.pool.recordShares([toRecord(m1, 1)]))).toEqual([
      { busy: false, inserted: true, advanced: true },
    ]);
  });

  it('runs row-locks transfers from both without a re-run: they wait on the accounts they share', async () => {
    const accounts = ['e1', 'e2', 'e3', 'e4'].map((p) => p.repeat(32));
    await one.transaction((tx) =>
      tx.ledger.apply(
        accounts.map((pubkey) => ({
          type: 'genesis',
          pubkey,
          token: 'TMN',
          amount: 1000n,
          timestamp: T,
          ref: null,
        })),
      ),
    );
    const storages = [one, two] as PostgresStorage[];
    const before = storages.map((s) => s.stats);
    let refused = 0;
    await Promise.all(
      Array.from({ length: 160 }, async (_, i) => {
        const from = accounts[i % 4]!;
        const to = accounts[(i * 3 + 1) % 4]!;
        const amount = BigInt(5 + (i % 90));
        try {
          await storages[i % 2]!.transaction(
            async (tx) => {
              // ledger.apply locks both accounts, then reads them: the check sees every commit.
              await tx.ledger.apply([
                { type: 'transfer', pubkey: from, token: 'TMN', amount: -amount, timestamp: T, ref: `r${i}` },
                { type: 'transfer', pubkey: to, token: 'TMN', amount, timestamp: T, ref: `r${i}` },
              ]);
              await tx.counters.add('row_lock_transfers', 1);
            },
            { isolation: 'row-locks' },
          );
        } catch (error) {
          if (!(error instanceof InsufficientBalanceError)) throw error;
          refused++;
        }
      }),
    );
    const after = storages.map((s) => s.stats);
    expect(after.map((a, i) => a.reruns - before[i]!.reruns)).toEqual([0, 0]);
    const { balances, count } = await two.read(async (tx) => ({
      balances: await Promise.all(accounts.map((a) => tx.ledger.balance(a, 'TMN'))),
      count: await tx.counters.get('row_lock_transfers'),
    }));
    expect(balances.reduce((a, b) => a + b, 0n)).toBe(4000n);
    for (const balance of balances) expect(balance >= 0n).toBe(true);
    expect(count + refused).toBe(160);
  });

  it('refuses an unknown isolation', async () => {
    expect(() => one.transaction(async () => undefined, { isolation: 'dirty' as never })).toThrow(
      expect.objectContaining({ code: 'invalid_value' }),
    );
  });

  it('answers storage_busy, having written nothing, when a transaction loses every run to another node', async () => {
    const busy = await openPostgresStorage({
      url,
      poolSize: 2,
      maxAttempts: 1,
      applicationName: 'node-busy',
    });
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let read!: () => void;
      const hasRead = new Promise<void>((resolve) => {
        read = resolve;
      });
      const loser = busy.transaction(async (tx) => {
        await tx.meta.get('busy-test');
        read();
        await gate;
        await tx.meta.set('busy-test', 'loser');
      });
      await hasRead;
      await two.transaction((tx) => tx.meta.set('busy-test', 'winner'));
      release();
      const error = await loser.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageError);
      expect(error).toMatchObject({ code: 'storage_busy' });
      expect(await one.read((tx) => tx.meta.get('busy-test'))).toBe('winner');
    } finally {
      await busy.close();
    }
  });

  it('lets exactly one of two nodes take a hexchain coordinate', async () => {
    const insertBlock = (storage: Storage, miner: string) =>
      storage.transaction(async (tx) => {
        const serial = await tx.hexChallenges.nextSerial();
        const id = `hc-${miner.slice(0, 2)}-${serial}`;
        await tx.hexChallenges.insert({
          id,
          serial,
          coord: { q: 1, r: -1, s: 0 },
          slot: 1,
          slotHash: '00'.repeat(32),
          challengeHash: '11'.repeat(32),
          target: 'ff'.repeat(32),
          difficulty: 1n,
          entropy: '22'.repeat(32),
          parents: [],
          depth: 1,
          minerPubkey: miner,
          issuedAt: T,
          expiresAt: T + 60,
        });
        const taken = (await tx.blocks.get({ q: 1, r: -1, s: 0 })) !== undefined;
        if (taken) return false;
        const appended = await tx.blocks.append({
          coord: { q: 1, r: -1, s: 0 },
          blockHash: `${miner.slice(0, 2)}`.repeat(32),
          powHash: '33'.repeat(32),
          depth: 1,
          parents: [],
          minerPubkey: miner,
          nonce: 1,
          challengeId: id,
          slot: 1,
          difficulty: 1n,
          timestampMs: T * 1000,
        });
        return appended !== undefined;
      });
    const results = await Promise.all([
      insertBlock(one, A),
      insertBlock(two, B),
      insertBlock(one, 'ee'.repeat(32)),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await one.read((tx) => tx.blocks.head())).height).toBe(1);
  });
});

describe('PostgreSQL connections lost and restored', () => {
  it('re-runs a transaction whose connection was terminated, and listens again after the listener was', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const storage = await openPostgresStorage({ url, poolSize: 2, applicationName: 'victim' });
    try {
      const got: string[] = [];
      await storage.listen('restored', (payload) => got.push(payload));
      let reconnects = 0;
      storage.onListenReconnect(() => reconnects++);
      await storage.transaction((tx) => tx.meta.set('before', '1'));

      // Terminate every session of the storage (pooled and listening) from outside.
      const terminate = () =>
        admin(url, async (client) => {
          const result = await client.query(
            "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'victim%' AND datname = current_database()) t",
          );
          return result.rows[0].n as number;
        });
      expect(await terminate()).toBeGreaterThanOrEqual(2);

      // The pool's idle connections are dead; the next transactions open new ones.
      await storage.transaction((tx) => tx.meta.set('after', '1'));
      expect(await storage.read((tx) => tx.meta.get('after'))).toBe('1');

      // A connection terminated in the middle of a transaction: it is re-run on another.
      let attempts = 0;
      await storage.transaction(async (tx) => {
        attempts++;
        await tx.meta.set('middle', String(attempts));
        if (attempts === 1) {
          await terminate();
          await tx.meta.get('before'); // fails: the connection is gone, COMMIT is never sent
        }
      });
      expect(attempts).toBe(2);
      expect(await storage.read((tx) => tx.meta.get('middle'))).toBe('2');

      await eventually('the listener to reconnect', () => reconnects >= 1);
      // The second termination may have hit the re-opened listener too (then it reconnects
      // again, and what is sent meanwhile is lost, as documented): send until one arrives.
      await eventually('a notification after the reconnection', async () => {
        await storage.transaction((tx) => tx.notify('restored', 'again'));
        await new Promise((resolve) => setTimeout(resolve, 200));
        return got.includes('again');
      });
    } finally {
      await storage.close();
    }
  });

  it('answers storage_unavailable, having written nothing, while the server is read-only (a demoted primary)', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const database = new URL(url).pathname.slice(1);
    const storage = await openPostgresStorage({
      url,
      poolSize: 2,
      maxAttempts: 3,
      unavailableRetryMs: 200,
      applicationName: 'demoted',
    });
    try {
      await storage.transaction((tx) => tx.meta.set('kept', '1'));
      // New sessions of this database start read-only; the pool's open ones are ended.
      await admin(url, async (client) => {
        await client.query(`ALTER DATABASE "${database}" SET default_transaction_read_only = on`);
        await client.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'demoted%'",
        );
      });
      for (const isolation of ['serializable', 'row-locks'] as const) {
        const error = await storage
          .transaction(
            async (tx) => {
              await tx.meta.set('lost', isolation);
              await tx.counters.add('lost', 1);
            },
            { isolation },
          )
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StorageError);
        expect(error).toMatchObject({ code: 'storage_unavailable' });
      }
      // Reads still work on a read-only server.
      expect(await storage.read((tx) => tx.meta.get('kept'))).toBe('1');
      await admin(server.url, (client) =>
        client.query(`ALTER DATABASE "${database}" RESET default_transaction_read_only`),
      );
      await admin(server.url, (client) =>
        client.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'demoted%'",
        ),
      );
      expect(
        await storage.read(async (tx) => [await tx.meta.get('lost'), await tx.counters.get('lost')]),
      ).toEqual([undefined, 0]);
      // Writable again: it works at once.
      await storage.transaction((tx) => tx.meta.set('back', '1'));
    } finally {
      await storage.close();
    }
  });
});

describe('reads requested together', () => {
  it('share a snapshot; a read that throws does not disturb the others, nor a failing statement', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const storage = await openPostgresStorage({ url, poolSize: 2 });
    try {
      await storage.transaction((tx) => tx.meta.set('k', 'v'));
      const reads = await Promise.allSettled([
        storage.read((tx) => tx.meta.get('k')),
        storage.read(async () => {
          throw new Error('mine');
        }),
        // A statement that fails aborts the shared snapshot: the others run again alone.
        storage.read((tx) => tx.ledger.list({ limit: 1.5 })),
        storage.read(async (tx) => [await tx.meta.get('k'), await tx.counters.get('none')]),
        ...Array.from({ length: 20 }, (_, i) => storage.read(async (tx) => `${await tx.meta.get('k')}${i}`)),
      ]);
      expect(reads[0]).toEqual({ status: 'fulfilled', value: 'v' });
      expect(reads[1]).toMatchObject({ status: 'rejected', reason: { message: 'mine' } });
      expect(reads[2]).toMatchObject({ status: 'rejected', reason: { code: 'invalid_value' } });
      expect(reads[3]).toEqual({ status: 'fulfilled', value: ['v', 0] });
      expect(reads.slice(4).map((r) => (r as PromiseFulfilledResult<string>).value)).toEqual(
        Array.from({ length: 20 }, (_, i) => `v${i}`),
      );
      // A write between two reads is seen by the later one (the parked snapshot is ended first).
      await storage.transaction((tx) => tx.meta.set('k', 'w'));
      expect(await storage.read((tx) => tx.meta.get('k'))).toBe('w');
    } finally {
      await storage.close();
    }
  });

  it('runs the reads of a batch whose connection broke again alone, with one connection in all', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const storage = await openPostgresStorage({
      url,
      poolSize: 1,
      applicationName: 'lost-batch',
      unavailableRetryMs: WAIT_TIMEOUT_MS,
    });
    try {
      await storage.transaction((tx) => tx.meta.set('k', 'v'));
      // The batch's session is terminated under its first read (a failover): both reads run
      // again alone, on the one connection the pool may open, which the batch gave back first.
      let cut = false;
      const reads = await within(
        Promise.all([
          storage.read(async (tx) => {
            if (!cut) {
              cut = true;
              await admin(url, (client) =>
                client.query(
                  "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lost-batch' AND datname = current_database()",
                ),
              );
            }
            return tx.meta.get('k');
          }),
          storage.read((tx) => tx.meta.get('k')),
        ]),
        'the reads of a batch whose connection broke',
      );
      expect(reads).toEqual(['v', 'v']);
      expect(cut).toBe(true);
    } finally {
      await storage.close();
    }
  });

  it('survives the parked connection of a finished batch breaking (a failover) and reads on another', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const storage = await openPostgresStorage({ url, poolSize: 2, applicationName: 'parked' });
    try {
      await storage.transaction((tx) => tx.meta.set('k', 'v'));
      // Terminates the storage's session as soon as it is idle in its read transaction after
      // the read's statement: the connection parked for the next batch. (Polled by the server,
      // so the moment is not missed; pg_stat_clear_snapshot, or the loop would see one snapshot.)
      const terminated = admin(url, (client) =>
        client.query(`DO $$
          DECLARE victim int;
          BEGIN
            LOOP
              PERFORM pg_stat_clear_snapshot();
              SELECT pid INTO victim FROM pg_stat_activity
                WHERE application_name = 'parked' AND datname = current_database()
                  AND state = 'idle in transaction' AND query LIKE 'SELECT%';
              EXIT WHEN victim IS NOT NULL;
              PERFORM pg_sleep(0.001);
            END LOOP;
            PERFORM pg_terminate_backend(victim);
          END $$`),
      );
      // Reads until one was parked and terminated (unheard, its 'error' would end the process).
      let done = false;
      void terminated.then(() => {
        done = true;
      });
      await waitFor(async () => {
        expect(await storage.read((tx) => tx.meta.get('k'))).toBe('v');
        return done;
      }, 'the parked read connection to be terminated');
      await terminated;
      // The next reads run on another connection.
      expect(await storage.read((tx) => tx.meta.get('k'))).toBe('v');
      await storage.transaction((tx) => tx.meta.set('k', 'w'));
      expect(await storage.read((tx) => tx.meta.get('k'))).toBe('w');
    } finally {
      await storage.close();
    }
  });

  it('survives connections cut while idle, fresh ones included (a failover), under reads and writes', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const storage = await openPostgresStorage({
      url,
      poolSize: 4,
      applicationName: 'cut',
      unavailableRetryMs: WAIT_TIMEOUT_MS,
    });
    try {
      await storage.transaction((tx) => tx.meta.set('k', 'v'));
      let stop = false;
      const worker = async (w: number) => {
        for (let i = 0; !stop; i++) {
          if (i % 3 === 0) {
            // A COMMIT cut on its way is the documented storage_unavailable (outcome unknown).
            await storage
              .transaction((tx) => tx.meta.set(`w${w}`, String(i)), { isolation: 'row-locks' })
              .catch((error: unknown) => {
                if (!(error instanceof StorageError && error.code === 'storage_unavailable')) throw error;
              });
          } else expect(await storage.read((tx) => tx.meta.get('k'))).toBe('v');
        }
      };
      const workers = Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
      workers.catch(() => undefined); // awaited below
      // Sessions idle on the server: pooled ones, and ones just opened and handed out, whose
      // transaction does not listen to them yet (unheard, their 'error' would end the process).
      let cut = 0;
      try {
        await admin(url, (client) =>
          waitFor(async () => {
            const { rows } = await client.query(
              "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cut' AND state = 'idle' AND datname = current_database()) t",
            );
            cut += rows[0].n as number;
            return cut >= 300;
          }, '300 idle sessions cut'),
        );
      } finally {
        // Also when the wait failed: the workers stop, so that the failure is reported as it
        // is instead of as the test's time-out (they would keep the storage busy forever).
        stop = true;
      }
      await workers;
      await storage.transaction((tx) => tx.meta.set('k', 'w'));
      expect(await storage.read((tx) => tx.meta.get('k'))).toBe('w');
    } finally {
      await storage.close();
    }
  });

  it('re-runs a write refused by a server that takes no writes (a standby during a failover) on a new connection', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const db = new URL(url).pathname.slice(1);
    const storage = await openPostgresStorage({ url, poolSize: 1, unavailableRetryMs: WAIT_TIMEOUT_MS });
    try {
      // The pooled connection is read-write; connections opened from now on are read-only,
      // like those a proxy still sends to a primary being demoted.
      await admin(server.url, (c) => c.query(`ALTER DATABASE ${db} SET default_transaction_read_only = on`));
      await admin(server.url, (c) =>
        c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [db]),
      );
      let attempts = 0;
      await storage.transaction(async (tx) => {
        attempts++;
        // The server becomes writable again while the first attempt runs on its read-only
        // connection (SQLSTATE 25006): that connection must be discarded, not reused.
        if (attempts === 1) {
          await admin(server.url, (c) => c.query(`ALTER DATABASE ${db} RESET default_transaction_read_only`));
        }
        await tx.meta.set('written', String(attempts));
      });
      expect(attempts).toBeGreaterThanOrEqual(2);
      expect(await storage.read((tx) => tx.meta.get('written'))).toBe(String(attempts));
    } finally {
      await storage.close();
    }
  });

  it('gives a write up as storage_unavailable, having written nothing, when the server takes no writes for too long', async () => {
    const url = await server.createDatabase(undefined, { template: TEMPLATE });
    const db = new URL(url).pathname.slice(1);
    const storage = await openPostgresStorage({ url, poolSize: 2, unavailableRetryMs: 300 });
    try {
      await admin(server.url, async (c) => {
        await c.query(`ALTER DATABASE ${db} SET default_transaction_read_only = on`);
        await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [db]);
      });
      const error = await storage.transaction((tx) => tx.meta.set('never', '1')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageError);
      expect(error).toMatchObject({ code: 'storage_unavailable' });
      expect((error as Error).message).toContain('nothing was written');
      // Reads still work on a read-only server.
      expect(await storage.read((tx) => tx.meta.get('never'))).toBeUndefined();
    } finally {
      await storage.close();
    }
  });

  it('classifies the failover errors of PostgreSQL as a lost connection or a server that is not the primary', () => {
    const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const code of ['08006', '08001', '57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET']) {
      expect(isConnectionError(pgError(code)), code).toBe(true);
    }
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isNotPrimary(pgError('25006', 'cannot execute INSERT in a read-only transaction'))).toBe(true);
    expect(isNotPrimary(pgError('0A000', 'cannot use serializable mode in a hot standby'))).toBe(true);
    for (const [code, message] of [
      ['0A000', 'cannot insert multiple commands into a prepared statement'],
      ['23505', 'duplicate key'],
      ['40001', 'could not serialize access'],
    ] as const) {
      expect(isNotPrimary(pgError(code, message)), code).toBe(false);
      expect(isConnectionError(pgError(code, message)), code).toBe(false);
    }
  });
});
