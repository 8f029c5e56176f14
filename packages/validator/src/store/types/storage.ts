import { StorageError } from '../errors.js';
import type { DeviceRepo, MinerRepo } from './devices.js';
import type { EconomyRepos } from './economy.js';
import type { BlockRepo, HexChallengeRepo } from './hexchain.js';
import type { LedgerRepo } from './ledger.js';
import type { CounterRepo, MetaRepo, RequestNonceRepo } from './meta.js';
import type { NodeRepo } from './nodes.js';
import type { PoolRepo } from './pool.js';
import type { ChallengeRepo, ProofRepo } from './proofs.js';

/**
 * The storage interface of the validator. Every method is asynchronous so that a PostgreSQL
 * adapter can implement it; the embedded implementation is node:sqlite (sqlite.ts).
 *
 * All writes happen inside `transaction`, which is atomic and isolated: either every write of
 * the callback is committed (and survives a crash once the promise resolves) or none is.
 * Callbacks must not do slow work (no proof verification, no network): verify first, then
 * open a short transaction that re-checks state and writes.
 *
 * Conventions: public keys are 64 lowercase hex digits; amounts are bigint minor units
 * (stored as decimal text, because a balance may exceed a signed 64-bit integer); timestamps
 * are Unix seconds unless a name ends in `Ms`.
 */

export interface Storage {
  /**
   * Runs `fn` in one atomic, isolated transaction: the outcome is as if transactions ran one at
   * a time. SQLite runs them one at a time. PostgreSQL runs them concurrently, isolated as
   * `options.isolation` says, and runs a callback again after a serialization conflict, a
   * deadlock or a connection lost before COMMIT, so `fn` may run more than once: it must only
   * act through `tx` and return a value, never change memory or the world outside (see
   * docs/storage.md).
   */
  transaction<T>(fn: (tx: StorageTx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Runs read-only `fn` against a consistent view (it must not write). */
  read<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T>;
  /**
   * Calls handler with each payload notified on channel by a committed transaction of ANY node
   * sharing this database (this one included). Resolves once listening; the returned function
   * stops it.
   *
   * SQLite: one process owns the file, so "any node" is this storage object: payloads are
   * delivered in process, in commit order, right after the COMMIT of their transaction.
   * PostgreSQL: `LISTEN` on a dedicated connection, reconnected when lost; payloads notified
   * while it was down are NOT delivered, so a consumer re-reads the state it follows after a
   * gap (see `PostgresStorage.onListenReconnect`). The handler must not throw (a throw is
   * reported with `process.emitWarning` and ignored).
   */
  listen(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>;
  /** Where the data lives, for logs: a file path, ':memory:' or a postgres:// URL without its password. */
  readonly location: string;
  close(): Promise<void>;
}

/**
 * How a write transaction is isolated from concurrent ones on PostgreSQL (SQLite runs
 * transactions one at a time: both are the same there). docs/storage.md gives the argument.
 *
 * - `serializable` (the default): SERIALIZABLE. Any read-check-write is safe without thinking
 *   about locks; a transaction that conflicts with a concurrent one is rolled back and re-run.
 * - `row-locks`: READ COMMITTED, for the hot paths written for it. Each statement sees what is
 *   committed when it starts, and a statement that writes a row another transaction holds
 *   waits for it, then acts on the committed row, instead of failing: nothing is re-run but a
 *   deadlock. The callback must therefore (1) read a row whose value decides a write only
 *   after locking it (`ledger.apply` locks its accounts, `pool.getMember(key, { lock: true })`,
 *   `chain.append` the chain head), (2) decide existence by a constraint (an insert that may
 *   conflict) rather than by reading first, and (3) read otherwise only rows that never change.
 */
export type TransactionIsolation = 'serializable' | 'row-locks';

export interface TransactionOptions {
  /** Default `serializable`. */
  readonly isolation?: TransactionIsolation;
}

/** The isolation asked for. @throws StorageError `invalid_value` for an unknown one. */
export function checkIsolation(options: TransactionOptions): TransactionIsolation {
  const isolation = options.isolation ?? 'serializable';
  if (isolation !== 'serializable' && isolation !== 'row-locks') {
    throw new StorageError(
      'invalid_value',
      `transaction: unknown isolation ${JSON.stringify(String(isolation))}`,
    );
  }
  return isolation;
}

export interface StorageTx {
  readonly meta: MetaRepo;
  readonly counters: CounterRepo;
  readonly ledger: LedgerRepo;
  readonly devices: DeviceRepo;
  readonly challenges: ChallengeRepo;
  readonly proofs: ProofRepo;
  readonly miners: MinerRepo;
  readonly hexChallenges: HexChallengeRepo;
  readonly blocks: BlockRepo;
  readonly economy: EconomyRepos;
  readonly pool: PoolRepo;
  readonly requestNonces: RequestNonceRepo;
  /** The validator nodes sharing the database (heartbeats; services/cluster.ts). */
  readonly nodes: NodeRepo;
  /**
   * Queues a notification, delivered to every listener if and only if the transaction commits.
   * Payload <= MAX_NOTIFICATION_BYTES. `channel`: 1 to 63 characters among a-z, 0-9 and _, starting with
   * a letter. Refused in `read`.
   */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Leaves a write whose answer the callback does not need in flight (on PostgreSQL it travels
   * with the COMMIT: one round trip less): its failure fails the transaction, and is never an
   * unhandled rejection. Every write the callback does not await goes through here.
   */
  inFlight(write: Promise<unknown>): void;
}

/** The largest payload of a notification, in UTF-8 bytes (PostgreSQL's limit is 8000). */
export const MAX_NOTIFICATION_BYTES = 7000;
