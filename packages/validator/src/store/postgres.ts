import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { postgresDialect } from './dialect.js';
import { nestedTransactionError, StorageError } from './errors.js';
import type { MigrateResult } from './migrations.js';
import { PostgresListener } from './postgres-listen.js';
import { migratePostgres } from './postgres-migrations.js';
import type { Row, SqlExecutor, SqlStatement, SqlValue } from './sql/executor.js';
import { Scope } from './sql/scope.js';
import { SqlTx } from './sql/tx.js';
import type { Storage, StorageTx } from './types.js';

export interface PostgresStorageOptions {
  /** `postgres://user:password@host:port/database` (libpq-style query parameters allowed, e.g. `?sslmode=require`). */
  readonly url: string;
  /** Connections used for transactions and reads. Default 10. */
  readonly poolSize?: number;
  /** Shown in `pg_stat_activity` (the cluster sets it to the node's name). Default `tensormine-validator`. */
  readonly applicationName?: string;
  /** How many times a transaction is tried before a serialization conflict is given up. Default 30. */
  readonly maxAttempts?: number;
  /** How long to wait for a connection, in milliseconds. Default 10 000. */
  readonly connectTimeoutMs?: number;
  /**
   * For how long, in milliseconds, a transaction whose connection was lost (or that met a
   * server that takes no writes: a standby, a demoted primary) is re-run on a new connection
   * before it is given up as `storage_unavailable`. Default 5 000: a lost connection or a
   * switchover is ridden out; a failover that takes longer is answered 503 with Retry-After
   * (docs/cluster.md).
   */
  readonly unavailableRetryMs?: number;
}

export const DEFAULT_POOL_SIZE = 10;
const DEFAULT_MAX_ATTEMPTS = 30;
const DEFAULT_UNAVAILABLE_RETRY_MS = 5_000;

/**
 * Opens (migrating if needed) the validator's storage on PostgreSQL.
 * @throws StorageError `invalid_value` for a URL that is not postgres://, `schema_too_new`,
 *   `migration_failed`; the driver's error when the server cannot be reached.
 */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<PostgresStorage> {
  return PostgresStorage.open(options);
}

/**
 * The storage on PostgreSQL, for several validator processes sharing one database.
 *
 * Isolation: every `transaction` runs at SERIALIZABLE, so the outcome of concurrent
 * transactions, from this process or any other, is that of some serial order: the economy's
 * read-check-write sequences (a balance read then debited, a stake read open then closed, a
 * coordinate read free then taken) need no explicit row locks. A transaction that loses a
 * conflict (SQLSTATE 40001, or a deadlock, 40P01) is rolled back and its callback re-run, with
 * a growing random pause, up to `maxAttempts` times: callbacks must act only through `tx`
 * (docs/storage.md lists how the validator's callbacks keep to that). A transaction whose
 * connection is lost before its COMMIT was sent is re-run on another connection; one lost
 * during COMMIT is not (its outcome is unknown) and rejects.
 *
 * `read` runs at REPEATABLE READ, READ ONLY: one consistent snapshot, never a conflict.
 * Reads of this process run concurrently, up to `poolSize` at once; its write transactions run
 * one at a time (a second writer of the same node would only conflict with the first on the
 * validator's hot rows and be re-run: with ten at once a node committed half the blocks per
 * second, at four times the p99; docs/storage.md),
 * so conflicts come only from other nodes. Notifications
 * queued by `tx.notify` are sent with `pg_notify` just before COMMIT; `listen` uses a
 * dedicated connection ({@link PostgresListener}).
 *
 * Failover (docs/cluster.md): a connection that breaks, and a write refused because the server
 * is not (or no longer) a primary (SQLSTATE 25006 read_only_sql_transaction, or a hot standby's
 * refusal of SERIALIZABLE), are the same event to a transaction: the connection is discarded
 * (the pool opens a new one, to whatever server the URL reaches now) and the callback is re-run,
 * for up to `unavailableRetryMs`; after that it is `storage_unavailable`. Nothing of a failed
 * attempt is written (a transaction is atomic); only a connection lost during COMMIT leaves
 * the outcome unknown, and that attempt is never re-run.
 */
