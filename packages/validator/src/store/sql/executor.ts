import type { Dialect } from '../dialect.js';

/**
 * The small asynchronous SQL executor the repositories are written against, implemented by
 * both adapters: node:sqlite (sqlite.ts) and PostgreSQL (postgres.ts). The SQL is the common
 * subset of both dialects (`?` placeholders, `ON CONFLICT` upserts, `RETURNING`, `SAVEPOINT`);
 * what really differs lives in the executors (placeholder syntax, how a 64-bit integer is
 * decoded) and in the schema (migrations.ts, {@link Dialect}).
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

/** A row as the executor returns it: column name to value. */
export type Row = Readonly<Record<string, unknown>>;
