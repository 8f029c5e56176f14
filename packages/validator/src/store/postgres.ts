import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { postgresDialect } from './dialect.js';
import { nestedTransactionError, StorageError } from './errors.js';
import type { MigrateResult } from './migrations.js';
import { PostgresListener } from './postgres-listen.js';
import { migratePostgres } from './postgres-migrations.js';
import { writeCounters } from './sql/counters.js';
import type { Row, SqlExecutor, SqlStatement, SqlValue } from './sql/executor.js';
import { Scope } from './sql/scope.js';
import { SqlTx } from './sql/tx.js';
import {
  checkIsolation,
  type Storage,
  type StorageTx,
  type TransactionIsolation,
  type TransactionOptions,
} from './types.js';

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
 * Isolation (docs/storage.md, "Isolation"): a `transaction` runs SERIALIZABLE by default, so
 * the outcome of concurrent transactions, from this process or any other, is that of some
 * serial order; the hot paths (a proof, a block, a share, a transfer, a challenge) run
 * `row-locks` (READ COMMITTED): they take the row locks their decisions depend on, in one order,
 * and wait for each other instead of failing. A transaction that loses a serialization conflict
 * (SQLSTATE 40001) or a deadlock (40P01) is rolled back and its callback re-run, with a growing
 * random pause, up to `maxAttempts` times: callbacks must act only through `tx`. A transaction
 * whose connection is lost (or whose server turned read-only, as a demoted primary does) before
 * its COMMIT was sent is re-run on another connection; one lost during COMMIT is not (its
 * outcome is unknown) and rejects.
 *
 * `read` runs at REPEATABLE READ, READ ONLY: one consistent snapshot, never a conflict; its
 * value is returned as soon as the callback has it (the COMMIT that ends the snapshot follows).
 * Transactions and reads of this process run concurrently, up to `poolSize` at once, each on
 * its own connection. The connections pipeline: statements a callback issues together (and the
 * BEGIN before them, the notifications and COMMIT after) travel in one round trip.
 * Notifications queued by `tx.notify` are sent with `pg_notify` just before COMMIT; `listen`
 * uses a dedicated connection ({@link PostgresListener}).
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
  readonly #stats: TransactionStats = { committed: 0, reruns: 0 };
  /** Reads requested in this turn of the event loop, not started yet (see `read`). */
  #reads: PendingRead[] | undefined;
  #readsRunning = 0;
  /** The connection of the last read batch, its transaction not ended yet (see #runReads). */
  #warm: WarmRead | undefined;
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
    // Pipeline mode: a query is sent when issued, without waiting for the answer to the one
    // before (answers still come back in order, each query has its own Sync).
    const pool = new pg.Pool({ ...config, max: poolSize, pipeline: true } as pg.PoolConfig);
    // An idle connection that breaks (the server restarted, an administrator terminated it)
    // is discarded by the pool, which opens another when needed; without a listener the
    // pool's 'error' event would end the process.
    pool.on('error', () => undefined);
    // A checked-out connection has no pool listener, and a transaction listens to its own only
    // from the moment its code resumes after pool.connect() (a later microtask): a connection
    // cut right after it was opened (a failover terminating fresh sessions, in the same read
    // from the socket as its ReadyForQuery) would emit 'error' unheard and end the process. So
    // every connection keeps a listener for its whole life; the statements of a broken one fail
    // as connection errors (not queryable), and its transaction is re-run on another.
    pool.on('connect', (client) => client.on('error', () => undefined));
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

  transaction<T>(fn: (tx: StorageTx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    this.#checkOutside('transaction');
    const isolation = checkIsolation(options);
    return this.#track(() => this.#run(isolation, fn));
  }

  /**
   * Reads requested together (in one turn of the event loop, while reads are running) share one
   * connection and one snapshot: one BEGIN, their statements in the same writes, one COMMIT. A
   * snapshot shared by reads is as consistent as one each. A read whose batch failed (its
   * connection lost, or another read's failing statement aborted the snapshot) runs again alone.
   */
  read<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    this.#checkOutside('read');
    return this.#track(
      () =>
        new Promise<T>((resolve, reject) => {
          let batch = this.#reads;
          if (batch === undefined) {
            batch = [];
            this.#reads = batch;
            const start = () => {
              this.#reads = undefined;
              void this.#runReads(batch as PendingRead[]);
            };
            if (this.#readsRunning > 0) setImmediate(start);
            else queueMicrotask(start);
          }
          batch.push({ fn, resolve: resolve as (value: unknown) => void, reject });
        }),
    );
  }

  async #runReads(batch: readonly PendingRead[]): Promise<void> {
    this.#readsRunning++;
    // Counted as running (close waits for it), even when close() came in between.
    this.#running++;
    try {
      // The connection of the last batch, its snapshot still open: ending it travels with this
      // batch's BEGIN (one write less per read).
      const warm = this.#warm;
      this.#warm = undefined;
      if (warm !== undefined) {
        clearTimeout(warm.timer);
        warm.client.off('error', warm.onError);
      }
      let client: pg.PoolClient;
      if (warm !== undefined && !warm.executor.lost) {
        client = warm.client;
      } else {
        if (warm !== undefined) {
          // It broke while parked (a failover): discarded, this batch takes another.
          warm.client.release(new Error('the connection was lost'));
          this.#slots.release();
        }
        await this.#slots.acquire();
        try {
          client = await this.#pool.connect();
        } catch {
          this.#slots.release();
          // Each read alone, which tries again for unavailableRetryMs (a failover) before it
          // is storage_unavailable.
          for (const item of batch) void this.#run('read', item.fn).then(item.resolve, item.reject);
          return;
        }
      }
      const executor = new PostgresExecutor(client, true);
      const onError = () => {
        executor.lost = true;
      };
      client.on('error', onError);
      const begin = executor.exec(warm === undefined ? BEGIN.read : `COMMIT; ${BEGIN.read}`);
      begin.catch(() => undefined);
      // Reads that failed through no fault of their own (the connection broke, or another
      // read's failing statement aborted the snapshot): each runs again alone, once this batch
      // has given its connection and its slot back. Run again while the batch still held them,
      // they waited for a slot that batches waiting for their own re-runs could all hold: with
      // every slot so held (one connection in all, or the connections of a failover), for ever.
      const again: PendingRead[] = [];
      const runs = batch.map(async (item) => {
        const scope = new Scope(executor, true);
        try {
          const value = await this.#inside.run(scope, () => item.fn(new SqlTx(scope)));
          scope.active = false;
          await begin;
          item.resolve(value);
        } catch (error) {
          scope.active = false;
          if (executor.lost || isConnectionError(error) || isAborted(error)) again.push(item);
          else item.reject(error);
        }
      });
      await Promise.all(runs);
      if (executor.lost) {
        client.off('error', onError);
        client.release(new Error('the connection was lost'));
        this.#slots.release();
      } else if (this.#warm === undefined && !this.#closed && again.length === 0) {
        // The snapshot's values are final: its COMMIT waits for the next batch (or a moment).
        // Parked, the connection keeps its 'error' listener: one that breaks meanwhile (the
        // primary killed, HAProxy cutting its sessions) emits 'error', which, unheard, would
        // end the process (a checked-out client has no pool listener).
        this.#warm = { client, executor, onError, timer: setTimeout(() => this.#coolDown(), WARM_MS) };
        this.#warm.timer.unref?.();
      } else {
        await this.#endRead(client, onError);
      }
      for (const item of again) void this.#run('read', item.fn).then(item.resolve, item.reject);
    } finally {
      this.#readsRunning--;
      this.#end();
    }
  }

  /** Ends the parked read of the warm connection and gives the connection back. */
  async #coolDown(): Promise<void> {
    const warm = this.#warm;
    if (warm === undefined) return;
    this.#warm = undefined;
    clearTimeout(warm.timer);
    this.#running++;
    try {
      await this.#endRead(warm.client, warm.onError);
    } finally {
      this.#end();
    }
  }

  /** Ends the read transaction, then gives the connection back (its 'error' listener heard until then). */
  async #endRead(client: pg.PoolClient, onError: () => void): Promise<void> {
    await client.query('COMMIT').then(
      () => {
        client.off('error', onError);
        client.release();
      },
      (error: unknown) => {
        client.off('error', onError);
        client.release(error instanceof Error ? error : new Error(String(error)));
      },
    );
    this.#slots.release();
  }

  /**
   * Transactions of this storage since it opened: committed, and runs that were rolled back
   * and run again (a conflict, a deadlock, a lost connection). For benches and logs.
   */
  get stats(): Readonly<TransactionStats> {
    return { ...this.#stats };
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
      await this.#coolDown();
      if (this.#running > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
      await this.#coolDown();
      await this.#listener.close();
      await this.#pool.end();
    })();
    return this.#closing;
  }

  #begin(): void {
    if (this.#closed)
      throw new StorageError('storage_closed', `storage used after close() of ${this.location}`);
    this.#running++;
  }

  #end(): void {
    this.#running--;
    if (this.#running === 0) this.#idle?.();
  }

  async #track<T>(fn: () => Promise<T>): Promise<T> {
    this.#begin();
    try {
      return await fn();
    } finally {
      this.#end();
    }
  }

  async #run<T>(kind: 'read' | TransactionIsolation, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    const readOnly = kind === 'read';
    const giveUpAt = Date.now() + this.#unavailableRetryMs;
    for (let attempt = 1; ; attempt++) {
      // At most poolSize transactions hold a connection; the others wait here (without the
      // pool's connection timeout, which is for reaching the server).
      await this.#slots.acquire();
      let client: pg.PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (error) {
        this.#slots.release();
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
      const release = (error?: Error) => {
        client.off('error', onError);
        client.release(error);
        this.#slots.release();
      };
      const scope = new Scope(executor, readOnly);
      let commitSent = false;
      try {
        // Sent with the callback's first statements. BEGIN fails only with its connection,
        // and then so does every statement after it: nothing runs outside the transaction.
        const begin = executor.exec(BEGIN[kind]);
        begin.catch(() => undefined);
        const value = await this.#inside.run(scope, () => fn(new SqlTx(scope)));
        // The counters' additions go out with the notifications and COMMIT (one round trip).
        const counted = readOnly ? [] : writeCounters(scope);
        scope.active = false;
        // Awaited with COMMIT below; marked handled now, so that none is an unhandled rejection meanwhile.
        for (const statement of counted) statement.catch(() => undefined);
        await begin;
        if (readOnly) {
          // The snapshot's values are final: answer now, end the transaction behind.
          this.#begin();
          executor
            .exec('COMMIT')
            .then(
              () => release(),
              (error: unknown) => release(error instanceof Error ? error : new Error(String(error))),
            )
            .finally(() => this.#end());
          return value;
        }
        const notified = scope.notifications.map(({ channel, payload }) =>
          executor.prepare('SELECT pg_notify(?, ?)').run(channel, payload),
        );
        for (const statement of notified) statement.catch(() => undefined);
        if (executor.lost) throw new Error('the connection was lost before COMMIT');
        // A write left in flight (tx.inFlight) that failed before it reached the server.
        if (scope.failed !== undefined) throw scope.failed.error;
        commitSent = true;
        const commit = executor.commit();
        await Promise.all([...counted, ...notified, commit]);
        // A statement failed unseen (left in flight, or the callback caught its error): the
        // server rolled back. (Every statement the callback issued was answered before COMMIT.)
        if ((await commit) === 'ROLLBACK') {
          throw executor.failure ?? new Error('the transaction was aborted');
        }
        release();
        this.#stats.committed++;
        return value;
      } catch (error) {
        scope.active = false;
        const lost = executor.lost || isConnectionError(error);
        if (lost) {
          release(error instanceof Error ? error : new Error(String(error)));
        } else {
          await client.query('ROLLBACK').catch(() => undefined);
          release();
        }
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
                  : 'the connection to the database broke (or the server is read-only); nothing was written',
                { cause: error },
              );
        }
        this.#stats.reruns++;
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

/** The connection of a finished read batch, its snapshot not ended yet (see `#runReads`). */
interface WarmRead {
  readonly client: pg.PoolClient;
  /** Its batch's executor: `lost` once the connection broke. */
  readonly executor: PostgresExecutor;
  /** Kept on the client while it is parked, removed when it is taken again or released. */
  readonly onError: () => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

interface PendingRead {
  readonly fn: (tx: StorageTx) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** 25P02: a statement of the transaction failed before, the transaction is aborted. */
function isAborted(error: unknown): boolean {
  return sqlState(error) === '25P02';
}

/** Commits and re-runs of a storage (see `PostgresStorage.stats`). */
export interface TransactionStats {
  committed: number;
  reruns: number;
}

/** How long the connection of a finished read batch waits for the next batch before its COMMIT. */
const WARM_MS = 20;

const BEGIN = {
  read: 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY',
  serializable: 'BEGIN ISOLATION LEVEL SERIALIZABLE',
  'row-locks': 'BEGIN ISOLATION LEVEL READ COMMITTED',
} as const;

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

/** The part of a socket the executor corks. */
interface Corkable {
  cork?: () => void;
  uncork?: () => void;
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
  /** The first statement that failed, if any (to say why a COMMIT rolled back). */
  failure: unknown;

  readonly #stream: Corkable | undefined;
  #corked = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly readOnly: boolean,
  ) {
    // The driver's socket (pg keeps it as client.connection.stream).
    this.#stream = (client as unknown as { connection?: { stream?: Corkable } }).connection?.stream;
  }

  #classify(error: unknown): void {
    if (isConflict(error)) this.conflict = true;
    if (isConnectionError(error) || (!this.readOnly && isNotPrimary(error))) this.lost = true;
  }

  prepare(sql: string): SqlStatement {
    const { name, text } = translate(sql);
    const query = (params: SqlValue[]) => {
      this.#cork();
      return this.#watch(this.client.query<Row>({ name, text, values: params.map(toParam) }));
    };
    return {
      get: async (...params) => (await query(params)).rows[0],
      all: async (...params) => (await query(params)).rows,
      run: async (...params) => ({ changes: (await query(params)).rowCount ?? 0 }),
    };
  }

  async exec(sql: string): Promise<void> {
    this.#cork();
    await this.#watch(this.client.query(sql));
  }

  /** Sends COMMIT; resolves with the command the server answered (ROLLBACK for an aborted transaction). */
  async commit(): Promise<string | null> {
    this.#cork();
    return (await this.#watch(this.client.query('COMMIT'))).command;
  }

  /**
   * Holds the socket's writes until the end of this turn of the event loop: the statements a
   * callback issues together (and BEGIN, COMMIT) leave in one write, not one system call each.
   */
  #cork(): void {
    if (this.#corked || this.#stream?.cork === undefined) return;
    this.#corked = true;
    this.#stream.cork();
    process.nextTick(() => {
      this.#corked = false;
      this.#stream?.uncork?.();
    });
  }

  async #watch<R>(query: Promise<R>): Promise<R> {
    try {
      return await query;
    } catch (error) {
      this.failure ??= error;
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
