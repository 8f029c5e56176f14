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
   * Few statements, the same on both engines, whatever the number of entries: (1) the accounts
   * are locked and read in one upsert, in (pubkey, token) order, with the existing entries of the
   * idempotency keys and the totals; (2) the new balances, totals and entries are written, one
   * multi-row statement each. Every check happens in between, in memory, entry by entry in
   * order, so a refused debit writes nothing. Issued together, each group is one round trip on
   * PostgreSQL (the connection pipelines; docs/storage.md), and there the second is not
   * awaited: the entries' ids are drawn with the first, and the writes travel with whatever the
   * transaction sends next (its COMMIT at the latest; a failure fails the transaction).
   *
   * Locks (PostgreSQL): the upsert takes the row lock of every account of the call, in one
   * order shared by every writer, before anything is read; a concurrent call over the same
   * accounts waits for it and then reads what it committed (at READ COMMITTED each statement
   * sees the latest commits). So the balances, the totals (one account's rows) and the
   * idempotency keys (of that account's entries) read here cannot change before the commit.
   */
  async apply(entries: readonly NewLedgerEntry[]): Promise<LedgerEntry[]> {
    const db = this.scope.write('ledger.apply');
    entries.forEach(checkEntry);
    if (entries.length === 0) return [];
    const accounts = unique(entries.map((e) => [e.pubkey, e.token] as const)).sort(compareKeys);
    const keys = [
      ...new Set(entries.flatMap((e) => (e.idempotencyKey === undefined ? [] : [e.idempotencyKey]))),
    ];
    const typed = unique(entries.map((e) => [e.pubkey, e.token, e.type] as const));
    // The lock upsert creates a missing account at 0: a call that may be refused (it debits)
    // runs in a savepoint, so that a refusal takes that back and the transaction stays usable.
    const mayRefuse = entries.some((e) => e.amount < 0n);
    // PostgreSQL: the ids of the entries that may be written are drawn with the locks (after
    // them: per account, ids still follow commit order), so that the writes below need not
    // be awaited: they travel with the next statements or the COMMIT (one round trip less).
    const preallocate = db.dialect.concurrentWriters;
    const [, locked, existing, totals, ids] = await Promise.all([
      mayRefuse ? db.exec('SAVEPOINT ledger_apply') : undefined,
      chunked(accounts, (rows) =>
        db
          .prepare(
            `INSERT INTO balances (pubkey, token, amount) VALUES ${tuples(rows.length, "(?, ?, '0')")} ` +
              'ON CONFLICT (pubkey, token) DO UPDATE SET amount = balances.amount RETURNING pubkey, token, amount',
          )
          .all(...rows.flat()),
      ),
      keys.length === 0
        ? []
        : chunked(keys, (rows) =>
            db
              .prepare(
                `SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE idempotency_key IN (${tuples(rows.length, '?')})`,
              )
              .all(...rows),
          ),
      chunked(typed, (rows) =>
        db
          .prepare(
            'SELECT pubkey, token, type, credited, debited FROM ledger_totals ' +
              `WHERE (pubkey, token, type) IN (VALUES ${tuples(rows.length, '(?, ?, ?)')})`,
          )
          .all(...rows.flat()),
      ),
      preallocate
        ? db
            .prepare(
              `SELECT nextval(pg_get_serial_sequence('ledger_entries', 'id')) AS id FROM generate_series(1, ?)`,
            )
            .all(entries.length)
        : [],
    ]);
    let plan: Plan;
    try {
      plan = planApply(entries, locked, existing, totals);
    } catch (error) {
      if (mayRefuse) await db.exec('ROLLBACK TO ledger_apply; RELEASE ledger_apply');
      throw error;
    }
    const drawn = ids.map((row) => int(row, 'id')).sort((a, b) => a - b);
    const writes = Promise.all([
      plan.inserts.length === 0
        ? []
        : preallocate
          ? chunked(plan.inserts, (rows, at) =>
              db
                .prepare(
                  'INSERT INTO ledger_entries (id, type, pubkey, token, amount, timestamp, ref, idempotency_key) ' +
                    `VALUES ${tuples(rows.length, '(?, ?, ?, ?, ?, ?, ?, ?)')}`,
                )
                .run(...rows.flatMap((e, i) => [drawn[at + i] as number, ...entryValues(e)])),
            )
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
    let written: LedgerEntry[];
    if (preallocate) {
      writes.catch(() => undefined);
      // Left in flight: the transaction's scope awaits them, and a failure fails the transaction.
      written = plan.inserts.map((e, i) => ({
        id: drawn[i] as number,
        type: e.type,
        pubkey: e.pubkey,
        token: e.token,
        amount: e.amount,
        timestamp: e.timestamp,
        ref: e.ref,
        ...(e.idempotencyKey === undefined ? {} : { idempotencyKey: e.idempotencyKey }),
      }));
    } else {
      // Rows come back in insertion order on both engines, but only the ids promise it.
      written = ((await writes)[0] as Row[]).map(toEntry).sort((a, b) => a.id - b.id);
    }
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
