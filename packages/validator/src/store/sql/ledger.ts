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

  /**
   * Few statements, whatever the number of entries: (1) the accounts are locked and read, in
   * (pubkey, token) order, with the existing entries of the idempotency keys; (2) the new
   * balances, totals and entries are written. Every check happens in between, in memory, entry
   * by entry in order ({@link planApply}, the one definition of the rules on both engines), so a
   * refused debit writes nothing.
   *
   * PostgreSQL ({@link applyConcurrent}): each step is one statement, and one round trip with
   * whatever the transaction sends with it (the connection pipelines; docs/storage.md). The
   * locks and the entries' ids are one statement, the writes one more (data-modifying `WITH`),
   * not awaited: they travel with the transaction's next statements or its COMMIT, and a
   * failure fails the transaction. Locks: the upsert takes the row lock of every account of
   * the call, in one order shared by every writer, before anything is read; a concurrent call
   * over the same accounts waits for it and then reads what it committed (at READ COMMITTED
   * each statement sees the latest commits). So the balances and the idempotency keys (of that
   * account's entries) read here cannot change before the commit; the totals are not read at
   * all: they are added to, under the account's lock.
   *
   * SQLite (one writer at a time): the same reads and writes, one multi-row statement each,
   * the totals read and written whole (SQLite has no exact arithmetic on amounts past 2^63).
   */
  async apply(entries: readonly NewLedgerEntry[]): Promise<LedgerEntry[]> {
    const db = this.scope.write('ledger.apply');
    entries.forEach(checkEntry);
    if (entries.length === 0) return [];
    const accounts = unique(entries.map((e) => [e.pubkey, e.token] as const)).sort(compareKeys);
    const keys = [
      ...new Set(entries.flatMap((e) => (e.idempotencyKey === undefined ? [] : [e.idempotencyKey]))),
    ];
    if (db.dialect.concurrentWriters) return applyConcurrent(db, entries, accounts, keys);
    const typed = unique(entries.map((e) => [e.pubkey, e.token, e.type] as const));
    // The lock upsert creates a missing account at 0: a call that may be refused (it debits)
    // runs in a savepoint, so that a refusal takes that back and the transaction stays usable.
    const mayRefuse = entries.some((e) => e.amount < 0n);
    const [, locked, existing, totals] = await Promise.all([
      mayRefuse ? db.exec('SAVEPOINT ledger_apply') : undefined,
      chunked(accounts, (rows) =>
        db
          .prepare(
            `INSERT INTO balances (pubkey, token, amount) VALUES ${tuples(rows.length, "(?, ?, '0')")} ` +
              'ON CONFLICT (pubkey, token) DO UPDATE SET amount = balances.amount RETURNING pubkey, token, amount',
          )
          .all(...rows.flat()),
      ),
      existingEntries(db, keys),
      chunked(typed, (rows) =>
        db
          .prepare(
            'SELECT pubkey, token, type, credited, debited FROM ledger_totals ' +
              `WHERE (pubkey, token, type) IN (VALUES ${tuples(rows.length, '(?, ?, ?)')})`,
          )
          .all(...rows.flat()),
      ),
    ]);
    let plan: Plan;
    try {
      plan = planApply(entries, locked, existing, totals);
    } catch (error) {
      if (mayRefuse) await db.exec('ROLLBACK TO ledger_apply; RELEASE ledger_apply');
      throw error;
    }
    const [inserted] = await Promise.all([
      plan.inserts.length === 0
        ? []
        : chunked(plan.inserts, (rows) =>
            db
              .prepare(
                'INSERT INTO ledger_entries (type, pubkey, token, amount, timestamp, ref, idempotency_key) ' +
                  `VALUES ${tuples(rows.length, '(?, ?, ?, ?, ?, ?, ?)')} RETURNING ${ENTRY_COLUMNS}`,
              )
              .all(...rows.flatMap(entryValues)),
          ),
      plan.balances.length === 0
        ? undefined
        : chunked(plan.balances, (rows) =>
            db
              .prepare(
                `INSERT INTO balances (pubkey, token, amount) VALUES ${tuples(rows.length, '(?, ?, ?)')} ` +
                  'ON CONFLICT (pubkey, token) DO UPDATE SET amount = excluded.amount',
              )
              .run(...rows.flat()),
          ),
      plan.totals.length === 0
        ? undefined
        : chunked(plan.totals, (rows) =>
            db
              .prepare(
                `INSERT INTO ledger_totals (pubkey, token, type, credited, debited) VALUES ${tuples(rows.length, '(?, ?, ?, ?, ?)')} ` +
                  'ON CONFLICT (pubkey, token, type) DO UPDATE SET credited = excluded.credited, debited = excluded.debited',
              )
              .run(...rows.flat()),
          ),
      mayRefuse ? db.exec('RELEASE ledger_apply') : undefined,
    ]);
    // Rows come back in insertion order, but only the ids promise it.
    const written = (inserted as Row[]).map(toEntry).sort((a, b) => a.id - b.id);
    return plan.result.map((r) => (typeof r === 'number' ? (written[r] as LedgerEntry) : r));
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

/** The entries already written under these idempotency keys (none asked: no statement). */
async function existingEntries(db: SqlExecutor, keys: readonly string[]): Promise<Row[]> {
  if (keys.length === 0) return [];
  return chunked(keys, (rows) =>
    db
      .prepare(
        `SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE idempotency_key IN (${tuples(rows.length, '?')})`,
      )
      .all(...rows),
  );
}

/**
 * PostgreSQL: the accounts locked (created at 0 when missing: `created`) and read, in the order
 * given, then, in the same statement, the ids of the entries that may be written drawn from the
 * entries' sequence: after every lock (the second branch of the UNION runs after the first,
 * and its filter reads all of `locked`), so that an account's entries get ids in commit order.
 * An id drawn for an entry that turns out to exist already, or for a refused call, is a gap,
 * as a rolled-back insert always left. One statement text for any number of accounts.
 */
const LOCK_AND_DRAW =
  'WITH locked AS (INSERT INTO balances (pubkey, token, amount) ' +
  "SELECT a.pubkey, a.token, '0' FROM json_to_recordset(?1::json) AS a(pubkey text, token text) " +
  'ON CONFLICT (pubkey, token) DO UPDATE SET amount = balances.amount ' +
  "RETURNING pubkey, token, amount, xmax::text = '0' AS created) " +
  'SELECT pubkey, token, amount, created, NULL::bigint AS id FROM locked ' +
  'UNION ALL ' +
  "SELECT NULL, NULL, NULL, NULL, nextval(pg_get_serial_sequence('ledger_entries', 'id')) " +
  'FROM generate_series(1, ?2::integer) WHERE (SELECT count(*) FROM locked) >= 0';

/**
 * PostgreSQL: the plan's writes in one statement: the entries (with the ids drawn), the
 * accounts' new balances, and the totals added to (the plan's totals are this call's sums:
 * {@link applyConcurrent} plans from no totals).
 */
const WRITE_PLAN =
  'WITH entries AS (INSERT INTO ledger_entries (id, type, pubkey, token, amount, timestamp, ref, idempotency_key) ' +
  'SELECT e.id, e.type, e.pubkey, e.token, e.amount, e.timestamp, e.ref, e.idempotency_key ' +
  'FROM json_to_recordset(?1::json) AS e(id bigint, type text, pubkey text, token text, amount text, ' +
  'timestamp bigint, ref text, idempotency_key text)), ' +
  'totals AS (INSERT INTO ledger_totals (pubkey, token, type, credited, debited) ' +
  'SELECT t.pubkey, t.token, t.type, t.credited, t.debited ' +
  'FROM json_to_recordset(?3::json) AS t(pubkey text, token text, type text, credited text, debited text) ' +
  'ON CONFLICT (pubkey, token, type) DO UPDATE SET ' +
  'credited = (ledger_totals.credited::numeric + excluded.credited::numeric)::text, ' +
  'debited = (ledger_totals.debited::numeric + excluded.debited::numeric)::text) ' +
  'INSERT INTO balances (pubkey, token, amount) ' +
  'SELECT b.pubkey, b.token, b.amount FROM json_to_recordset(?2::json) AS b(pubkey text, token text, amount text) ' +
  'ON CONFLICT (pubkey, token) DO UPDATE SET amount = excluded.amount';

/** PostgreSQL: takes back the accounts a refused call created (they hold 0 and are locked by this transaction). */
const FORGET_CREATED =
  'DELETE FROM balances WHERE (pubkey, token) IN ' +
  '(SELECT a.pubkey, a.token FROM json_to_recordset(?::json) AS a(pubkey text, token text))';

/** `ledger.apply` with concurrent writers (PostgreSQL): two statements, the second not awaited. */
async function applyConcurrent(
  db: SqlExecutor,
  entries: readonly NewLedgerEntry[],
  accounts: readonly (readonly [string, string])[],
  keys: readonly string[],
): Promise<LedgerEntry[]> {
  const [rows, existing] = await Promise.all([
    db
      .prepare(LOCK_AND_DRAW)
      .all(JSON.stringify(accounts.map(([pubkey, token]) => ({ pubkey, token }))), entries.length),
    // Sent after the locks (a connection runs its statements in order): it sees every entry
    // committed under them.
    existingEntries(db, keys),
  ]);
  const locked = rows.filter((row) => row.pubkey !== null);
  let plan: Plan;
  try {
    plan = planApply(entries, locked, existing, []);
  } catch (error) {
    // Without a savepoint (one round trip less): the accounts this call created are deleted
    // again, so that the transaction, if it goes on, leaves them as they were.
    const created = locked.filter((row) => row.created === true);
    if (created.length > 0) {
      await db
        .prepare(FORGET_CREATED)
        .run(
          JSON.stringify(created.map((row) => ({ pubkey: text(row, 'pubkey'), token: text(row, 'token') }))),
        );
    }
    throw error;
  }
  const drawn = rows
    .filter((row) => row.pubkey === null)
    .map((row) => int(row, 'id'))
    .sort((a, b) => a - b);
  if (plan.inserts.length > 0 || plan.balances.length > 0) {
    const field = <K extends string>(names: readonly K[], values: readonly string[]) =>
      Object.fromEntries(names.map((name, i) => [name, values[i]])) as Record<K, string>;
    // Left in flight: the transaction's scope keeps it, and a failure fails the transaction.
    db.prepare(WRITE_PLAN)
      .run(
        JSON.stringify(
          plan.inserts.map((e, i) => ({
            id: drawn[i] as number,
            type: e.type,
            pubkey: e.pubkey,
            token: e.token,
            amount: e.amount.toString(),
            timestamp: e.timestamp,
            ref: e.ref,
            idempotency_key: e.idempotencyKey ?? null,
          })),
        ),
        JSON.stringify(plan.balances.map((b) => field(['pubkey', 'token', 'amount'], b))),
        JSON.stringify(plan.totals.map((t) => field(['pubkey', 'token', 'type', 'credited', 'debited'], t))),
      )
      .catch(() => undefined);
  }
  const written = plan.inserts.map(
    (e, i): LedgerEntry => ({
      id: drawn[i] as number,
      type: e.type,
      pubkey: e.pubkey,
      token: e.token,
      amount: e.amount,
      timestamp: e.timestamp,
      ref: e.ref,
      ...(e.idempotencyKey === undefined ? {} : { idempotencyKey: e.idempotencyKey }),
    }),
  );
  return plan.result.map((r) => (typeof r === 'number' ? (written[r] as LedgerEntry) : r));
}

/** At most this many rows per multi-row statement, so that few distinct statements are prepared. */
const CHUNK = 8;

/** `n` copies of `tuple`, comma-separated (the placeholders of a multi-row statement). */
/** An entry's values in the column order of `ledger_entries` after its id. */
function entryValues(e: NewLedgerEntry): SqlValue[] {
  return [e.type, e.pubkey, e.token, e.amount.toString(), e.timestamp, e.ref, e.idempotencyKey ?? null];
}

function tuples(n: number, tuple: string): string {
  return Array.from({ length: n }, () => tuple).join(', ');
}

/** Runs `run` on chunks of at most CHUNK items, issued together, and concatenates the rows. */
async function chunked<I, R>(
  items: readonly I[],
  run: (chunk: I[], at: number) => Promise<R[] | { changes: number }>,
): Promise<R[]> {
  const parts: Promise<R[] | { changes: number }>[] = [];
  for (let i = 0; i < items.length; i += CHUNK) parts.push(run(items.slice(i, i + CHUNK), i));
  return (await Promise.all(parts)).flatMap((p) => (Array.isArray(p) ? p : []));
}

/** Distinct tuples of strings, first occurrence first. */
function unique<K extends readonly string[]>(keys: readonly K[]): K[] {
  const seen = new Map<string, K>();
  for (const k of keys) seen.set(JSON.stringify(k), seen.get(JSON.stringify(k)) ?? k);
  return [...seen.values()];
}

/** Code-unit order of (pubkey, token) (the same on every node, unlike a locale's). */
function compareKeys(a: readonly [string, string], b: readonly [string, string]): number {
  return a[0] === b[0] ? compare(a[1], b[1]) : compare(a[0], b[0]);
}

/** What `apply` writes: the final balances and totals, the new entries, and the answer. */
interface Plan {
  readonly balances: [string, string, string][];
  readonly totals: [string, string, string, string, string][];
  readonly inserts: NewLedgerEntry[];
  /** Per entry of the call: an existing entry, or the index of its row among `inserts`. */
  readonly result: (LedgerEntry | number)[];
}

/**
 * Applies the entries in memory, in order, to the balances and totals read: an entry whose
 * idempotency key exists (stored, or earlier in this call) is answered with that entry and
 * changes nothing; a debit below zero throws InsufficientBalanceError (nothing is written).
 */
function planApply(
  entries: readonly NewLedgerEntry[],
  locked: readonly Row[],
  existing: readonly Row[],
  totalRows: readonly Row[],
): Plan {
  const balances = new Map<string, bigint>();
  for (const row of locked)
    balances.set(JSON.stringify([text(row, 'pubkey'), text(row, 'token')]), bigintOf(row, 'amount'));
  const totals = new Map<string, { credited: bigint; debited: bigint }>();
  for (const row of totalRows) {
    totals.set(JSON.stringify([text(row, 'pubkey'), text(row, 'token'), text(row, 'type')]), {
      credited: bigintOf(row, 'credited'),
      debited: bigintOf(row, 'debited'),
    });
  }
  const byKey = new Map<string, LedgerEntry | number>();
  for (const row of existing) {
    const found = toEntry(row);
    if (found.idempotencyKey !== undefined) byKey.set(found.idempotencyKey, found);
  }
  const changedBalances = new Set<string>();
  const changedTotals = new Set<string>();
  const inserts: NewLedgerEntry[] = [];
  const result: (LedgerEntry | number)[] = [];
  for (const entry of entries) {
    const earlier = entry.idempotencyKey === undefined ? undefined : byKey.get(entry.idempotencyKey);
    if (earlier !== undefined) {
      result.push(earlier);
      continue;
    }
    const account = JSON.stringify([entry.pubkey, entry.token]);
    const balance = balances.get(account) ?? 0n;
    const next = balance + entry.amount;
    if (next < 0n) throw new InsufficientBalanceError(entry.pubkey, entry.token, balance, -entry.amount);
    balances.set(account, next);
    changedBalances.add(account);
    const typeKey = JSON.stringify([entry.pubkey, entry.token, entry.type]);
    const total = totals.get(typeKey) ?? { credited: 0n, debited: 0n };
    totals.set(typeKey, {
      credited: total.credited + (entry.amount > 0n ? entry.amount : 0n),
      debited: total.debited + (entry.amount < 0n ? -entry.amount : 0n),
    });
    changedTotals.add(typeKey);
    if (entry.idempotencyKey !== undefined) byKey.set(entry.idempotencyKey, inserts.length);
    result.push(inserts.length);
    inserts.push(entry);
  }
  return {
    balances: [...changedBalances].map((k) => {
      const [pubkey, token] = JSON.parse(k) as [string, string];
      return [pubkey, token, (balances.get(k) as bigint).toString()];
    }),
    totals: [...changedTotals].map((k) => {
      const [pubkey, token, type] = JSON.parse(k) as [string, string, string];
      const t = totals.get(k) as { credited: bigint; debited: bigint };
      return [pubkey, token, type, t.credited.toString(), t.debited.toString()];
    }),
    inserts,
    result,
  };
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
