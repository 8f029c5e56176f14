import type { DatabaseSync } from 'node:sqlite';
import { StorageError } from './errors.js';

/**
 * The schema of the SQLite database, as an ordered list of steps. The version of a database
 * is `PRAGMA user_version` (0 for a new file): opening a database applies every step above it,
 * each in its own transaction together with the new `user_version`, so a failed step leaves
 * the database at the previous version. A database whose version is above the last step was
 * written by a newer validator and is refused (an older program must not write a schema it
 * does not know).
 *
 * Rules for new steps: append, never edit a released step; add tables and columns rather than
 * change them. A step that has to rebuild a table (SQLite cannot change a constraint in place)
 * follows https://www.sqlite.org/lang_altertable.html#otheralter: create `x_new`, copy, drop,
 * rename, recreate indexes and triggers, in the step's transaction.
 */
export interface Migration {
  /** 1, 2, 3...: the `user_version` after this step. */
  readonly version: number;
  /** For messages: what the step does. */
  readonly name: string;
  /** One or more SQL statements. */
  readonly sql: string;
}

/** A canonical unsigned decimal integer: `0` or `[1-9][0-9]*` (bigint amounts as TEXT). */
const unsigned = (column: string) =>
  `CHECK ((${column} = '0' OR ${column} GLOB '[1-9]*') AND ${column} NOT GLOB '*[^0-9]*')`;

/** A canonical signed decimal integer: `0`, `[1-9][0-9]*` or `-[1-9][0-9]*`. */
const signed = (column: string) =>
  `CHECK ((${column} = '0' OR ${column} GLOB '[1-9]*' OR ${column} GLOB '-[1-9]*') AND ltrim(${column}, '-') NOT GLOB '*[^0-9]*')`;

/**
 * Version 1.
 *
 * Types: every table is STRICT (an INTEGER column refuses 1.5 or '7'). Counts, ids and
 * timestamps are INTEGER; token amounts and hexchain difficulties are bigints stored as
 * canonical decimal TEXT (a balance may exceed a signed 64-bit integer, and SQLite's own
 * arithmetic on such text would go through floating point), parsed with `BigInt` only.
 *
 * Accounts and the ledger. An account is a (pubkey, token) pair; it exists as soon as an entry
 * touches it. `ledger_entries` is the append-only journal (triggers refuse UPDATE and DELETE):
 * one row per signed movement of one token on one account, with a type and a `ref` naming
 * what it is about. `balances` is the sum of an account's entries, kept in the same
 * transaction, never negative. `ledger_totals` keeps, per account and entry type, the sum of
 * credits and of debits (so that "rewards earned" is one row, not a scan).
 *
 * How the economy of a later version hangs off this without redesign: funds held by a module
 * are the balance of a module account whose name cannot be a public key (64 hex digits), for
 * example `@stake`, `@vault`, `@market`, `@pool`, `@swap:TMN/USDT`. Every move is a balanced
 * group of entries applied in one call (a stake: `stake` -x on the user, +x on `@stake`; a
 * swap: user -a TMN, pool +a TMN, pool -b USDT, user +b USDT; a fee: user -f, `@fees` +f), so
 * the "never negative" rule protects pools and escrows too, and the supply of a token is the
 * sum of its balances. The state of each product is its own table, added by a new step, whose
 * rows point at the entries that moved the money (`ref` on the entry, entry ids on the row):
 * `stakes` (id, pubkey, token, amount, lock_expiry, yield_rate_bps, open/close entry ids),
 * `vaults` (id, pubkey, token, amount, unlock_at, deposit/withdraw entry ids), `swap_pools`
 * (pair, fee; the reserves are the pool account's balances), `orders` and `order_fills`
 * (order ids, amount and price as decimal text, fill entry ids), `pool_members` (pubkey,
 * stake, joined_at, entry id). The entry types already list them.
 */
