import { CodedError } from '@tensormine/protocol';

/**
 * Why the storage refused to do something. These are programming or deployment errors, not
 * user input errors: the HTTP layer turns them into a 500 and logs them, except `storage_busy`
 * and `storage_unavailable` (a 503 `service_unavailable`, the request may be sent again).
 * - `nested_transaction`: `transaction`, `read` or `close` was called inside a callback of the
 *   same storage (it would wait for itself forever).
 * - `transaction_finished`: a `tx` was used after its callback's promise settled.
 * - `read_only`: a write was attempted inside `read`.
 * - `storage_closed`: the storage was used after `close`.
 * - `schema_too_new`: the database was written by a newer version of the validator.
 * - `migration_failed`: a schema migration failed (the database keeps its previous version).
 * - `wal_unavailable`: the file system refused the WAL journal (a network file system?).
 * - `invalid_value`: a value that cannot be stored (a non-integer timestamp, an unknown
 *   ledger entry type...).
 * - `corrupt_row`: a stored value does not have the expected type.
 * - `storage_busy`: (PostgreSQL) the transaction lost every re-run to concurrent transactions of
 *   other nodes; nothing of it was written. Not a bug: HTTP answers 503 with Retry-After.
 * - `storage_unavailable`: (PostgreSQL) the database cannot be reached, or the server reached
 *   takes no writes (a standby, during a failover), for longer than the storage re-runs a
 *   transaction (`unavailableRetryMs`); nothing was written, unless the connection broke during
 *   COMMIT (then the outcome is unknown: the message says so). HTTP answers 503 with
 *   Retry-After; sending the identical request again is safe (docs/cluster.md, "Failover").
 */
export type StorageErrorCode =
  | 'nested_transaction'
  | 'transaction_finished'
  | 'read_only'
  | 'storage_closed'
  | 'schema_too_new'
  | 'migration_failed'
  | 'wal_unavailable'
  | 'invalid_value'
  | 'corrupt_row'
  | 'storage_busy'
  | 'storage_unavailable';

/** The error of the storage layer, with a stable `code` (see CodedError). */
export class StorageError extends CodedError<StorageErrorCode> {
  static readonly brand = Symbol.for('@tensormine/validator/StorageError');
  override readonly name = 'StorageError';

  constructor(code: StorageErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, undefined, options);
  }
}

/** The error of `transaction`, `read` or `close` called inside a callback of the same storage. */
export function nestedTransactionError(what: string): StorageError {
  return new StorageError(
    'nested_transaction',
    `storage.${what}() was called inside a transaction or read callback of the same storage; ` +
      'it would wait for that callback to finish, which waits for it: use the tx given to the callback',
  );
}
