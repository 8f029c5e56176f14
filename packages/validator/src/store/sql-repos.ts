import type { Dialect } from './dialect.js';
import { StorageError } from './errors.js';
import { sqlEconomyRepos } from './sql-economy.js';
import { SqlPoolRepo } from './sql-pool.js';
import { SqlRequestNonceRepo } from './sql-request-nonces.js';
import {
  type AcceptedProof,
  type Balance,
  type BlockRecord,
  type BlockRepo,
  type ChallengeRecord,
  type ChallengeRepo,
  type CoordRecord,
  type CounterRepo,
  type DeviceRecord,
  type DeviceRepo,
  type EconomyRepos,
  type HexChallengeRecord,
  type HexChallengeRepo,
  type HexParentRecord,
  InsufficientBalanceError,
  type LedgerEntry,
  type LedgerEntryType,
  type LedgerFilter,
  type LedgerRepo,
  type MetaRepo,
  type MinerRepo,
  type MinerStats,
  type NewLedgerEntry,
  type PoolRepo,
  type ProofRepo,
  type RequestNonceRepo,
  type StorageTx,
} from './types.js';

/**
 * The repositories of the storage, written once over a small asynchronous SQL executor
 * ({@link SqlExecutor}) that both adapters implement: node:sqlite (sqlite.ts) and PostgreSQL
 * (postgres.ts). The SQL is the common subset of both dialects (`?` placeholders, `ON CONFLICT`
 * upserts, `RETURNING`, `SAVEPOINT`); what really differs lives in the executors (placeholder
 * syntax, how a 64-bit integer is decoded) and in the schema (migrations.ts, {@link Dialect}).
 * Each `tx` is bound to one transaction (a {@link Scope}) and refuses to work once that
 * transaction has ended.
 */

/** A value bound to a placeholder. */
export type SqlValue = string | number | bigint | null;

/** One prepared statement of an executor (prepared lazily and cached by the executor). */
export interface SqlStatement {
  /** The first row, or undefined. */
  get(...params: SqlValue[]): Promise<Row | undefined>;
  all(...params: SqlValue[]): Promise<Row[]>;
  /** `changes`: the rows inserted, updated or deleted. */
  run(...params: SqlValue[]): Promise<{ readonly changes: number }>;
}

/**
 * What the repositories need from a connection inside a transaction. SQL uses `?` (or `?N`,
 * numbered from 1) placeholders; integer columns read back as JavaScript numbers (an executor
 * refuses a value that is not a safe integer), text as strings.
 */
export interface SqlExecutor {
  readonly dialect: Dialect;
  prepare(sql: string): SqlStatement;
  /** Runs statements without parameters (SAVEPOINT, RELEASE...). */
  exec(sql: string): Promise<void>;
}

/** A notification queued by a transaction (see `StorageTx.notify`). */
export interface QueuedNotification {
  readonly channel: string;
  readonly payload: string;
}

/** One transaction or read: whether it is still running and whether it may write. */
export class Scope {
  active = true;
  /** Notifications queued by this transaction, in order (see StorageTx.notify). */
  readonly notifications: QueuedNotification[] = [];

  constructor(
    private readonly statements: SqlExecutor,
    readonly readOnly: boolean,
  ) {}

  /** The statements, if the transaction is still running. */
  read(): SqlExecutor {
    if (!this.active) {
      throw new StorageError(
        'transaction_finished',
        'this tx belongs to a transaction that has ended: use the tx of a running transaction, and await every call inside the callback',
      );
    }
    return this.statements;
  }

  /** The statements, if the transaction is still running and may write. */
  write(what: string): SqlExecutor {
    const statements = this.read();
    if (this.readOnly) {
      throw new StorageError(
        'read_only',
        `${what} writes, but this is storage.read(): write in storage.transaction()`,
      );
    }
    return statements;
  }
}

export class SqlTx implements StorageTx {
  readonly meta: MetaRepo;
  readonly counters: CounterRepo;
  readonly ledger: LedgerRepo;
  readonly devices: DeviceRepo;
  readonly challenges: ChallengeRepo;
  readonly proofs: ProofRepo;
  readonly miners: MinerRepo;
  readonly hexChallenges: HexChallengeRepo;
  readonly blocks: BlockRepo;
  readonly economy: EconomyRepos;
  readonly pool: PoolRepo;
  readonly requestNonces: RequestNonceRepo;

