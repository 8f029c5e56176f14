import { StorageError } from '../errors.js';
import type { SqlExecutor } from './executor.js';

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

  constructor(
    private readonly statements: SqlExecutor,
    readonly readOnly: boolean,
  ) {}

  /** The statements, if the transaction is still running. */
  read(): SqlExecutor {
    if (!this.active) {
      throw new StorageError(
        'transaction_finished',
        'this tx belongs to a transaction that has ended: use the tx of a running transaction, and await every call inside the callback',
      );
    }
    return this.statements;
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

/** The largest payload of a notification, in UTF-8 bytes (PostgreSQL's limit is 8000). */
export const MAX_NOTIFICATION_BYTES = 7000;

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