export class PostgresStorage implements Storage {
  readonly location: string;
  /** The schema version of the database after opening, and what opening applied. */
  readonly migration: MigrateResult;
  readonly #pool: pg.Pool;
  readonly #listener: PostgresListener;
  readonly #inside = new AsyncLocalStorage<Scope>();
  readonly #maxAttempts: number;
  readonly #unavailableRetryMs: number;
  readonly #slots: Semaphore;
  /** Write transactions of this node, one at a time (see the class comment). */
  readonly #writer = new Semaphore(1);
  #running = 0;
  #idle: (() => void) | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  private constructor(
    pool: pg.Pool,
    listener: PostgresListener,
    location: string,
    migration: MigrateResult,
    maxAttempts: number,
    poolSize: number,
    unavailableRetryMs: number,
  ) {
    this.#pool = pool;
    this.#listener = listener;
    this.location = location;
    this.migration = migration;
    this.#maxAttempts = maxAttempts;
    this.#unavailableRetryMs = unavailableRetryMs;
    this.#slots = new Semaphore(poolSize);
  }

  static async open(options: PostgresStorageOptions): Promise<PostgresStorage> {
    const location = redactDatabaseUrl(options.url);
    const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    const unavailableRetryMs = options.unavailableRetryMs ?? DEFAULT_UNAVAILABLE_RETRY_MS;
    for (const [what, value, min] of [
      ['maxAttempts', maxAttempts, 1],
      ['poolSize', poolSize, 1],
      ['unavailableRetryMs', unavailableRetryMs, 0],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < min) {
        throw new StorageError(
          'invalid_value',
          `${what}: expected an integer of at least ${min}, got ${String(value)}`,
        );
      }
    }
    const config = clientConfig(options);
    const pool = new pg.Pool({ ...config, max: poolSize });
    // An idle connection that breaks (the server restarted, an administrator terminated it)
    // is discarded by the pool, which opens another when needed; without a listener the
    // pool's 'error' event would end the process.
    pool.on('error', () => undefined);
    try {
      const client = await pool.connect();
      let migration: MigrateResult;
      try {
        migration = await migratePostgres(client, { location });
      } finally {
        client.release();
      }
      const listener = new PostgresListener({
        ...config,
        application_name: `${config.application_name}-listen`,
      });
      return new PostgresStorage(
        pool,
        listener,
        location,
        migration,
        maxAttempts,
        poolSize,
        unavailableRetryMs,
      );
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  transaction<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    this.#checkOutside('transaction');
    return this.#track(() => this.#run(false, fn));
  }

  read<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    this.#checkOutside('read');
    return this.#track(() => this.#run(true, fn));
  }

  listen(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>> {
    if (this.#closed) {
      return Promise.reject(
        new StorageError('storage_closed', `storage.listen() after close() of ${this.location}`),
      );
    }
    return this.#listener.listen(channel, handler);
  }

  /**
   * Calls `fn` each time the listening connection was lost and is listening again: payloads
   * notified in between were not delivered, so a consumer re-reads what it follows. Returns a
   * function that stops it.
   */
  onListenReconnect(fn: () => void): () => void {
    return this.#listener.onReconnect(fn);
  }

  /** Waits for the running transactions, then closes every connection. Idempotent. */
  close(): Promise<void> {
    this.#checkOutside('close');
    this.#closing ??= (async () => {
      this.#closed = true;
      if (this.#running > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
      await this.#listener.close();
      await this.#pool.end();
    })();
    return this.#closing;
  }

  async #track<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#closed)
      throw new StorageError('storage_closed', `storage used after close() of ${this.location}`);
    this.#running++;
    try {
      return await fn();
    } finally {
      this.#running--;
      if (this.#running === 0) this.#idle?.();
    }
  }

  async #run<T>(readOnly: boolean, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + this.#unavailableRetryMs;
    for (let attempt = 1; ; attempt++) {
      // At most poolSize transactions hold a connection; the others wait here (without the
      // pool's connection timeout, which is for reaching the server).
      if (!readOnly) await this.#writer.acquire();
      await this.#slots.acquire();
      let client: pg.PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (error) {
        this.#slots.release();
        if (!readOnly) this.#writer.release();
        // (Through a proxy during a failover, connecting fails at once: try again for a while.)
        if (Date.now() < giveUpAt && !this.#pool.ended && !this.#closed) {
          await pause(attempt);
          continue;
        }
        throw new StorageError('storage_unavailable', `cannot reach the database ${this.location}`, {
          cause: error,
        });
      }
      const executor = new PostgresExecutor(client, readOnly);
      // A checked-out connection that breaks emits 'error'; unheard, it would end the process.
      const onError = () => {
        executor.lost = true;
      };
      client.on('error', onError);
      const scope = new Scope(executor, readOnly);
      let commitSent = false;
      try {
        await executor.exec(
          readOnly
            ? 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY'
            : 'BEGIN ISOLATION LEVEL SERIALIZABLE',
        );
        const value = await this.#inside.run(scope, () => fn(new SqlTx(scope)));
        scope.active = false;
        for (const { channel, payload } of scope.notifications) {
          await executor.prepare('SELECT pg_notify(?, ?)').run(channel, payload);
        }
        if (executor.lost) throw new Error('the connection was lost before COMMIT');
        commitSent = true;
        await executor.exec('COMMIT');
        client.off('error', onError);
        client.release();
        return value;
      } catch (error) {
        scope.active = false;
        const lost = executor.lost || isConnectionError(error);
        if (lost) {
          client.release(error instanceof Error ? error : new Error(String(error)));
        } else {
          await client.query('ROLLBACK').catch(() => undefined);
          client.release();
        }
        client.off('error', onError);
        // A conflict seen by any statement makes the attempt void, whatever the callback
        // made of the error (it may have caught it and thrown something else). A COMMIT that
        // a broken connection refused to send ("not queryable") was never sent.
        const conflict = executor.conflict || isConflict(error);
        const unsent = !commitSent || String((error as Error)?.message).includes('not queryable');
        const retry =
          !this.#pool.ended &&
          ((conflict && attempt < this.#maxAttempts) || (lost && unsent && Date.now() < giveUpAt));
        if (!retry) {
          if (error instanceof StorageError || !(conflict || lost)) throw error;
          throw conflict
            ? new StorageError(
                'storage_busy',
                `the transaction lost ${attempt} runs to concurrent transactions; nothing was written`,
                { cause: error },
              )
            : new StorageError(
                'storage_unavailable',
                commitSent && !unsent
                  ? 'the connection to the database broke during COMMIT: the outcome is unknown'
                  : 'the connection to the database broke; nothing was written',
                { cause: error },
              );
        }
      } finally {
        this.#slots.release();
        if (!readOnly) this.#writer.release();
      }
      await pause(attempt);
    }
  }

  #checkOutside(what: string): void {
    if (this.#inside.getStore()?.active) {
      throw nestedTransactionError(what);
    }
  }
}

