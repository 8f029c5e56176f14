import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { sqliteDialect } from './dialect.js';
import { nestedTransactionError, StorageError } from './errors.js';
import { migrate, rollback } from './migrations.js';
import { Mutex } from './mutex.js';
import { writeCounters } from './sql/counters.js';
import type { Row, SqlExecutor, SqlStatement } from './sql/executor.js';
import { checkNotification, type QueuedNotification, Scope } from './sql/scope.js';
import { SqlTx } from './sql/tx.js';
import { checkIsolation, type Storage, type StorageTx, type TransactionOptions } from './types.js';

export interface SqliteStorageOptions {
  /** A file path (its directory is created, mode 0700), or ':memory:' for a private in-memory database. */
  readonly path: string;
  /** How long to wait for a lock held by another process, in milliseconds. Default 5 000. */
  readonly busyTimeoutMs?: number;
  /**
   * SQLite's page cache of this connection, in MiB (default: SQLite's own, 2 MiB). A bulk load
   * (bench/million.bench.ts) sets a large one: with a small cache a long transaction spills its
   * dirty index pages to the WAL again and again.
   */
  readonly cacheSizeMiB?: number;
}

export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/** The most transactions committed together (group commit). */
const MAX_GROUP = 64;

/** A group committed this recently means load: the next one waits a turn to gather requests. */
const BUSY_WINDOW_MS = 5;

interface QueuedTransaction {
  readonly fn: (tx: StorageTx) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Opens (creating and migrating if needed) the embedded SQLite storage of the validator.
 * @throws StorageError `schema_too_new` when the file was written by a newer validator,
 *   `migration_failed`, `wal_unavailable`.
 */
export async function openSqliteStorage(options: SqliteStorageOptions): Promise<SqliteStorage> {
  return SqliteStorage.open(options);
}

/**
 * The storage on node:sqlite: one synchronous connection shared by every request.
 *
 * Transactions are serialised by a FIFO async mutex and committed in groups: the callbacks
 * requested together run one after the other inside one `BEGIN IMMEDIATE` ... `COMMIT`, each in
 * its own SAVEPOINT (rolled back alone, its error rethrown, if it throws), so that concurrent
 * requests share one fsync; see `transaction`. `read` takes the same mutex (with a deferred `BEGIN`,
 * ended by `ROLLBACK`): with one connection, a read that ran while a transaction awaits would
 * see that transaction's uncommitted writes, and reads are short. The price is that a read waits
 * for the running transaction, which is why callbacks must not do slow work.
 *
 * Calling `transaction`, `read` or `close` inside a callback of the same storage would wait
 * for itself forever; an AsyncLocalStorage marks the callbacks, and such a call rejects with
 * `StorageError` `nested_transaction` instead.
 */
export class SqliteStorage implements Storage {
  readonly location: string;
  /** The schema version of the database (the latest this code knows). */
  readonly schemaVersion: number;
  readonly #db: DatabaseSync;
  readonly #cache = new Map<string, SqlStatement>();
  readonly #statements: SqlExecutor;
  /** Listeners by channel (see listen()). */
  readonly #listeners = new Map<string, Set<(payload: string) => void>>();
  readonly #mutex = new Mutex();
  readonly #inside = new AsyncLocalStorage<Scope>();
  /** Transactions waiting for their group (see transaction()). */
  readonly #queue: QueuedTransaction[] = [];
  #scheduled = false;
  /** performance.now() when the last group committed. */
  #lastCommitAt = Number.NEGATIVE_INFINITY;
  #closed = false;
  /** `SELECT total_changes()`, prepared once (see #read). */
  #changes: StatementSync | undefined;

  private constructor(db: DatabaseSync, location: string, schemaVersion: number) {
    this.#db = db;
    this.location = location;
    this.schemaVersion = schemaVersion;
    this.#statements = {
      dialect: sqliteDialect,
      prepare: (sql) => {
        let statement = this.#cache.get(sql);
        if (statement === undefined) {
          statement = asyncStatement(this.#db.prepare(sql));
          this.#cache.set(sql, statement);
        }
        return statement;
      },
      exec: async (sql) => {
        this.#db.exec(sql);
      },
    };
  }