  constructor(scope: Scope) {
    this.meta = new SqlMetaRepo(scope);
    this.counters = new SqlCounterRepo(scope);
    this.ledger = new SqlLedgerRepo(scope);
    this.devices = new SqlDeviceRepo(scope);
    this.challenges = new SqlChallengeRepo(scope);
    this.proofs = new SqlProofRepo(scope);
    this.miners = new SqlMinerRepo(scope);
    this.hexChallenges = new SqlHexChallengeRepo(scope);
    this.blocks = new SqlBlockRepo(scope);
    this.economy = sqlEconomyRepos(scope);
    this.pool = new SqlPoolRepo(scope);
    this.requestNonces = new SqlRequestNonceRepo(scope);
    this.#scope = scope;
  }

  readonly #scope: Scope;

  async notify(channel: string, payload: string): Promise<void> {
    checkNotification(channel, payload);
    this.#scope.write('notify');
    this.#scope.notifications.push({ channel, payload });
  }
}

/** The largest payload of a notification, in UTF-8 bytes (PostgreSQL's limit is 8000). */
export const MAX_NOTIFICATION_BYTES = 7000;

const CHANNEL = /^[a-z][a-z0-9_]{0,62}$/;

/** @throws StorageError `invalid_value` for a bad channel name or a payload over 7000 bytes. */
export function checkNotification(channel: string, payload: string): void {
  if (typeof channel !== 'string' || !CHANNEL.test(channel)) {
    throw new StorageError(
      'invalid_value',
      `notify/listen: channel must be 1 to 63 characters among a-z, 0-9 and _, starting with a letter; got ${JSON.stringify(String(channel)).slice(0, 80)}`,
    );
  }
  if (typeof payload !== 'string' || Buffer.byteLength(payload, 'utf8') > MAX_NOTIFICATION_BYTES) {
    throw new StorageError(
      'invalid_value',
      `notify: the payload must be a string of at most ${MAX_NOTIFICATION_BYTES} UTF-8 bytes`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Meta, counters, sequences
// ---------------------------------------------------------------------------------------------

class SqlMetaRepo implements MetaRepo {
  constructor(private readonly scope: Scope) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.scope.read().prepare('SELECT value FROM meta WHERE key = ?').get(key);
    return row === undefined ? undefined : text(row, 'value');
  }

  async set(key: string, value: string): Promise<void> {
    await this.scope
      .write('meta.set')
      .prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }
}

class SqlCounterRepo implements CounterRepo {
  constructor(private readonly scope: Scope) {}

  async add(name: string, delta: number): Promise<void> {
    checkInteger('counters.add: delta', delta);
    await this.scope
      .write('counters.add')
      .prepare(
        'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value',
      )
      .run(name, delta);
  }

  async get(name: string): Promise<number> {
    const row = await this.scope.read().prepare('SELECT value FROM counters WHERE name = ?').get(name);
    return row === undefined ? 0 : int(row, 'value');
  }

  async list(prefix: string): Promise<Record<string, number>> {
    // substr compares exactly (LIKE would fold case and treat _ and % as wildcards).
    const rows = await this.scope
      .read()
      .prepare(
        'SELECT name, value FROM counters WHERE substr(name, 1, length(CAST(?1 AS TEXT))) = ?1 ORDER BY name',
      )
      .all(prefix);
    // fromEntries defines own properties: a counter named __proto__ stays a counter.
    return Object.fromEntries(rows.map((row) => [text(row, 'name'), int(row, 'value')]));
  }
}

/** Takes the next value of a sequence (a row of `sequences`): never the same twice once committed. */
export async function nextSerial(scope: Scope, what: string, sequence: string): Promise<number> {
  const row = await scope
    .write(what)
    .prepare(
      'UPDATE sequences SET next_value = next_value + 1 WHERE name = ? RETURNING next_value - 1 AS serial',
    )
    .get(sequence);
  if (row === undefined) throw new StorageError('corrupt_row', `the sequence ${sequence} is missing`);
  return int(row, 'serial');
}

// ---------------------------------------------------------------------------------------------
// Ledger
// ---------------------------------------------------------------------------------------------

/** The entry types (an object, so that the compiler checks that it lists them all). */
const ENTRY_TYPES: Record<LedgerEntryType, true> = {
  genesis: true,
  mining_reward: true,
  transfer: true,
  stake: true,
  unstake: true,
  yield: true,
  penalty: true,
  swap: true,
  vault_deposit: true,
  vault_withdraw: true,
  order: true,
  pool_join: true,
  pool_leave: true,
  fee: true,
  pool_payout: true,
};

const ENTRY_COLUMNS = 'id, type, pubkey, token, amount, timestamp, ref, idempotency_key';

class SqlLedgerRepo implements LedgerRepo {
  constructor(private readonly scope: Scope) {}

  async apply(entries: readonly NewLedgerEntry[]): Promise<LedgerEntry[]> {
    const db = this.scope.write('ledger.apply');
    entries.forEach(checkEntry);
    if (entries.length === 0) return [];
    // A savepoint, so that a refused debit takes back this call's earlier entries while the
    // enclosing transaction stays usable. Nothing else runs on this transaction meanwhile: the
    // callback awaits this call.
    await db.exec('SAVEPOINT ledger_apply');
    try {
      if (db.dialect.concurrentWriters) await lockAccounts(db, entries);
      const applied: LedgerEntry[] = [];
      for (const entry of entries) applied.push(await this.#applyOne(db, entry));
      await db.exec('RELEASE ledger_apply');
      return applied;
    } catch (error) {
      await db.exec('ROLLBACK TO ledger_apply');
      await db.exec('RELEASE ledger_apply');
      throw error;
    }
  }

  async #applyOne(db: SqlExecutor, entry: NewLedgerEntry): Promise<LedgerEntry> {
    if (entry.idempotencyKey !== undefined) {
      const existing = await db
        .prepare(`SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE idempotency_key = ?`)
        .get(entry.idempotencyKey);
      if (existing !== undefined) return toEntry(existing);
    }
    const balance = await readBalance(db, entry.pubkey, entry.token);
    const next = balance + entry.amount;
    if (next < 0n) throw new InsufficientBalanceError(entry.pubkey, entry.token, balance, -entry.amount);
    await db
      .prepare(
        'INSERT INTO balances (pubkey, token, amount) VALUES (?, ?, ?) ON CONFLICT (pubkey, token) DO UPDATE SET amount = excluded.amount',
      )
      .run(entry.pubkey, entry.token, next.toString());

    const totals = await db
      .prepare('SELECT credited, debited FROM ledger_totals WHERE pubkey = ? AND token = ? AND type = ?')
      .get(entry.pubkey, entry.token, entry.type);
    const credited =
      (totals === undefined ? 0n : bigintOf(totals, 'credited')) + (entry.amount > 0n ? entry.amount : 0n);
    const debited =
      (totals === undefined ? 0n : bigintOf(totals, 'debited')) + (entry.amount < 0n ? -entry.amount : 0n);
    await db
      .prepare(
        'INSERT INTO ledger_totals (pubkey, token, type, credited, debited) VALUES (?, ?, ?, ?, ?) ' +
          'ON CONFLICT (pubkey, token, type) DO UPDATE SET credited = excluded.credited, debited = excluded.debited',
      )
      .run(entry.pubkey, entry.token, entry.type, credited.toString(), debited.toString());

    const row = await db
      .prepare(
        'INSERT INTO ledger_entries (type, pubkey, token, amount, timestamp, ref, idempotency_key) ' +
          `VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${ENTRY_COLUMNS}`,
      )
      .get(
        entry.type,
        entry.pubkey,
        entry.token,
        entry.amount.toString(),
        entry.timestamp,
        entry.ref,
        entry.idempotencyKey ?? null,
      );
    if (row === undefined) throw new StorageError('corrupt_row', 'INSERT ... RETURNING returned no row');
    return toEntry(row);
  }

  async balance(pubkey: string, token: string): Promise<bigint> {
    return readBalance(this.scope.read(), pubkey, token);
  }

  async balances(pubkey: string): Promise<Balance[]> {
    const rows = await this.scope
      .read()
      .prepare('SELECT token, amount FROM balances WHERE pubkey = ? ORDER BY token')
      .all(pubkey);
    return rows.map((row) => ({ token: text(row, 'token'), amount: bigintOf(row, 'amount') }));
  }

  async list(filter: LedgerFilter): Promise<LedgerEntry[]> {
    checkInteger('ledger.list: limit', filter.limit);
    if (filter.limit <= 0) return [];
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.pubkey !== undefined) {
      where.push('pubkey = ?');
      params.push(filter.pubkey);
    }
    if (filter.token !== undefined) {
      where.push('token = ?');
      params.push(filter.token);
    }
    if (filter.type !== undefined) {
      where.push('type = ?');
      params.push(filter.type);
    }
    if (filter.beforeId !== undefined) {
      checkInteger('ledger.list: beforeId', filter.beforeId);
      where.push('id < ?');
      params.push(filter.beforeId);
    }
    // At most 16 distinct statements (which filters are present), so the cache stays small.
    const sql =
      `SELECT ${ENTRY_COLUMNS} FROM ledger_entries` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ' ORDER BY id DESC LIMIT ?';
    params.push(filter.limit);
    return (
      await this.scope
        .read()
        .prepare(sql)
        .all(...params)
    ).map(toEntry);
  }

  async rewardsTotal(pubkey: string, token: string): Promise<bigint> {
    const row = await this.scope
      .read()
      .prepare("SELECT credited FROM ledger_totals WHERE pubkey = ? AND token = ? AND type = 'mining_reward'")
      .get(pubkey, token);
    return row === undefined ? 0n : bigintOf(row, 'credited');
  }
}

/**
 * Locks the balance rows of the entries' accounts in (pubkey, token) order, creating missing
 * ones at 0 (the entries write them anyway; a refused call rolls them back with the rest). A
 * no-op upsert, because it locks an existing row and a new one alike.
 */
async function lockAccounts(db: SqlExecutor, entries: readonly NewLedgerEntry[]): Promise<void> {
  const accounts = [...new Set(entries.map((e) => JSON.stringify([e.pubkey, e.token])))]
    .map((key) => JSON.parse(key) as [string, string])
    .sort(([p1, t1], [p2, t2]) => (p1 === p2 ? compare(t1, t2) : compare(p1, p2)));
  const lock = db.prepare(
    "INSERT INTO balances (pubkey, token, amount) VALUES (?, ?, '0') ON CONFLICT (pubkey, token) DO UPDATE SET amount = balances.amount",
  );
  for (const [pubkey, token] of accounts) await lock.run(pubkey, token);
}

/** Code-unit order (the same on every node, unlike a locale's). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function readBalance(db: SqlExecutor, pubkey: string, token: string): Promise<bigint> {
  const row = await db
    .prepare('SELECT amount FROM balances WHERE pubkey = ? AND token = ?')
    .get(pubkey, token);
  return row === undefined ? 0n : bigintOf(row, 'amount');
}

function checkEntry(entry: NewLedgerEntry, index: number): void {
  const what = `ledger.apply: entries[${index}]`;
  if (!Object.hasOwn(ENTRY_TYPES, entry.type)) {
    throw new StorageError(
      'invalid_value',
      `${what}.type: expected a ledger entry type, got ${String(entry.type)}`,
    );
  }
  if (typeof entry.amount !== 'bigint') {
    throw new StorageError('invalid_value', `${what}.amount: expected a bigint, got ${typeof entry.amount}`);
  }
  checkInteger(`${what}.timestamp`, entry.timestamp);
}

function toEntry(row: Row): LedgerEntry {
  const key = nullableText(row, 'idempotency_key');
  const type = text(row, 'type');
  if (!Object.hasOwn(ENTRY_TYPES, type)) throw corrupt('type', type);
  return {
    id: int(row, 'id'),
    type: type as LedgerEntryType,
    pubkey: text(row, 'pubkey'),
    token: text(row, 'token'),
    amount: bigintOf(row, 'amount'),
    timestamp: int(row, 'timestamp'),
    ref: nullableText(row, 'ref'),
    ...(key === null ? {} : { idempotencyKey: key }),
  };
}

// ---------------------------------------------------------------------------------------------
// Devices and miners
// ---------------------------------------------------------------------------------------------

const DEVICE_COLUMNS = 'device_id, pubkey, device_type, port, registered_at, last_seen';

class SqlDeviceRepo implements DeviceRepo {
  constructor(private readonly scope: Scope) {}

  /** A known pubkey keeps its registeredAt and its deviceId; its type, port and lastSeen change. */
  async upsert(device: DeviceRecord): Promise<DeviceRecord> {
    const row = await this.scope
      .write('devices.upsert')
      .prepare(
        `INSERT INTO devices (${DEVICE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ` +
          'ON CONFLICT (pubkey) DO UPDATE SET device_type = excluded.device_type, port = excluded.port, ' +
          `last_seen = excluded.last_seen RETURNING ${DEVICE_COLUMNS}`,
      )
      .get(
        device.deviceId,
        device.pubkey,
        device.deviceType,
        device.port,
        device.registeredAt,
        device.lastSeen,
      );
    if (row === undefined) throw new StorageError('corrupt_row', 'INSERT ... RETURNING returned no row');
    return toDevice(row);
  }

  async get(pubkey: string): Promise<DeviceRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE pubkey = ?`)
      .get(pubkey);
    return row === undefined ? undefined : toDevice(row);
  }

  async touch(pubkey: string, lastSeen: number): Promise<void> {
    await this.scope
      .write('devices.touch')
      .prepare('UPDATE devices SET last_seen = ? WHERE pubkey = ?')
      .run(lastSeen, pubkey);
  }

  async list(filter: { deviceType?: string; limit: number; offset: number }): Promise<DeviceRecord[]> {
    const db = this.scope.read();
    const rows =
      filter.deviceType === undefined
        ? await db
            .prepare(`SELECT ${DEVICE_COLUMNS} FROM devices ORDER BY registered_at, pubkey LIMIT ? OFFSET ?`)
            .all(filter.limit, filter.offset)
        : await db
            .prepare(
              `SELECT ${DEVICE_COLUMNS} FROM devices WHERE device_type = ? ORDER BY registered_at, pubkey LIMIT ? OFFSET ?`,
            )
            .all(filter.deviceType, filter.limit, filter.offset);
    return rows.map(toDevice);
  }

  async countByType(): Promise<Record<string, number>> {
    const rows = await this.scope
      .read()
      .prepare('SELECT device_type, count(*) AS n FROM devices GROUP BY device_type ORDER BY device_type')
      .all();
    return Object.fromEntries(rows.map((row) => [text(row, 'device_type'), int(row, 'n')]));
  }
}

function toDevice(row: Row): DeviceRecord {
  return {
    deviceId: text(row, 'device_id'),
    pubkey: text(row, 'pubkey'),
    deviceType: text(row, 'device_type'),
    port: nullableInt(row, 'port'),
    registeredAt: int(row, 'registered_at'),
    lastSeen: int(row, 'last_seen'),
  };
}

class SqlMinerRepo implements MinerRepo {
  constructor(private readonly scope: Scope) {}

  async get(pubkey: string): Promise<MinerStats | undefined> {
    const row = await this.scope
      .read()
      .prepare(
        'SELECT pubkey, proofs_accepted, proofs_rejected, blocks_accepted, last_seen FROM miners WHERE pubkey = ?',
      )
      .get(pubkey);
    if (row === undefined) return undefined;
    return {
      pubkey: text(row, 'pubkey'),
      proofsAccepted: int(row, 'proofs_accepted'),
      proofsRejected: int(row, 'proofs_rejected'),
      blocksAccepted: int(row, 'blocks_accepted'),
      lastSeen: nullableInt(row, 'last_seen'),
    };
  }

  /** Adds the counts; lastSeen becomes the latest of the stored value and seenAt. */
  async record(
    pubkey: string,
    change: { proofsAccepted?: number; proofsRejected?: number; blocksAccepted?: number; seenAt: number },
  ): Promise<void> {
    const accepted = change.proofsAccepted ?? 0;
    const rejected = change.proofsRejected ?? 0;
    const blocks = change.blocksAccepted ?? 0;
    checkCount('miners.record: proofsAccepted', accepted);
    checkCount('miners.record: proofsRejected', rejected);
    checkCount('miners.record: blocksAccepted', blocks);
    checkInteger('miners.record: seenAt', change.seenAt);
    await this.scope
      .write('miners.record')
      .prepare(
        'INSERT INTO miners (pubkey, proofs_accepted, proofs_rejected, blocks_accepted, last_seen) VALUES (?, ?, ?, ?, ?) ' +
          'ON CONFLICT (pubkey) DO UPDATE SET proofs_accepted = miners.proofs_accepted + excluded.proofs_accepted, ' +
          'proofs_rejected = miners.proofs_rejected + excluded.proofs_rejected, ' +
          'blocks_accepted = miners.blocks_accepted + excluded.blocks_accepted, ' +
          // The later of the two (CASE: SQLite's max(a, b) is PostgreSQL's greatest(a, b)).
          'last_seen = CASE WHEN miners.last_seen IS NULL OR miners.last_seen < excluded.last_seen ' +
          'THEN excluded.last_seen ELSE miners.last_seen END',
      )
      .run(pubkey, accepted, rejected, blocks, change.seenAt);
  }
}

// ---------------------------------------------------------------------------------------------
// v4.0 challenges and proofs
// ---------------------------------------------------------------------------------------------

const CHALLENGE_COLUMNS =
  'id, serial, slot, slot_hash, device_type, difficulty, dim, entropy, challenge_hash, issued_at, expires_at';

class SqlChallengeRepo implements ChallengeRepo {
  constructor(private readonly scope: Scope) {}

  async insert(c: ChallengeRecord): Promise<void> {
    await this.scope
      .write('challenges.insert')
      .prepare(`INSERT INTO challenges (${CHALLENGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(
        c.id,
        c.serial,
        c.slot,
        c.slotHash,
        c.deviceType,
        c.difficulty,
        c.dim,
        c.entropy,
        c.challengeHash,
        c.issuedAt,
        c.expiresAt,
      );
  }

  async get(id: string): Promise<ChallengeRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${CHALLENGE_COLUMNS} FROM challenges WHERE id = ?`)
      .get(id);
    if (row === undefined) return undefined;
    return {
      id: text(row, 'id'),
      serial: int(row, 'serial'),
      slot: int(row, 'slot'),
      slotHash: text(row, 'slot_hash'),
      deviceType: text(row, 'device_type'),
      difficulty: int(row, 'difficulty'),
      dim: int(row, 'dim'),
      entropy: text(row, 'entropy'),
      challengeHash: text(row, 'challenge_hash'),
      issuedAt: int(row, 'issued_at'),
      expiresAt: int(row, 'expires_at'),
    };
  }

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'challenges.nextSerial', 'challenges');
  }

  async countOpen(now: number): Promise<number> {
    const row = await this.scope
      .read()
      .prepare('SELECT count(*) AS n FROM challenges WHERE expires_at >= ?')
      .get(now);
    return row === undefined ? 0 : int(row, 'n');
  }
}

const PROOF_COLUMNS = 'challenge_id, pubkey, nonce, accepted_at, ledger_entry_id, tx_sig';

class SqlProofRepo implements ProofRepo {
  constructor(private readonly scope: Scope) {}

  async insert(p: AcceptedProof): Promise<boolean> {
    // One statement: either the row is written or (same challenge and key) nothing is.
    // Any other constraint (an unknown challenge or ledger entry) throws: that is a bug.
    const result = await this.scope
      .write('proofs.insert')
      .prepare(
        `INSERT INTO proofs (${PROOF_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (challenge_id, pubkey) DO NOTHING`,
      )
      .run(p.challengeId, p.pubkey, p.nonce, p.acceptedAt, p.ledgerEntryId, p.txSig);
    return result.changes === 1;
  }

  async get(challengeId: string, pubkey: string): Promise<AcceptedProof | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${PROOF_COLUMNS} FROM proofs WHERE challenge_id = ? AND pubkey = ?`)
      .get(challengeId, pubkey);
    if (row === undefined) return undefined;
    return {
      challengeId: text(row, 'challenge_id'),
      pubkey: text(row, 'pubkey'),
      nonce: int(row, 'nonce'),
      acceptedAt: int(row, 'accepted_at'),
      ledgerEntryId: int(row, 'ledger_entry_id'),
      txSig: text(row, 'tx_sig'),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// v4.1 hexchain
// ---------------------------------------------------------------------------------------------

const HEX_CHALLENGE_COLUMNS =
  'id, serial, q, r, s, slot, slot_hash, challenge_hash, target, difficulty, entropy, parents, depth, ' +
  'miner_pubkey, issued_at, expires_at';

class SqlHexChallengeRepo implements HexChallengeRepo {
  constructor(private readonly scope: Scope) {}

  async insert(c: HexChallengeRecord): Promise<void> {
    checkBigint('hexChallenges.insert: difficulty', c.difficulty);
    const parents = c.parents.map((p) => ({
      q: p.coord.q,
      r: p.coord.r,
      s: p.coord.s,
      blockHash: p.blockHash,
      depth: p.depth,
    }));
    await this.scope
      .write('hexChallenges.insert')
      .prepare(
        `INSERT INTO hex_challenges (${HEX_CHALLENGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        c.id,
        c.serial,
        c.coord.q,
        c.coord.r,
        c.coord.s,
        c.slot,
        c.slotHash,
        c.challengeHash,
        c.target,
        c.difficulty.toString(),
        c.entropy,
        JSON.stringify(parents),
        c.depth,
        c.minerPubkey,
        c.issuedAt,
        c.expiresAt,
      );
  }

  async get(id: string): Promise<HexChallengeRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${HEX_CHALLENGE_COLUMNS} FROM hex_challenges WHERE id = ?`)
      .get(id);
    if (row === undefined) return undefined;
    return {
      id: text(row, 'id'),
      serial: int(row, 'serial'),
      coord: coordOf(row),
      slot: int(row, 'slot'),
      slotHash: text(row, 'slot_hash'),
      challengeHash: text(row, 'challenge_hash'),
      target: text(row, 'target'),
      difficulty: bigintOf(row, 'difficulty'),
      entropy: text(row, 'entropy'),
      parents: jsonArray(row, 'parents').map(toHexParent),
      depth: int(row, 'depth'),
      minerPubkey: nullableText(row, 'miner_pubkey'),
      issuedAt: int(row, 'issued_at'),
      expiresAt: int(row, 'expires_at'),
    };
  }

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'hexChallenges.nextSerial', 'hex_challenges');
  }

  async countOpen(now: number): Promise<number> {
    const row = await this.scope
      .read()
      .prepare('SELECT count(*) AS n FROM hex_challenges WHERE expires_at >= ?')
      .get(now);
    return row === undefined ? 0 : int(row, 'n');
  }

  async openExpiries(now: number): Promise<number[]> {
    return (
      await this.scope.read().prepare('SELECT expires_at FROM hex_challenges WHERE expires_at >= ?').all(now)
    ).map((row) => int(row, 'expires_at'));
  }
}

const BLOCK_COLUMNS =
  'height, q, r, s, block_hash, pow_hash, depth, parents, miner_pubkey, nonce, challenge_id, slot, difficulty, timestamp_ms';

class SqlBlockRepo implements BlockRepo {
  constructor(private readonly scope: Scope) {}

  async insert(b: BlockRecord): Promise<boolean> {
    checkBigint('blocks.insert: difficulty', b.difficulty);
    // One statement: an occupied coordinate writes nothing and returns false; any other
    // constraint (a height or block hash already used, an unknown challenge) throws.
    const result = await this.scope
      .write('blocks.insert')
      .prepare(
        `INSERT INTO blocks (${BLOCK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (q, r, s) DO NOTHING`,
      )
      .run(
        b.height,
        b.coord.q,
        b.coord.r,
        b.coord.s,
        b.blockHash,
        b.powHash,
        b.depth,
        JSON.stringify(b.parents.map((p) => ({ q: p.q, r: p.r, s: p.s }))),
        b.minerPubkey,
        b.nonce,
        b.challengeId,
        b.slot,
        b.difficulty.toString(),
        b.timestampMs,
      );
    return result.changes === 1;
  }

  async get(coord: CoordRecord): Promise<BlockRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks WHERE q = ? AND r = ? AND s = ?`)
      .get(coord.q, coord.r, coord.s);
    return row === undefined ? undefined : toBlock(row);
  }

  async list(afterHeight: number, limit: number): Promise<BlockRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks WHERE height > ? ORDER BY height LIMIT ?`)
        .all(afterHeight, limit)
    ).map(toBlock);
  }

  async all(): Promise<BlockRecord[]> {
    return (await this.scope.read().prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks ORDER BY height`).all()).map(
      toBlock,
    );
  }

  async byHeight(height: number): Promise<BlockRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks WHERE height = ?`)
      .get(height);
    return row === undefined ? undefined : toBlock(row);
  }

  async count(): Promise<number> {
    const row = await this.scope.read().prepare('SELECT count(*) AS n FROM blocks').get();
    return row === undefined ? 0 : int(row, 'n');
  }
}