const V1 = `
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE counters (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Serial numbers that are never handed out twice (one row per sequence).
CREATE TABLE sequences (
  name TEXT PRIMARY KEY,
  next_value INTEGER NOT NULL CHECK (next_value >= 0)
) STRICT, WITHOUT ROWID;
INSERT INTO sequences (name, next_value) VALUES ('challenges', 0), ('hex_challenges', 0);

-- AUTOINCREMENT: ids only grow, even if the newest row were ever removed.
CREATE TABLE ledger_entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${signed('amount')},
  timestamp INTEGER NOT NULL,
  ref TEXT,
  idempotency_key TEXT
) STRICT;
CREATE UNIQUE INDEX ledger_entries_idempotency_key ON ledger_entries (idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- Newest-first listings (each index ends with the rowid, id).
CREATE INDEX ledger_entries_pubkey ON ledger_entries (pubkey);
CREATE INDEX ledger_entries_pubkey_token ON ledger_entries (pubkey, token);
CREATE INDEX ledger_entries_pubkey_type ON ledger_entries (pubkey, type);
CREATE INDEX ledger_entries_type ON ledger_entries (type);
CREATE INDEX ledger_entries_token ON ledger_entries (token);
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;

CREATE TABLE balances (
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${unsigned('amount')},
  PRIMARY KEY (pubkey, token)
) STRICT, WITHOUT ROWID;

-- Per account and entry type: the sum of positive amounts and of the magnitudes of negative ones.
CREATE TABLE ledger_totals (
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  type TEXT NOT NULL,
  credited TEXT NOT NULL ${unsigned('credited')},
  debited TEXT NOT NULL ${unsigned('debited')},
  PRIMARY KEY (pubkey, token, type)
) STRICT, WITHOUT ROWID;

CREATE TABLE devices (
  pubkey TEXT PRIMARY KEY,
  device_id TEXT NOT NULL UNIQUE,
  device_type TEXT NOT NULL,
  port INTEGER CHECK (port IS NULL OR port BETWEEN 0 AND 65535),
  registered_at INTEGER NOT NULL,
  last_seen INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX devices_registered ON devices (registered_at, pubkey);
CREATE INDEX devices_type_registered ON devices (device_type, registered_at, pubkey);

CREATE TABLE miners (
  pubkey TEXT PRIMARY KEY,
  proofs_accepted INTEGER NOT NULL CHECK (proofs_accepted >= 0),
  proofs_rejected INTEGER NOT NULL CHECK (proofs_rejected >= 0),
  blocks_accepted INTEGER NOT NULL CHECK (blocks_accepted >= 0),
  last_seen INTEGER
) STRICT, WITHOUT ROWID;

-- v4.0
CREATE TABLE challenges (
  id TEXT PRIMARY KEY,
  serial INTEGER NOT NULL UNIQUE,
  slot INTEGER NOT NULL,
  slot_hash TEXT NOT NULL,
  device_type TEXT NOT NULL,
  difficulty INTEGER NOT NULL,
  dim INTEGER NOT NULL,
  entropy TEXT NOT NULL,
  challenge_hash TEXT NOT NULL,
  issued_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX challenges_expires_at ON challenges (expires_at);

CREATE TABLE proofs (
  challenge_id TEXT NOT NULL REFERENCES challenges (id),
  pubkey TEXT NOT NULL,
  nonce INTEGER NOT NULL,
  accepted_at INTEGER NOT NULL,
  ledger_entry_id INTEGER NOT NULL REFERENCES ledger_entries (id),
  tx_sig TEXT NOT NULL,
  PRIMARY KEY (challenge_id, pubkey)
) STRICT, WITHOUT ROWID;

-- v4.1 hexchain. parents: JSON arrays, read and written whole (at most 6 neighbours).
CREATE TABLE hex_challenges (
  id TEXT PRIMARY KEY,
  serial INTEGER NOT NULL UNIQUE,
  q INTEGER NOT NULL,
  r INTEGER NOT NULL,
  s INTEGER NOT NULL,
  slot INTEGER NOT NULL,
  slot_hash TEXT NOT NULL,
  challenge_hash TEXT NOT NULL,
  target TEXT NOT NULL,
  difficulty TEXT NOT NULL ${unsigned('difficulty')},
  entropy TEXT NOT NULL,
  parents TEXT NOT NULL CHECK (json_valid(parents)),
  depth INTEGER NOT NULL,
  miner_pubkey TEXT,
  issued_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  CHECK (q + r + s = 0)
) STRICT, WITHOUT ROWID;
CREATE INDEX hex_challenges_expires_at ON hex_challenges (expires_at);

-- One block per coordinate, never overwritten (triggers refuse UPDATE and DELETE).
CREATE TABLE blocks (
  height INTEGER PRIMARY KEY CHECK (height >= 1),
  q INTEGER NOT NULL,
  r INTEGER NOT NULL,
  s INTEGER NOT NULL,
  block_hash TEXT NOT NULL UNIQUE,
  pow_hash TEXT NOT NULL,
  depth INTEGER NOT NULL,
  parents TEXT NOT NULL CHECK (json_valid(parents)),
  miner_pubkey TEXT NOT NULL,
  nonce INTEGER NOT NULL,
  challenge_id TEXT NOT NULL REFERENCES hex_challenges (id),
  slot INTEGER NOT NULL,
  difficulty TEXT NOT NULL ${unsigned('difficulty')},
  timestamp_ms INTEGER NOT NULL,
  UNIQUE (q, r, s),
  CHECK (q + r + s = 0)
) STRICT;
CREATE TRIGGER blocks_no_update BEFORE UPDATE ON blocks
BEGIN SELECT RAISE(ABORT, 'blocks are immutable'); END;
CREATE TRIGGER blocks_no_delete BEFORE DELETE ON blocks
BEGIN SELECT RAISE(ABORT, 'blocks are immutable'); END;
`;