/** A counting semaphore: at most `size` holders at once, the others wait in order. */
class Semaphore {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#free++;
    else next();
  }
}

/** The repositories' executor on one pooled connection, inside one transaction. */
class PostgresExecutor implements SqlExecutor {
  readonly dialect = postgresDialect;
  /** A statement failed with a serialization conflict or a deadlock. */
  conflict = false;
  /**
   * A statement failed because the connection broke, or because the server takes no writes (a
   * standby): either way the connection is discarded and the transaction may be re-run.
   */
  lost = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly readOnly: boolean,
  ) {}

  #classify(error: unknown): void {
    if (isConflict(error)) this.conflict = true;
    if (isConnectionError(error) || (!this.readOnly && isNotPrimary(error))) this.lost = true;
  }

  prepare(sql: string): SqlStatement {
    const { name, text } = translate(sql);
    const query = async (params: SqlValue[]) => {
      try {
        return await this.client.query<Row>({ name, text, values: params.map(toParam) });
      } catch (error) {
        this.#classify(error);
        throw error;
      }
    };
    return {
      get: async (...params) => (await query(params)).rows[0],
      all: async (...params) => (await query(params)).rows,
      run: async (...params) => ({ changes: (await query(params)).rowCount ?? 0 }),
    };
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.client.query(sql);
    } catch (error) {
      this.#classify(error);
      throw error;
    }
  }
}

