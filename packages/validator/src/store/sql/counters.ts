import type { CounterRepo } from '../types.js';
import type { Scope } from './scope.js';
import { checkInteger, int, text } from './values.js';

/**
 * Counters. An addition is not written when `add` is called: the transaction keeps the sum per
 * counter and writes them all in one statement just before its COMMIT ({@link writeCounters}),
 * in name order. So counter rows are the last rows a transaction locks, always in one order:
 * they never take part in a deadlock, and they are held only for the COMMIT. `get` and `list`
 * include the transaction's own pending additions.
 *
 * With concurrent writers (PostgreSQL) one row per counter would make every two transactions
 * counting the same thing wait for each other (every accepted proof counts), so there a counter
 * is spread over COUNTER_SHARDS rows, `name` + U+001F + shard, the shard picked at random once
 * per transaction, and read as their sum; SQLite keeps one row per counter.
 */
export class SqlCounterRepo implements CounterRepo {
  constructor(private readonly scope: Scope) {}

  async add(name: string, delta: number): Promise<void> {
    checkInteger('counters.add: delta', delta);
    const pending = this.scope.counterDeltas;
    this.scope.write('counters.add');
    pending.set(name, (pending.get(name) ?? 0) + delta);
  }

  async get(name: string): Promise<number> {
    const db = this.scope.read();
    const pending = this.scope.counterDeltas.get(name) ?? 0;
    if (!db.dialect.concurrentWriters) {
      const row = await db.prepare('SELECT value FROM counters WHERE name = ?').get(name);
      return (row === undefined ? 0 : int(row, 'value')) + pending;
    }
    const rows = await db
      .prepare(
        'SELECT name, value FROM counters WHERE name = ?1 OR substr(name, 1, length(CAST(?2 AS TEXT))) = ?2',
      )
      .all(name, `${name}${SHARD_MARK}`);
    return rows.reduce((sum, row) => sum + int(row, 'value'), pending);
  }

  async list(prefix: string): Promise<Record<string, number>> {
    // substr compares exactly (LIKE would fold case and treat _ and % as wildcards).
    const rows = await this.scope
      .read()
      .prepare(
        'SELECT name, value FROM counters WHERE substr(name, 1, length(CAST(?1 AS TEXT))) = ?1 ORDER BY name',
      )
      .all(prefix);
    // A Map, then fromEntries (own properties): a counter named __proto__ stays a counter.
    const totals = new Map<string, number>();
    for (const row of rows) {
      const name = text(row, 'name').split(SHARD_MARK)[0] as string;
      totals.set(name, (totals.get(name) ?? 0) + int(row, 'value'));
    }
    for (const [name, delta] of this.scope.counterDeltas) {
      if (name.startsWith(prefix)) totals.set(name, (totals.get(name) ?? 0) + delta);
    }
    return Object.fromEntries([...totals].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}

/** Separates a counter's name from its shard number (never in a counter's name). */
const SHARD_MARK = '\u001f';
const COUNTER_SHARDS = 64;

/**
 * Writes the transaction's pending counter additions (one multi-row upsert per 8 counters, in
 * name order) and returns the statements' promises: the adapters call it after the callback,
 * before COMMIT, and await them with it.
 */
export function writeCounters(scope: Scope): Promise<unknown>[] {
  if (scope.counterDeltas.size === 0) return [];
  const db = scope.write('counters');
  const shard = db.dialect.concurrentWriters
    ? `${SHARD_MARK}${Math.floor(Math.random() * COUNTER_SHARDS)}`
    : '';
  const rows = [...scope.counterDeltas]
    .filter(([, delta]) => delta !== 0)
    .map(([name, delta]) => [`${name}${shard}`, delta] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  scope.counterDeltas.clear();
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < rows.length; i += 8) {
    const chunk = rows.slice(i, i + 8);
    writes.push(
      db
        .prepare(
          `INSERT INTO counters (name, value) VALUES ${chunk.map(() => '(?, ?)').join(', ')} ` +
            'ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value',
        )
        .run(...chunk.flat()),
    );
  }
  return writes;
}
