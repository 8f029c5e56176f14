import { join } from 'node:path';
import { openPostgresStorage } from './postgres.js';
import { openSqliteStorage } from './sqlite.js';
import type { Storage } from './types.js';

export interface OpenStorageSettings {
  /** Where node:sqlite keeps `validator.db`; ':memory:' keeps nothing. */
  readonly dataDir: string;
  /** A postgres:// URL: PostgreSQL instead of node:sqlite. */
  readonly databaseUrl?: string | undefined;
  /** PostgreSQL connections of this process (default 10). */
  readonly databasePoolSize?: number;
  /** PostgreSQL: the name this process shows in `pg_stat_activity`. */
  readonly applicationName?: string;
}

/**
 * The validator's storage for its settings: PostgreSQL when `databaseUrl` is set (several
 * validator processes may share that database), else node:sqlite in `dataDir` (one process).
 * Either way the schema is migrated to the latest version before this resolves.
 */
export async function openStorage(settings: OpenStorageSettings): Promise<Storage> {
  if (settings.databaseUrl !== undefined) {
    return openPostgresStorage({
      url: settings.databaseUrl,
      ...(settings.databasePoolSize === undefined ? {} : { poolSize: settings.databasePoolSize }),
      ...(settings.applicationName === undefined ? {} : { applicationName: settings.applicationName }),
    });
  }
  const inMemory = settings.dataDir === ':memory:';
  return openSqliteStorage({ path: inMemory ? ':memory:' : join(settings.dataDir, 'validator.db') });
}

/** Where the data lives, for a person: the storage's location, or that nothing is kept. */
export function describeStorage(location: string): string {
  if (location === ':memory:') return 'in memory (nothing is kept)';
  if (/^postgres(ql)?:/.test(location)) return `PostgreSQL ${location}`;
  return location;
}