const translations = new Map<string, { name: string; text: string }>();

/**
 * `?` placeholders (numbered in order) and `?N` ones to PostgreSQL's `$N`, outside string
 * literals; each distinct SQL text gets a statement name, so that each connection prepares it
 * once.
 */
export function translate(sql: string): { name: string; text: string } {
  let cached = translations.get(sql);
  if (cached === undefined) {
    let text = '';
    let next = 0;
    let quoted = false;
    for (let i = 0; i < sql.length; i++) {
      const c = sql[i] as string;
      if (c === "'") quoted = !quoted;
      if (c !== '?' || quoted) {
        text += c;
        continue;
      }
      const digits = /^\d+/.exec(sql.slice(i + 1))?.[0];
      if (digits !== undefined) {
        text += `$${digits}`;
        i += digits.length;
      } else {
        text += `$${++next}`;
      }
    }
    cached = { name: `tm_${translations.size}`, text };
    translations.set(sql, cached);
  }
  return cached;
}

function toParam(value: SqlValue): string | number | null {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** PostgreSQL's int8 (count(*), BIGINT columns) as a number when it is a safe integer; else the text, which the repositories refuse as corrupt. */
function parseInt8(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

const INT8_OID = 20;

/** The driver configuration shared by the pool and the listening connection. */
export function clientConfig(
  options: PostgresStorageOptions,
): pg.ClientConfig & { application_name: string } {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new StorageError(
      'invalid_value',
      'database URL: not a URL (expected postgres://user:password@host:port/database)',
    );
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new StorageError(
      'invalid_value',
      `database URL: expected the scheme postgres:// or postgresql://, got ${url.protocol}//`,
    );
  }
  return {
    connectionString: options.url,
    application_name: options.applicationName ?? 'tensormine-validator',
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // A server that vanished without closing its connections (a machine lost, a network cut)
    // is found by TCP keepalive instead of never.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID && format !== 'binary'
          ? parseInt8
          : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
    },
  };
}

/** A database URL for logs: the password (and a `password` query parameter) removed. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.searchParams.delete('password');
    return parsed.toString();
  } catch {
    return '(an invalid database URL)';
  }
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** 40001 serialization_failure, 40P01 deadlock_detected. */
export function isConflict(error: unknown): boolean {
  const code = sqlState(error);
  return code === '40001' || code === '40P01';
}

/**
 * The connection broke: the server went away (08xxx connection exceptions, 57P01 admin_shutdown,
 * 57P02 crash_shutdown: another backend crashed, 57P03 cannot_connect_now: the server is
 * starting, stopping or in recovery), or an administrator terminated the session.
 */
export function isConnectionError(error: unknown): boolean {
  const code = sqlState(error);
  if (code !== undefined) {
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
    if (['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT'].includes(code)) return true;
  }
  const message = String((error as Error | null)?.message ?? '');
  return (
    message.includes('Connection terminated') ||
    message.includes('connection error') ||
    message.includes('Client was closed and is not queryable')
  );
}

/**
 * The server takes no writes: SQLSTATE 25006 read_only_sql_transaction (a standby, a primary
 * being demoted, `default_transaction_read_only`), or a hot standby refusing SERIALIZABLE
 * (0A000 "cannot use serializable mode in a hot standby"). In a write transaction this means
 * the connection reached a server that is not the primary (any more): a failover.
 */
export function isNotPrimary(error: unknown): boolean {
  const code = sqlState(error);
  if (code === '25006') return true;
  return code === '0A000' && /hot standby|during recovery/.test(String((error as Error | null)?.message));
}

/** A random pause growing with the attempt (1 to 2^attempt ms, at most 250 ms). */
function pause(attempt: number): Promise<void> {
  const ceiling = Math.min(250, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * ceiling));
}