/**
 * Issue 9: the (public key, nonce) pairs of accepted signed requests, kept until their replay
 * window closes (plus one window of margin), so that a request replayed after a restart, or to
 * another process sharing this database, is refused (docs/validator.md, "Replay protection").
 */
const V2_REQUEST_NONCES = `
CREATE TABLE request_nonces (
  pubkey TEXT NOT NULL,
  nonce TEXT NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  PRIMARY KEY (pubkey, nonce)
) STRICT, WITHOUT ROWID;
CREATE INDEX request_nonces_expires_at ON request_nonces (expires_at_ms);
`;

/**
 * Version 3: the economy (issue 10). The product tables of the design above. Every amount is
 * canonical decimal TEXT of minor units; a price is TEXT in 10^-18 units of the quote token per
 * whole token, with `price_key` (the same integer zero-padded to 39 digits) so that the book
 * can be ordered by price in SQL.
 *
 * `economy_requests` holds the result of each signed state-changing economy request, keyed by
 * (signer, nonce) and written in the transaction that moved the money: a retry of the identical
 * signed request (same `request_hash`) returns the stored result instead of executing again;
 * another request reusing the nonce is refused. Results are kept 7 days (then a retry is refused
 * as expired by the signed-request check: it never executes twice either way).
 */
const V3_ECONOMY = `
CREATE TABLE economy_requests (
  pubkey TEXT NOT NULL,
  nonce TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  operation TEXT NOT NULL,
  result TEXT NOT NULL CHECK (json_valid(result)),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (pubkey, nonce)
) STRICT, WITHOUT ROWID;
CREATE INDEX economy_requests_created_at ON economy_requests (created_at);

INSERT INTO sequences (name, next_value) VALUES ('stakes', 1), ('vaults', 1), ('orders', 1), ('swaps', 1);

CREATE TABLE transfers (
  id TEXT PRIMARY KEY,
  from_pubkey TEXT NOT NULL,
  to_pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${unsigned('amount')},
  memo TEXT,
  timestamp INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE stakes (
  id TEXT PRIMARY KEY,
  serial INTEGER NOT NULL UNIQUE,
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${unsigned('amount')},
  lock_days INTEGER NOT NULL CHECK (lock_days IN (0, 7, 30)),
  yield_bps INTEGER NOT NULL CHECK (yield_bps >= 0),
  penalty_bps INTEGER NOT NULL CHECK (penalty_bps >= 0),
  created_at INTEGER NOT NULL,
  lock_expiry INTEGER NOT NULL,
  yield_paid TEXT NOT NULL ${unsigned('yield_paid')},
  last_claim_at INTEGER NOT NULL,
  closed_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX stakes_pubkey_open ON stakes (pubkey, serial) WHERE closed_at IS NULL;

CREATE TABLE vaults (
  id TEXT PRIMARY KEY,
  serial INTEGER NOT NULL UNIQUE,
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${unsigned('amount')},
  unlock_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  withdrawn_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX vaults_pubkey ON vaults (pubkey, serial);

CREATE TABLE swap_pools (
  pair TEXT PRIMARY KEY,
  base TEXT NOT NULL,
  quote TEXT NOT NULL,
  fee_bps INTEGER NOT NULL CHECK (fee_bps >= 0 AND fee_bps < 10000),
  created_at INTEGER NOT NULL,
  UNIQUE (base, quote)
) STRICT, WITHOUT ROWID;

CREATE TABLE orders (
  id TEXT PRIMARY KEY,
  serial INTEGER NOT NULL UNIQUE,
  pubkey TEXT NOT NULL,
  side TEXT NOT NULL CHECK (side IN ('buy', 'sell')),
  token TEXT NOT NULL,
  quote_token TEXT NOT NULL,
  price TEXT NOT NULL ${unsigned('price')},
  price_key TEXT NOT NULL CHECK (length(price_key) = 39),
  amount TEXT NOT NULL ${unsigned('amount')},
  filled TEXT NOT NULL ${unsigned('filled')},
  escrow TEXT NOT NULL ${unsigned('escrow')},
  status TEXT NOT NULL CHECK (status IN ('open', 'partially_filled', 'filled', 'cancelled')),
  created_at INTEGER NOT NULL,
  closed_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX orders_book ON orders (token, quote_token, side, price_key, serial)
  WHERE status IN ('open', 'partially_filled');
CREATE INDEX orders_resting ON orders (serial) WHERE status IN ('open', 'partially_filled');
CREATE INDEX orders_pubkey ON orders (pubkey, serial);

CREATE TABLE order_fills (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  taker_order_id TEXT NOT NULL REFERENCES orders (id),
  maker_order_id TEXT NOT NULL REFERENCES orders (id),
  amount TEXT NOT NULL ${unsigned('amount')},
  price TEXT NOT NULL ${unsigned('price')},
  quote_amount TEXT NOT NULL ${unsigned('quote_amount')},
  executed_at INTEGER NOT NULL
) STRICT;
CREATE INDEX order_fills_taker ON order_fills (taker_order_id);
CREATE INDEX ledger_entries_pubkey_type_time ON ledger_entries (pubkey, type, timestamp);
`;

