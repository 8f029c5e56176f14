import type pg from 'pg';
import { postgresDialect } from './dialect.js';
import { StorageError } from './errors.js';
import {
  checkMigrations,
  MIGRATIONS,
  type MigrateOptions,
  type MigrateResult,
  stepSql,
  tooNew,
} from './migrations.js';

/**
 * The schema steps of migrations.ts on PostgreSQL. The version lives in the one-row table
 * `tensormine_schema` (SQLite's is `PRAGMA user_version`). Each step runs in its own
 * transaction (PostgreSQL's DDL is transactional) holding a transaction-level advisory lock,
 * and re-reads the version under that lock: several validator processes starting at once on
 * an empty database apply each step exactly once, and the others wait, then see it applied.
 */

/** The advisory lock key of schema changes (any constant; "tensormine" in ASCII, truncated). */
const MIGRATION_LOCK = 0x74656e736f72;

export async function migratePostgres(
  client: pg.ClientBase,
  options: MigrateOptions,
): Promise<MigrateResult> {
  const migrations = options.migrations ?? MIGRATIONS;
  checkMigrations(migrations);
  const latest = migrations.length;
  await inTransaction(client, async () => {
    await client.query(
      'CREATE TABLE IF NOT EXISTS tensormine_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)',
    );
    await client.query(
      'INSERT INTO tensormine_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING',
    );
  });
  const from = await postgresSchemaVersion(client);
  if (from > latest) throw tooNew(options.location, from, latest);
  const applied: number[] = [];
  for (const step of migrations) {
    if (step.version <= from) continue;
    try {
      await inTransaction(client, async () => {
        const current = await postgresSchemaVersion(client);
        if (current > latest) throw tooNew(options.location, current, latest);
        if (current >= step.version) return;
        await client.query(stepSql(step, postgresDialect));
        await client.query('UPDATE tensormine_schema SET version = $1 WHERE id = 1', [step.version]);
        applied.push(step.version);
      });
    } catch (error) {
      if (error instanceof StorageError) throw error;
      throw new StorageError(
        'migration_failed',
        `schema migration ${step.version} (${step.name}) of ${options.location} failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  return { from, to: await postgresSchemaVersion(client), applied };
}

/** The schema version of a PostgreSQL database (0 when the validator never wrote to it). */
export async function postgresSchemaVersion(client: pg.ClientBase): Promise<number> {
  const exists = await client.query("SELECT to_regclass('tensormine_schema') IS NOT NULL AS present");
  if (exists.rows[0]?.present !== true) return 0;
  const result = await client.query('SELECT version FROM tensormine_schema WHERE id = 1');
  const version: unknown = result.rows[0]?.version;
  return typeof version === 'number' ? version : 0;
}

async function inTransaction(client: pg.ClientBase, fn: () => Promise<void>): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await fn();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