  static async open(options: SqliteStorageOptions): Promise<SqliteStorage> {
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    const file = options.path !== ':memory:';
    if (file) createFile(options.path);
    const db = new DatabaseSync(options.path, { enableForeignKeyConstraints: true });
    try {
      configureConnection(db, { location: options.path, file, busyTimeoutMs });
      if (options.cacheSizeMiB !== undefined) {
        if (!Number.isSafeInteger(options.cacheSizeMiB) || options.cacheSizeMiB < 1) {
          throw new StorageError(
            'invalid_value',
            `cacheSizeMiB: expected a positive integer, got ${String(options.cacheSizeMiB)}`,
          );
        }
        db.exec(`PRAGMA cache_size = -${options.cacheSizeMiB * 1024}`);
      }
      const { to } = migrate(db, { location: options.path });
      return new SqliteStorage(db, options.path, to);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /**
   * Group commit: transactions requested while the database is busy (or within the same turn
   * of the event loop) run one after the other inside ONE SQLite transaction, each in its own
   * SAVEPOINT, and are committed together: one COMMIT, so one fsync, for the group. Each keeps
   * its own atomicity (a callback that throws is rolled back to its savepoint, alone, and its
   * error is rethrown to its caller), isolation (callbacks still run one at a time) and
   * durability (each promise resolves only after the COMMIT of its group).
   */
  transaction<T>(fn: (tx: StorageTx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    this.#checkOutside('transaction');
    // One writer at a time: every isolation is the same here (checked all the same).
    checkIsolation(options);
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  read<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    return this.#read(fn);
  }

  /**
   * In process only: a SQLite file has one writing process (see the class comment), so the
   * listeners of this object are every listener there is. Payloads are delivered right after
   * the COMMIT of their group, in commit order, on a later microtask.
   */
  async listen(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>> {
    checkNotification(channel, '');
    let set = this.#listeners.get(channel);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(channel, set);
    }
    // A wrapper, so that listening twice with one handler delivers twice and stops once each.
    const entry = (payload: string) => handler(payload);
    set.add(entry);
    return async () => {
      const current = this.#listeners.get(channel);
      current?.delete(entry);
      if (current?.size === 0) this.#listeners.delete(channel);
    };
  }

  /** Waits for the running and requested transactions, then closes the database. Idempotent. */
  async close(): Promise<void> {
    this.#checkOutside('close');
    await this.#mutex.run(async () => {
      // Transactions already requested are committed first.
      while (!this.#closed && this.#queue.length > 0) await this.#commitGroup();
      if (this.#closed) return;
      this.#closed = true;
      this.#cache.clear();
      this.#changes = undefined;
      try {
        this.#db.exec('PRAGMA optimize');
      } finally {
        this.#db.close();
      }
    });
  }

  /**
   * A read: the mutex, a deferred `BEGIN`, the callback, then `ROLLBACK` (a read keeps nothing).
   * Writing is refused by the repositories (`read_only`); a statement that wrote all the same
   * (the connection's change count moved) fails the read with `read_only`, its write rolled
   * back. Not `PRAGMA query_only`: setting it expires every prepared statement of the
   * connection, so each statement after a read was compiled again (a share's read and
   * transaction cost several times their work; docs/storage.md, "Pool shares").
   */
  async #read<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    this.#checkOutside('read');
    return this.#mutex.run(async () => {
      if (this.#closed) {
        throw new StorageError('storage_closed', `storage.read() after close() of ${this.location}`);
      }
      const scope = new Scope(this.#statements, true);
      const changes = this.#totalChanges();
      this.#db.exec('BEGIN DEFERRED');
      try {
        const result = await this.#inside.run(scope, () => fn(new SqlTx(scope)));
        scope.active = false;
        if (this.#totalChanges() !== changes) {
          throw new StorageError(
            'read_only',
            'a statement inside storage.read() wrote (rolled back): write in storage.transaction()',
          );
        }
        return result;
      } finally {
        scope.active = false;
        rollback(this.#db);
      }
    });
  }

  /** Rows changed by this connection since it opened (`total_changes()`). */
  #totalChanges(): number {
    this.#changes ??= this.#db.prepare('SELECT total_changes() AS n');
    return Number(this.#changes.get()?.n);
  }

  /**
   * Schedules the next group. Under load (the database busy, or a group committed in the last
   * few milliseconds) it waits for the end of the current turn of the event loop, so that the
   * requests that arrived together join one group; when idle it starts at once, so that a lone
   * transaction pays no delay.
   */
  #schedule(): void {
    if (this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    const start = () => {
      void this.#mutex.run(() => this.#commitGroup());
    };
    const busy = this.#mutex.pending > 0 || performance.now() - this.#lastCommitAt < BUSY_WINDOW_MS;
    if (busy) setImmediate(start);
    else queueMicrotask(start);
  }

  async #commitGroup(): Promise<void> {
    this.#scheduled = false;
    const group = this.#queue.splice(0, MAX_GROUP);
    this.#schedule();
    if (group.length === 0) return;
    if (this.#closed) {
      const error = new StorageError(
        'storage_closed',
        `storage.transaction() after close() of ${this.location}`,
      );
      for (const item of group) item.reject(error);
      return;
    }
    try {
      this.#db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    const done: { item: QueuedTransaction; value: unknown }[] = [];
    const notifications: QueuedNotification[] = [];
    for (const [index, item] of group.entries()) {
      const scope = new Scope(this.#statements, false);
      this.#db.exec('SAVEPOINT group_item');
      try {
        const value = await this.#inside.run(scope, () => item.fn(new SqlTx(scope)));
        // A statement the callback left in flight and that failed fails the callback too.
        if (scope.failed !== undefined) throw scope.failed.error;
        await Promise.all(writeCounters(scope));
        scope.active = false;
        this.#db.exec('RELEASE group_item');
        done.push({ item, value });
        notifications.push(...scope.notifications);
      } catch (error) {
        scope.active = false;
        item.reject(error);
        try {
          this.#db.exec('ROLLBACK TO group_item');
          this.#db.exec('RELEASE group_item');
        } catch (rollbackError) {
          // SQLite rolled the whole transaction back by itself (disk full, I/O error): the
          // group's earlier callbacks are lost with it; the later ones go back to the queue.
          rollback(this.#db);
          for (const d of done) d.item.reject(rollbackError);
          this.#queue.unshift(...group.slice(index + 1));
          this.#schedule();
          return;
        }
      }
    }
    try {
      this.#db.exec('COMMIT');
    } catch (error) {
      rollback(this.#db);
      for (const d of done) d.item.reject(error);
      return;
    }
    this.#lastCommitAt = performance.now();
    for (const d of done) d.item.resolve(d.value);
    if (notifications.length > 0) queueMicrotask(() => this.#deliver(notifications));
  }

  #deliver(notifications: readonly QueuedNotification[]): void {
    for (const { channel, payload } of notifications) {
      for (const handler of this.#listeners.get(channel) ?? []) {
        try {
          handler(payload);
        } catch (error) {
          process.emitWarning(
            `a listener of channel ${channel} threw: ${(error as Error)?.message ?? String(error)}`,
            { code: 'TENSORMINE_LISTENER' },
          );
        }
      }
    }
  }

  #checkOutside(what: string): void {
    if (this.#inside.getStore()?.active) {
      throw nestedTransactionError(what);
    }
  }
}

/**
 * Sets the connection's pragmas.
 * - `journal_mode = WAL` (files): readers do not block the writer, and a commit appends to the
 *   log instead of rewriting pages in place.
 * - `synchronous = FULL`: in WAL mode the default NORMAL does not sync the log at each commit,
 *   so the last acknowledged transactions (an accepted proof, a credited reward, a block) could
 *   disappear after a power loss or an OS crash. FULL syncs the log before COMMIT returns: once
 *   `transaction` has resolved, the write survives a crash. The cost is one fsync per
 *   transaction.
 * - `foreign_keys = ON`: proofs and blocks must point at existing challenges and entries.
 * - `busy_timeout`: wait for a lock held by another process (a backup, the sqlite3 shell)
 *   instead of failing at once.
 * @throws StorageError `wal_unavailable` when the file system cannot hold a WAL database.
 */
export function configureConnection(
  db: DatabaseSync,
  options: { readonly location: string; readonly file: boolean; readonly busyTimeoutMs: number },
): void {
  if (!Number.isSafeInteger(options.busyTimeoutMs) || options.busyTimeoutMs < 0) {
    throw new StorageError(
      'invalid_value',
      `busyTimeoutMs: expected a non-negative integer, got ${String(options.busyTimeoutMs)}`,
    );
  }
  db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
  db.exec('PRAGMA foreign_keys = ON');
  if (options.file) {
    const mode = db.prepare('PRAGMA journal_mode = WAL').get()?.journal_mode;
    if (mode !== 'wal') {
      throw new StorageError(
        'wal_unavailable',
        `could not put ${options.location} in WAL journal mode (got ${String(mode)}); use a local file system`,
      );
    }
  }
  db.exec('PRAGMA synchronous = FULL');
}

/**
 * Creates the directory (mode 0700) and an empty database file (mode 0600: it holds the
 * validator's secret seed; SQLite gives its -wal and -shm files the same mode). An existing
 * file is left as it is.
 */
function createFile(path: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * A node:sqlite statement behind the asynchronous executor interface of the repositories. The
 * work is done synchronously, when called; only the result is wrapped in a promise.
 */
function asyncStatement(statement: StatementSync): SqlStatement {
  return {
    get: async (...params) => statement.get(...params) as Row | undefined,
    all: async (...params) => statement.all(...params) as Row[],
    run: async (...params) => ({ changes: Number(statement.run(...params).changes) }),
  };
}
