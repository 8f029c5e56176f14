import type { CounterRepo } from '../types.js';
import type { Scope } from './scope.js';
import { checkInteger, int, text } from './values.js';

/**
 * Counters. With concurrent writers (PostgreSQL, SERIALIZABLE) one row per counter would make
 * every two transactions counting the same thing conflict (every accepted proof counts), so
 * there a counter is spread over COUNTER_SHARDS rows, `name` + U+001F + shard, one picked at
 * random per add, and read as their sum; SQLite keeps one row per counter.
 */
export class SqlCounterRepo implements CounterRepo {
  constructor(private readonly scope: Scope) {}

  async add(name: string, delta: number): Promise<void> {
    checkInteger('counters.add: delta', delta);
    const db = this.scope.write('counters.add');
    const row = db.dialect.concurrentWriters
      ? `${name}${SHARD_MARK}${Math.floor(Math.random() * COUNTER_SHARDS)}`
      : name;
    await db
      .prepare(
        'INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value',
      )
      .run(row, delta);
  }

  async get(name: string): Promise<number> {
    const db = this.scope.read();
    if (!db.dialect.concurrentWriters) {
      const row = await db.prepare('SELECT value FROM counters WHERE name = ?').get(name);
      return row === undefined ? 0 : int(row, 'value');
    }
    const rows = await db
      .prepare(
        'SELECT name, value FROM counters WHERE name = ?1 OR substr(name, 1, length(CAST(?2 AS TEXT))) = ?2',
      )
      .all(name, `${name}${SHARD_MARK}`);
    return rows.reduce((sum, row) => sum + int(row, 'value'), 0);
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
    return Object.fromEntries(totals);
  }
}

/** Separates a counter's name from its shard number (never in a counter's name). */
const SHARD_MARK = '\u001f';
const COUNTER_SHARDS = 16;