function toBlock(row: Row): BlockRecord {
  return {
    coord: coordOf(row),
    blockHash: text(row, 'block_hash'),
    powHash: text(row, 'pow_hash'),
    depth: int(row, 'depth'),
    parents: jsonArray(row, 'parents').map(toCoord),
    minerPubkey: text(row, 'miner_pubkey'),
    nonce: int(row, 'nonce'),
    challengeId: text(row, 'challenge_id'),
    slot: int(row, 'slot'),
    difficulty: bigintOf(row, 'difficulty'),
    timestampMs: int(row, 'timestamp_ms'),
    height: int(row, 'height'),
  };
}

function coordOf(row: Row): CoordRecord {
  return { q: int(row, 'q'), r: int(row, 'r'), s: int(row, 's') };
}

function toCoord(value: unknown): CoordRecord {
  const o = record(value, 'parents');
  return { q: int(o, 'q'), r: int(o, 'r'), s: int(o, 's') };
}

function toHexParent(value: unknown): HexParentRecord {
  const o = record(value, 'parents');
  return { coord: toCoord(o), blockHash: text(o, 'blockHash'), depth: int(o, 'depth') };
}

// ---------------------------------------------------------------------------------------------
// Values in and out
// ---------------------------------------------------------------------------------------------

export type Row = Readonly<Record<string, unknown>>;

