import { StorageError } from '../errors.js';
import { MAX_NOTIFICATION_BYTES } from '../types/storage.js';
import type { SqlExecutor, SqlStatement } from './executor.js';

/** A notification queued by a transaction (see `StorageTx.notify`). */
export interface QueuedNotification {
  readonly channel: string;
  readonly payload: string;
}

/** One transaction or read: whether it is still running and whether it may write. */
export class Scope {
  active = true;
  /** Notifications queued by this transaction, in order (see StorageTx.notify). */
  readonly notifications: QueuedNotification[] = [];
  /** Counter additions of this transaction by counter name, written just before COMMIT (counters.ts). */
  readonly counterDeltas = new Map<string, number>();
  /**
   * The first statement of this writing transaction that failed, awaited by its caller or not,
   * set as soon as it failed (before the callback's own continuation runs). Every statement
   * decides the transaction: a failed one fails it even if nobody awaited it (SQLite checks
   * `failed` after the callback, before releasing its savepoint; on PostgreSQL the failure
   * aborts the transaction and the COMMIT answers ROLLBACK). So a repository or a callback may
   * leave the statements whose answer it does not need in flight: on PostgreSQL they travel
   * with the COMMIT, one round trip less (docs/storage.md, "Few round trips").
   */
  failed: { readonly error: unknown } | undefined;
  readonly #statements: SqlExecutor;

  constructor(
    statements: SqlExecutor,
    readonly readOnly: boolean,
  ) {
    this.#statements = readOnly ? statements : tracking(statements, this);
  }

  /** The statements, if the transaction is still running. */
  read(): SqlExecutor {
    if (!this.active) {
      throw new StorageError(
        'transaction_finished',
        'this tx belongs to a transaction that has ended: use the tx of a running transaction, and await every call inside the callback',
      );
    }
    return this.#statements;
  }

  /** The statements, if the transaction is still running and may write. */
  write(what: string): SqlExecutor {
    const statements = this.read();
    if (this.readOnly) {
      throw new StorageError(
        'read_only',
        `${what} writes, but this is storage.read(): write in storage.transaction()`,
      );
    }
    return statements;
  }
}

/**
 * The executor, each statement's failure kept in `scope.failed` (so a statement left in flight
 * is no unhandled rejection: its failure fails the transaction instead).
 */
function tracking(inner: SqlExecutor, scope: Scope): SqlExecutor {
  const keep = <T>(promise: Promise<T>): Promise<T> => {
    promise.catch((error: unknown) => {
      scope.failed ??= { error };
    });
    return promise;
  };
  return {
    dialect: inner.dialect,
    prepare(sql: string): SqlStatement {
      const statement = inner.prepare(sql);
      return {
        get: (...params) => keep(statement.get(...params)),
        all: (...params) => keep(statement.all(...params)),
        run: (...params) => keep(statement.run(...params)),
      };
    },
    exec: (sql) => keep(inner.exec(sql)),
  };
}

const CHANNEL = /^[a-z][a-z0-9_]{0,62}$/;

/** @throws StorageError `invalid_value` for a bad channel name or a payload over 7000 bytes. */
export function checkNotification(channel: string, payload: string): void {
  if (typeof channel !== 'string' || !CHANNEL.test(channel)) {
    throw new StorageError(
      'invalid_value',
      `notify/listen: channel must be 1 to 63 characters among a-z, 0-9 and _, starting with a letter; got ${JSON.stringify(String(channel)).slice(0, 80)}`,
    );
  }
  if (typeof payload !== 'string' || Buffer.byteLength(payload, 'utf8') > MAX_NOTIFICATION_BYTES) {
    throw new StorageError(
      'invalid_value',
      `notify: the payload must be a string of at most ${MAX_NOTIFICATION_BYTES} UTF-8 bytes`,
    );
  }
}