/**
 * Version 4: the mining pool (services/pool/, docs/protocol.md sections 4.13 to 4.16). A member's stake is
 * the balance it moved to `@pool` by a `pool_join` entry; `pool_members.stake` mirrors it for
 * listing. Shares are kept (the pow hash is unique, so a share is counted once) and the PPLNS
 * window reads the newest paid ones; a paid block has one `pool_blocks` row written in the same
 * transaction as its `pool_payout` entries, so a block is paid once or not at all.
 */
const POOL = `
CREATE TABLE pool_members (
  pubkey TEXT PRIMARY KEY,
  stake TEXT NOT NULL ${unsigned('stake')},
  joined_at INTEGER,
  share_difficulty TEXT CHECK (share_difficulty IS NULL OR (share_difficulty GLOB '[1-9]*' AND share_difficulty NOT GLOB '*[^0-9]*')),
  vardiff_since_ms INTEGER NOT NULL,
  vardiff_shares INTEGER NOT NULL CHECK (vardiff_shares >= 0),
  shares_accepted INTEGER NOT NULL CHECK (shares_accepted >= 0),
  shares_stale INTEGER NOT NULL CHECK (shares_stale >= 0),
  shares_rejected INTEGER NOT NULL CHECK (shares_rejected >= 0),
  blocks_found INTEGER NOT NULL CHECK (blocks_found >= 0),
  last_share_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX pool_members_joined ON pool_members (joined_at) WHERE joined_at IS NOT NULL;

CREATE TABLE pool_challenges (
  challenge_id TEXT PRIMARY KEY REFERENCES hex_challenges (id),
  pubkey TEXT NOT NULL,
  share_difficulty TEXT NOT NULL ${unsigned('share_difficulty')}
) STRICT, WITHOUT ROWID;

CREATE TABLE pool_shares (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  pubkey TEXT NOT NULL,
  challenge_id TEXT NOT NULL REFERENCES hex_challenges (id),
  pow_hash TEXT NOT NULL UNIQUE,
  difficulty TEXT NOT NULL ${unsigned('difficulty')},
  stale INTEGER NOT NULL CHECK (stale IN (0, 1)),
  created_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX pool_shares_paid ON pool_shares (id) WHERE stale = 0;

CREATE TABLE pool_blocks (
  block_hash TEXT PRIMARY KEY,
  height INTEGER NOT NULL UNIQUE,
  q INTEGER NOT NULL,
  r INTEGER NOT NULL,
  s INTEGER NOT NULL,
  finder TEXT NOT NULL,
  reward TEXT NOT NULL ${unsigned('reward')},
  fee TEXT NOT NULL ${unsigned('fee')},
  window TEXT NOT NULL ${unsigned('window')},
  last_share_id INTEGER NOT NULL,
  payees INTEGER NOT NULL,
  found_at_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TRIGGER pool_blocks_no_update BEFORE UPDATE ON pool_blocks
BEGIN SELECT RAISE(ABORT, 'pool blocks are immutable'); END;
`;