export function corrupt(column: string, value: unknown): StorageError {
  return new StorageError(
    'corrupt_row',
    `stored ${column}: unexpected value ${String(value)} (${typeof value})`,
  );
}

export function text(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw corrupt(column, value);
  return value;
}

export function nullableText(row: Row, column: string): string | null {
  const value = row[column];
  return value === null ? null : text(row, column);
}

export function int(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw corrupt(column, value);
  return value;
}

export function nullableInt(row: Row, column: string): number | null {
  const value = row[column];
  return value === null ? null : int(row, column);
}

/** Decimal text to bigint (never through Number). */
export function bigintOf(row: Row, column: string): bigint {
  const value = text(row, column);
  if (!/^-?(0|[1-9][0-9]*)$/.test(value)) throw corrupt(column, value);
  return BigInt(value);
}

function jsonArray(row: Row, column: string): unknown[] {
  const value: unknown = JSON.parse(text(row, column));
  if (!Array.isArray(value)) throw corrupt(column, value);
  return value;
}

function record(value: unknown, column: string): Row {
  if (typeof value !== 'object' || value === null) throw corrupt(column, value);
  return value as Row;
}

function checkInteger(what: string, value: number): void {
  if (!Number.isSafeInteger(value)) {
    throw new StorageError('invalid_value', `${what}: expected an integer, got ${String(value)}`);
  }
}

export function checkCount(what: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new StorageError('invalid_value', `${what}: expected a non-negative integer, got ${String(value)}`);
  }
}

export function checkBigint(what: string, value: bigint): void {
  if (typeof value !== 'bigint' || value < 0n) {
    throw new StorageError('invalid_value', `${what}: expected a non-negative bigint, got ${String(value)}`);
  }
}
