import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { umask } from 'node:process';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { StorageError } from '../src/store/errors.js';
import {
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  type Migration,
  migrate,
  schemaVersion,
} from '../src/store/migrations.js';
import { configureConnection, openSqliteStorage } from '../src/store/sqlite.js';
import type { BlockRecord, ChallengeRecord, HexChallengeRecord } from '../src/store/types.js';
import { describeStorageConformance } from './storage-conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'tensormine-store-'));
let files = 0;

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeStorageConformance('sqlite :memory:', () => openSqliteStorage({ path: ':memory:' }));
describeStorageConformance('sqlite file', () =>
  openSqliteStorage({ path: join(dir, `db-${files++}.sqlite`) }),
);

const KEY = 'aa'.repeat(32);
const T = 1_700_000_000;

describe('SqliteStorage on a file', () => {
  it('keeps every acknowledged write across close and reopen', async () => {
    const path = join(dir, 'durable', 'validator.db');
    const first = await openSqliteStorage({ path });
    const serials = await first.transaction(async (tx) => {
      await tx.meta.set('validator_seed', '11'.repeat(32));
      await tx.counters.add('proofs_valid', 3);
      await tx.ledger.apply([
        { type: 'mining_reward', pubkey: KEY, token: 'TMN', amount: 2n ** 90n, timestamp: T, ref: 'ch-0' },
        {
          type: 'transfer',
          pubkey: KEY,
          token: 'TMN',
          amount: -5n,
          timestamp: T + 1,
          ref: null,
          idempotencyKey: 't1',
        },
      ]);
      await tx.devices.upsert({
        deviceId: 'd1',
        pubkey: KEY,
        deviceType: 'esp32',
        port: 9000,
        registeredAt: T,
        lastSeen: T,
        callbackAddress: null,
        callbackMode: 'none',
        hashrate: null,
      });
      await tx.miners.record(KEY, { proofsAccepted: 1, seenAt: T });
      const serial = await tx.challenges.nextSerial();
      await tx.challenges.insert(challenge(serial));
      const hexSerial = await tx.hexChallenges.nextSerial();
      await tx.hexChallenges.insert(hexChallenge(hexSerial));
      await tx.blocks.append(block());
      return [serial, hexSerial];
    });
    await first.close();

    const second = await openSqliteStorage({ path });
    await second.read(async (tx) => {
      expect(await tx.meta.get('validator_seed')).toBe('11'.repeat(32));
      expect(await tx.counters.get('proofs_valid')).toBe(3);
      expect(await tx.ledger.balance(KEY, 'TMN')).toBe(2n ** 90n - 5n);
      expect(await tx.ledger.rewardsTotal(KEY, 'TMN')).toBe(2n ** 90n);
      expect((await tx.ledger.list({ pubkey: KEY, limit: 10 })).map((e) => e.idempotencyKey)).toEqual([
        't1',
        undefined,
      ]);
      expect((await tx.devices.get(KEY))?.port).toBe(9000);
      expect((await tx.miners.get(KEY))?.proofsAccepted).toBe(1);
      expect(await tx.challenges.get('ch-0')).toEqual(challenge(0));
      expect(await tx.hexChallenges.get('hex-0')).toEqual(hexChallenge(0));
      expect(await tx.blocks.all()).toEqual([block()]);
    });
    // Serials continue after a restart instead of starting again at 0.
    expect(serials).toEqual([0, 0]);
    expect(await second.transaction((tx) => tx.challenges.nextSerial())).toBe(1);
    expect(await second.transaction((tx) => tx.hexChallenges.nextSerial())).toBe(1);
    await second.close();
    const third = await openSqliteStorage({ path });
    expect(await third.transaction((tx) => tx.challenges.nextSerial())).toBe(2);
    await third.close();
  });

  it('uses WAL, synchronous=FULL, foreign keys and a busy timeout', async () => {
    const path = join(dir, 'pragmas.db');
    const storage = await openSqliteStorage({ path, busyTimeoutMs: 1234 });
    const other = new DatabaseSync(path);
    expect(other.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    other.close();
    await storage.close();

    const db = new DatabaseSync(path);
    configureConnection(db, { location: path, file: true, busyTimeoutMs: 1234 });
    expect({ ...db.prepare('PRAGMA synchronous').get() }).toEqual({ synchronous: 2 }); // FULL
    expect({ ...db.prepare('PRAGMA foreign_keys').get() }).toEqual({ foreign_keys: 1 });
    expect({ ...db.prepare('PRAGMA busy_timeout').get() }).toEqual({ timeout: 1234 });
    db.close();
  });

  it('keeps nothing a read writes: a statement that writes inside read() fails it with read_only', async () => {
    const storage = await openSqliteStorage({ path: join(dir, 'read-only.db') });
    await storage.transaction((tx) => tx.counters.add('x.kept', 1));
    // A repository that wrote through its read executor (bypassing scope.write): the engine's
    // change count catches it, the read fails and its write is rolled back.
    type WithScope = {
      scope: { read(): { prepare(sql: string): { run(...p: unknown[]): Promise<unknown> } } };
    };
    const sneaky = storage.read(async (tx) => {
      const db = (tx.pool as unknown as WithScope).scope.read();
      await db.prepare("INSERT INTO counters (name, value) VALUES ('x.sneaky', 1)").run();
      return 'answered';
    });
    await expect(sneaky).rejects.toMatchObject({ code: 'read_only' });
    expect(await storage.read((tx) => tx.counters.list('x.'))).toEqual({ 'x.kept': 1 });
    // A read after it, and a transaction, work as before.
    await storage.transaction((tx) => tx.counters.add('x.kept', 1));
    expect(await storage.read((tx) => tx.counters.get('x.kept'))).toBe(2);
    await storage.close();
  });

  it('takes a page cache size in MiB (a bulk load), refusing one that is not a positive integer', async () => {
    const path = join(dir, 'cache.db');
    for (const cacheSizeMiB of [0, -1, 1.5, Number.NaN]) {
      await expect(openSqliteStorage({ path, cacheSizeMiB })).rejects.toMatchObject({
        code: 'invalid_value',
        message: `cacheSizeMiB: expected a positive integer, got ${String(cacheSizeMiB)}`,
      });
    }
    const storage = await openSqliteStorage({ path, cacheSizeMiB: 64 });
    await storage.transaction((tx) => tx.meta.set('k', 'v'));
    expect(await storage.read((tx) => tx.meta.get('k'))).toBe('v');
    await storage.close();
  });

  it('creates the missing directories (mode 0700) and the file (mode 0600)', async () => {
    const parent = join(dir, 'created', 'deeper');
    const path = join(parent, 'validator.db');
    const storage = await openSqliteStorage({ path });
    await storage.transaction((tx) => tx.meta.set('k', 'v'));
    expect(statSync(parent).mode & 0o777).toBe(0o700 & ~umask());
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    expect(storage.location).toBe(path);
    await storage.close();
  });

  it('refuses writes that break the schema instead of reporting a conflict', async () => {
    const storage = await openSqliteStorage({ path: join(dir, 'constraints.db') });
    // A proof for a challenge that was never issued is a bug, not a duplicate.
    await expect(
      storage.transaction((tx) =>
        tx.proofs.insert({
          challengeId: 'nope',
          pubkey: KEY,
          nonce: 1,
          acceptedAt: T,
          ledgerEntryId: 1,
          txSig: 'ee',
        }),
      ),
    ).rejects.toThrow('FOREIGN KEY constraint failed');
    await storage.transaction((tx) => tx.hexChallenges.insert(hexChallenge(0)));
    await storage.transaction((tx) => tx.blocks.append(block()));
    // The same block hash at a free coordinate is a bug in the caller.
    await expect(
      storage.transaction((tx) => tx.blocks.append({ ...block(), coord: { q: 0, r: 1, s: -1 } })),
    ).rejects.toThrow('UNIQUE constraint failed: blocks.block_hash');
    await expect(
      storage.transaction((tx) =>
        tx.blocks.append({ ...block(), coord: { q: 1, r: 1, s: 1 }, blockHash: 'ab'.repeat(32) }),
      ),
    ).rejects.toThrow('CHECK constraint failed');
    await expect(storage.transaction((tx) => tx.counters.add('x', 1.5))).rejects.toThrow(
      'counters.add: delta: expected an integer, got 1.5',
    );
    await expect(
      storage.transaction((tx) =>
        tx.ledger.apply([
          { type: 'mining_reward', pubkey: KEY, token: 'TMN', amount: 1n, timestamp: 1.5, ref: null },
        ]),
      ),
    ).rejects.toThrow('ledger.apply: entries[0].timestamp: expected an integer, got 1.5');
    await storage.close();
  });

  it('keeps ledger entries and blocks append-only', async () => {
    const path = join(dir, 'append-only.db');
    const storage = await openSqliteStorage({ path });
    await storage.transaction(async (tx) => {
      await tx.ledger.apply([
        { type: 'mining_reward', pubkey: KEY, token: 'TMN', amount: 1n, timestamp: T, ref: null },
      ]);
      await tx.hexChallenges.insert(hexChallenge(0));
      await tx.blocks.append(block());
    });
    await storage.close();
    const db = new DatabaseSync(path);
    expect(() => db.exec("UPDATE ledger_entries SET amount = '1000'")).toThrow(
      'ledger entries are append-only',
    );
    expect(() => db.exec('DELETE FROM ledger_entries')).toThrow('ledger entries are append-only');
    expect(() => db.exec("UPDATE blocks SET miner_pubkey = 'x'")).toThrow('blocks are immutable');
    expect(() => db.exec('DELETE FROM blocks')).toThrow('blocks are immutable');
    expect(() => db.exec("UPDATE balances SET amount = '-1'")).toThrow('CHECK constraint failed');
    db.close();
  });
});

describe('schema migrations', () => {
  it('brings a new database to the latest version, and reopening applies nothing', async () => {
    const path = join(dir, 'migrations-fresh.db');
    const storage = await openSqliteStorage({ path });
    expect(storage.schemaVersion).toBe(LATEST_SCHEMA_VERSION);
    await storage.close();
    const db = new DatabaseSync(path);
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    expect(migrate(db, { location: path })).toEqual({
      from: LATEST_SCHEMA_VERSION,
      to: LATEST_SCHEMA_VERSION,
      applied: [],
    });
    db.close();
    const again = await openSqliteStorage({ path });
    expect(again.schemaVersion).toBe(LATEST_SCHEMA_VERSION);
    await again.close();
  });

  it('numbers the steps 1, 2, 3...', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it('refuses a database written by a newer validator, and leaves it untouched', async () => {
    const path = join(dir, 'migrations-future.db');
    const db = new DatabaseSync(path);
    db.exec(`PRAGMA user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    db.close();
    const opening = openSqliteStorage({ path });
    await expect(opening).rejects.toThrow(
      new StorageError(
        'schema_too_new',
        `the database ${path} has schema version ${LATEST_SCHEMA_VERSION + 1}, but this validator knows versions up to ` +
          `${LATEST_SCHEMA_VERSION}: it was written by a newer @tensormine/validator; upgrade the validator or use another data directory`,
      ),
    );
    await expect(opening).rejects.toMatchObject({ code: 'schema_too_new' });
    const after = new DatabaseSync(path);
    expect(schemaVersion(after)).toBe(LATEST_SCHEMA_VERSION + 1);
    expect(after.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get()).toEqual({
      n: 0,
    });
    after.close();
  });

  it('upgrades an older database step by step, each step in its own transaction', () => {
    const steps: Migration[] = [
      { version: 1, name: 'one', sql: 'CREATE TABLE a (x INTEGER) STRICT;' },
      { version: 2, name: 'two', sql: 'CREATE TABLE b (x INTEGER) STRICT; INSERT INTO a VALUES (2);' },
      {
        version: 3,
        name: 'three',
        sql: 'CREATE TABLE c (x INTEGER) STRICT; INSERT INTO nowhere VALUES (1);',
      },
    ];
    const db = new DatabaseSync(':memory:');
    expect(migrate(db, { location: 'mem', migrations: steps.slice(0, 1) })).toEqual({
      from: 0,
      to: 1,
      applied: [1],
    });
    expect(() => migrate(db, { location: 'mem', migrations: steps })).toThrow(
      'schema migration 3 (three) of mem failed: no such table: nowhere',
    );
    // Step 2 committed; step 3 left nothing behind.
    expect(schemaVersion(db)).toBe(2);
    expect(db.prepare('SELECT x FROM a').all()).toEqual([{ x: 2 }]);
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'c'").get()).toBeUndefined();
    expect(db.isTransaction).toBe(false);
    const fixed = [
      ...steps.slice(0, 2),
      { version: 3, name: 'three', sql: 'CREATE TABLE c (x INTEGER) STRICT;' },
    ];
    expect(migrate(db, { location: 'mem', migrations: fixed })).toEqual({ from: 2, to: 3, applied: [3] });
    db.close();
  });

  it('refuses a list of steps that is not numbered 1, 2, 3...', () => {
    const db = new DatabaseSync(':memory:');
    expect(() => migrate(db, { location: 'mem', migrations: [{ version: 2, name: 'x', sql: '' }] })).toThrow(
      'migration 0: expected version 1, got 2',
    );
    db.close();
  });
});

function challenge(serial: number): ChallengeRecord {
  return {
    id: `ch-${serial}`,
    serial,
    slot: 7,
    slotHash: '12'.repeat(32),
    deviceType: 'native',
    difficulty: 3,
    dim: 8,
    entropy: '34'.repeat(32),
    challengeHash: '56'.repeat(32),
    issuedAt: T,
    expiresAt: T + 60,
  };
}

function hexChallenge(serial: number): HexChallengeRecord {
  return {
    id: `hex-${serial}`,
    serial,
    coord: { q: 1, r: -1, s: 0 },
    slot: 7,
    slotHash: '78'.repeat(32),
    challengeHash: '9a'.repeat(32),
    target: 'ff'.repeat(32),
    difficulty: 2n ** 65n,
    entropy: 'bc'.repeat(32),
    parents: [{ coord: { q: 0, r: 0, s: 0 }, blockHash: '00'.repeat(32), depth: 0 }],
    depth: 1,
    minerPubkey: null,
    issuedAt: T,
    expiresAt: T + 60,
  };
}

function block(): BlockRecord {
  return {
    coord: { q: 1, r: -1, s: 0 },
    blockHash: 'de'.repeat(32),
    powHash: '00'.repeat(32),
    depth: 1,
    parents: [{ q: 0, r: 0, s: 0 }],
    minerPubkey: KEY,
    nonce: 42,
    challengeId: 'hex-0',
    slot: 7,
    difficulty: 2n ** 65n,
    timestampMs: T * 1000,
    height: 1,
  };
}
