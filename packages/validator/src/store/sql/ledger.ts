import { StorageError } from '../errors.js';
import {
  type Balance,
  InsufficientBalanceError,
  type LedgerEntry,
  type LedgerEntryType,
  type LedgerFilter,
  type LedgerRepo,
  type NewLedgerEntry,
} from '../types.js';
import type { Row, SqlExecutor, SqlValue } from './executor.js';
import type { Scope } from './scope.js';
import { bigintOf, checkInteger, corrupt, int, nullableText, text } from './values.js';

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

/** Tables `ledger_entries` (append-only), `balances` and `ledger_totals`: money moves only through `apply`. */
export class SqlLedgerRepo implements LedgerRepo {
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