/** The validator nodes sharing this database, with their heartbeats (issue 14, services/cluster.ts). */
const CLUSTER_NODES = `
CREATE TABLE cluster_nodes (
  node_id TEXT PRIMARY KEY,
  instance TEXT NOT NULL,
  url TEXT,
  software_version TEXT NOT NULL,
  started_at_ms INTEGER NOT NULL,
  heartbeat_at_ms INTEGER NOT NULL,
  applied_height INTEGER NOT NULL CHECK (applied_height >= 0),
  synced INTEGER NOT NULL CHECK (synced IN (0, 1)),
  stopped_at_ms INTEGER
) STRICT, WITHOUT ROWID;
`;

/** Every step, in order. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial schema', sql: V1 },
  { version: 2, name: 'signed-request nonces', sql: V2_REQUEST_NONCES },
  {
    version: 3,
    name: 'economy: transfers, stakes, vaults, swap pools, orders, request results',
    sql: V3_ECONOMY,
  },
  { version: 4, name: 'mining pool: members, shares, blocks', sql: POOL },
  { version: 5, name: 'cluster nodes', sql: CLUSTER_NODES },
];

/** The schema version this code writes. */
export const LATEST_SCHEMA_VERSION: number = MIGRATIONS.length;

export interface MigrateOptions {
  /** The database's path, for messages. */
  readonly location: string;
  /** The steps (default {@link MIGRATIONS}; tests pass others). */
  readonly migrations?: readonly Migration[];
}

export interface MigrateResult {
  /** The version found. */
  readonly from: number;
  /** The version now. */
  readonly to: number;
  /** The versions applied by this call, in order. */
  readonly applied: number[];
}

/** The schema version of an open database (`PRAGMA user_version`). */
export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare('PRAGMA user_version').get();
  const version = row?.user_version;
  if (typeof version !== 'number') throw new Error('PRAGMA user_version returned no number');
  return version;
}

/**
 * Brings the database up to the last step. Each step runs in its own `BEGIN IMMEDIATE`
 * transaction that re-reads the version first, so two processes opening the same new file
 * cannot both apply a step.
 * @throws StorageError `schema_too_new` when the database is newer than the steps,
 *   `migration_failed` when a step fails (that step is rolled back).
 */
export function migrate(db: DatabaseSync, options: MigrateOptions): MigrateResult {
  const migrations = options.migrations ?? MIGRATIONS;
  checkMigrations(migrations);
  const latest = migrations.length;
  const from = schemaVersion(db);
  if (from > latest) throw tooNew(options.location, from, latest);
  const applied: number[] = [];
  for (const step of migrations) {
    if (step.version <= from) continue;
    db.exec('BEGIN IMMEDIATE');
    try {
      const current = schemaVersion(db);
      if (current > latest) throw tooNew(options.location, current, latest);
      if (current < step.version) {
        db.exec(step.sql);
        db.exec(`PRAGMA user_version = ${step.version}`);
        applied.push(step.version);
      }
      db.exec('COMMIT');
    } catch (error) {
      rollback(db);
      if (error instanceof StorageError) throw error;
      throw new StorageError(
        'migration_failed',
        `schema migration ${step.version} (${step.name}) of ${options.location} failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  return { from, to: schemaVersion(db), applied };
}

/**
 * Rolls back the open transaction, if there is one: SQLite may already have rolled back by
 * itself (after a disk-full error, for example). `DatabaseSync.isTransaction` would say so,
 * but it needs Node 24.
 */
export function rollback(db: DatabaseSync): void {
  try {
    db.exec('ROLLBACK');
  } catch (error) {
    if (!String((error as Error).message).includes('no transaction is active')) throw error;
  }
}

function tooNew(location: string, version: number, latest: number): StorageError {
  return new StorageError(
    'schema_too_new',
    `the database ${location} has schema version ${version}, but this validator knows versions up to ${latest}: ` +
      'it was written by a newer @tensormine/validator; upgrade the validator or use another data directory',
  );
}

function checkMigrations(migrations: readonly Migration[]): void {
  migrations.forEach((step, index) => {
    if (step.version !== index + 1) {
      throw new Error(`migration ${index}: expected version ${index + 1}, got ${step.version}`);
    }
  });
}
