import type { DatabaseSync } from 'node:sqlite';
import { type Dialect, sqliteDialect } from './dialect.js';
import { StorageError } from './errors.js';

/**
 * The schema of the storage, as an ordered list of steps written once for both engines: each
 * step is SQL with the named substitutions of a {@link Dialect} (column types, CHECKs on
 * decimal text, immutability triggers), rendered for SQLite here and for PostgreSQL by
 * postgres-migrations.ts. On SQLite the version of a database
 * is `PRAGMA user_version` (0 for a new file): opening a database applies every step above it,
 * each in its own transaction together with the new `user_version`, so a failed step leaves
 * the database at the previous version. A database whose version is above the last step was
 * written by a newer validator and is refused (an older program must not write a schema it
 * does not know).
 *
 * Rules for new steps: append, never edit a released step; add tables and columns rather than
 * change them. Write a step once, with the {@link Dialect} substitutions (`${d.int}` for a
 * 64-bit integer...), so that it renders for both engines; a new serial sequence is a row of
 * `sequences` plus `${d.sequences([[name, start]])}` (PostgreSQL's native sequence). A step that has to rebuild a table (SQLite cannot change a constraint in place)
 * follows https://www.sqlite.org/lang_altertable.html#otheralter: create `x_new`, copy, drop,
 * rename, recreate indexes and triggers, in the step's transaction.
 */
export interface Migration {
  /** 1, 2, 3...: the `user_version` after this step. */
  readonly version: number;
  /** For messages: what the step does. */
  readonly name: string;
  /**
   * One or more SQL statements: the same text for both engines, or rendered per dialect
   * (a plain string must then be SQL both accept: no STRICT, no GLOB, no SQLite INTEGER for
   * values above 2^31).
   */
  readonly sql: string | ((dialect: Dialect) => string);
}

/** The SQL of a step for a dialect. */
export function stepSql(step: Migration, dialect: Dialect): string {
  return typeof step.sql === 'string' ? step.sql : step.sql(dialect);
}

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
const V1 = (d: Dialect) => `${d.prelude}
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
)${d.clustered};

CREATE TABLE counters (
  name TEXT PRIMARY KEY,
  value ${d.int} NOT NULL
)${d.clustered};

-- Serial numbers that are never handed out twice (one row per sequence).
CREATE TABLE sequences (
  name TEXT PRIMARY KEY,
  next_value ${d.int} NOT NULL CHECK (next_value >= 0)
)${d.clustered};
INSERT INTO sequences (name, next_value) VALUES ('challenges', 0), ('hex_challenges', 0);${d.sequences([
  ['challenges', 0],
  ['hex_challenges', 0],
])}

-- AUTOINCREMENT: ids only grow, even if the newest row were ever removed.
CREATE TABLE ledger_entries (
  id ${d.autoId},
  type TEXT NOT NULL,
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${d.signed('amount')},
  timestamp ${d.int} NOT NULL,
  ref TEXT,
  idempotency_key TEXT
)${d.strict};
CREATE UNIQUE INDEX ledger_entries_idempotency_key ON ledger_entries (idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- Newest-first listings (each index ends with the rowid, id).
CREATE INDEX ledger_entries_pubkey ON ledger_entries (pubkey${d.rowid('id')});
CREATE INDEX ledger_entries_pubkey_token ON ledger_entries (pubkey, token${d.rowid('id')});
CREATE INDEX ledger_entries_pubkey_type ON ledger_entries (pubkey, type${d.rowid('id')});
CREATE INDEX ledger_entries_type ON ledger_entries (type${d.rowid('id')});
CREATE INDEX ledger_entries_token ON ledger_entries (token${d.rowid('id')});
${d.refuse('ledger_entries_no_update', 'UPDATE', 'ledger_entries', 'ledger entries are append-only')}
${d.refuse('ledger_entries_no_delete', 'DELETE', 'ledger_entries', 'ledger entries are append-only')}

CREATE TABLE balances (
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${d.unsigned('amount')},
  PRIMARY KEY (pubkey, token)
)${d.clustered};

-- Per account and entry type: the sum of positive amounts and of the magnitudes of negative ones.
CREATE TABLE ledger_totals (
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  type TEXT NOT NULL,
  credited TEXT NOT NULL ${d.unsigned('credited')},
  debited TEXT NOT NULL ${d.unsigned('debited')},
  PRIMARY KEY (pubkey, token, type)
)${d.clustered};

CREATE TABLE devices (
  pubkey TEXT PRIMARY KEY,
  device_id TEXT NOT NULL UNIQUE,
  device_type TEXT NOT NULL,
  port ${d.int} CHECK (port IS NULL OR port BETWEEN 0 AND 65535),
  registered_at ${d.int} NOT NULL,
  last_seen ${d.int} NOT NULL
)${d.clustered};
CREATE INDEX devices_registered ON devices (registered_at, pubkey);
CREATE INDEX devices_type_registered ON devices (device_type, registered_at, pubkey);

CREATE TABLE miners (
  pubkey TEXT PRIMARY KEY,
  proofs_accepted ${d.int} NOT NULL CHECK (proofs_accepted >= 0),
  proofs_rejected ${d.int} NOT NULL CHECK (proofs_rejected >= 0),
  blocks_accepted ${d.int} NOT NULL CHECK (blocks_accepted >= 0),
  last_seen ${d.int}
)${d.clustered};

-- v4.0
CREATE TABLE challenges (
  id TEXT PRIMARY KEY,
  serial ${d.int} NOT NULL UNIQUE,
  slot ${d.int} NOT NULL,
  slot_hash TEXT NOT NULL,
  device_type TEXT NOT NULL,
  difficulty ${d.int} NOT NULL,
  dim ${d.int} NOT NULL,
  entropy TEXT NOT NULL,
  challenge_hash TEXT NOT NULL,
  issued_at ${d.int} NOT NULL,
  expires_at ${d.int} NOT NULL
)${d.clustered};
CREATE INDEX challenges_expires_at ON challenges (expires_at);

CREATE TABLE proofs (
  challenge_id TEXT NOT NULL REFERENCES challenges (id),
  pubkey TEXT NOT NULL,
  nonce ${d.int} NOT NULL,
  accepted_at ${d.int} NOT NULL,
  ledger_entry_id ${d.int} NOT NULL REFERENCES ledger_entries (id),
  tx_sig TEXT NOT NULL,
  PRIMARY KEY (challenge_id, pubkey)
)${d.clustered};

-- v4.1 hexchain. parents: JSON arrays, read and written whole (at most 6 neighbours).
CREATE TABLE hex_challenges (
  id TEXT PRIMARY KEY,
  serial ${d.int} NOT NULL UNIQUE,
  q ${d.int} NOT NULL,
  r ${d.int} NOT NULL,
  s ${d.int} NOT NULL,
  slot ${d.int} NOT NULL,
  slot_hash TEXT NOT NULL,
  challenge_hash TEXT NOT NULL,
  target TEXT NOT NULL,
  difficulty TEXT NOT NULL ${d.unsigned('difficulty')},
  entropy TEXT NOT NULL,
  parents TEXT NOT NULL ${d.json('parents')},
  depth ${d.int} NOT NULL,
  miner_pubkey TEXT,
  issued_at ${d.int} NOT NULL,
  expires_at ${d.int} NOT NULL,
  CHECK (q + r + s = 0)
)${d.clustered};
CREATE INDEX hex_challenges_expires_at ON hex_challenges (expires_at);

-- One block per coordinate, never overwritten (triggers refuse UPDATE and DELETE).
CREATE TABLE blocks (
  height ${d.int} PRIMARY KEY CHECK (height >= 1),
  q ${d.int} NOT NULL,
  r ${d.int} NOT NULL,
  s ${d.int} NOT NULL,
  block_hash TEXT NOT NULL UNIQUE,
  pow_hash TEXT NOT NULL,
  depth ${d.int} NOT NULL,
  parents TEXT NOT NULL ${d.json('parents')},
  miner_pubkey TEXT NOT NULL,
  nonce ${d.int} NOT NULL,
  challenge_id TEXT NOT NULL REFERENCES hex_challenges (id),
  slot ${d.int} NOT NULL,
  difficulty TEXT NOT NULL ${d.unsigned('difficulty')},
  timestamp_ms ${d.int} NOT NULL,
  UNIQUE (q, r, s),
  CHECK (q + r + s = 0)
)${d.strict};
${d.refuse('blocks_no_update', 'UPDATE', 'blocks', 'blocks are immutable')}
${d.refuse('blocks_no_delete', 'DELETE', 'blocks', 'blocks are immutable')}
`;

/**
 * Issue 9: the (public key, nonce) pairs of accepted signed requests, kept until their replay
 * window closes (plus one window of margin), so that a request replayed after a restart, or to
 * another process sharing this database, is refused (docs/validator.md, "Replay protection").
 */
const V2_REQUEST_NONCES = (d: Dialect) => `
CREATE TABLE request_nonces (
  pubkey TEXT NOT NULL,
  nonce TEXT NOT NULL,
  expires_at_ms ${d.int} NOT NULL,
  PRIMARY KEY (pubkey, nonce)
)${d.clustered};
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
const V3_ECONOMY = (d: Dialect) => `
CREATE TABLE economy_requests (
  pubkey TEXT NOT NULL,
  nonce TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  operation TEXT NOT NULL,
  result TEXT NOT NULL ${d.json('result')},
  created_at ${d.int} NOT NULL,
  PRIMARY KEY (pubkey, nonce)
)${d.clustered};
CREATE INDEX economy_requests_created_at ON economy_requests (created_at);

INSERT INTO sequences (name, next_value) VALUES ('stakes', 1), ('vaults', 1), ('orders', 1), ('swaps', 1);${d.sequences(
  [
    ['stakes', 1],
    ['vaults', 1],
    ['orders', 1],
    ['swaps', 1],
  ],
)}

CREATE TABLE transfers (
  id TEXT PRIMARY KEY,
  from_pubkey TEXT NOT NULL,
  to_pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${d.unsigned('amount')},
  memo TEXT,
  timestamp ${d.int} NOT NULL
)${d.clustered};

CREATE TABLE stakes (
  id TEXT PRIMARY KEY,
  serial ${d.int} NOT NULL UNIQUE,
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${d.unsigned('amount')},
  lock_days ${d.int} NOT NULL CHECK (lock_days IN (0, 7, 30)),
  yield_bps ${d.int} NOT NULL CHECK (yield_bps >= 0),
  penalty_bps ${d.int} NOT NULL CHECK (penalty_bps >= 0),
  created_at ${d.int} NOT NULL,
  lock_expiry ${d.int} NOT NULL,
  yield_paid TEXT NOT NULL ${d.unsigned('yield_paid')},
  last_claim_at ${d.int} NOT NULL,
  closed_at ${d.int}
)${d.clustered};
CREATE INDEX stakes_pubkey_open ON stakes (pubkey, serial) WHERE closed_at IS NULL;

CREATE TABLE vaults (
  id TEXT PRIMARY KEY,
  serial ${d.int} NOT NULL UNIQUE,
  pubkey TEXT NOT NULL,
  token TEXT NOT NULL,
  amount TEXT NOT NULL ${d.unsigned('amount')},
  unlock_at ${d.int} NOT NULL,
  created_at ${d.int} NOT NULL,
  withdrawn_at ${d.int}
)${d.clustered};
CREATE INDEX vaults_pubkey ON vaults (pubkey, serial);

CREATE TABLE swap_pools (
  pair TEXT PRIMARY KEY,
  base TEXT NOT NULL,
  quote TEXT NOT NULL,
  fee_bps ${d.int} NOT NULL CHECK (fee_bps >= 0 AND fee_bps < 10000),
  created_at ${d.int} NOT NULL,
  UNIQUE (base, quote)
)${d.clustered};

CREATE TABLE orders (
  id TEXT PRIMARY KEY,
  serial ${d.int} NOT NULL UNIQUE,
  pubkey TEXT NOT NULL,
  side TEXT NOT NULL CHECK (side IN ('buy', 'sell')),
  token TEXT NOT NULL,
  quote_token TEXT NOT NULL,
  price TEXT NOT NULL ${d.unsigned('price')},
  price_key TEXT NOT NULL CHECK (length(price_key) = 39),
  amount TEXT NOT NULL ${d.unsigned('amount')},
  filled TEXT NOT NULL ${d.unsigned('filled')},
  escrow TEXT NOT NULL ${d.unsigned('escrow')},
  status TEXT NOT NULL CHECK (status IN ('open', 'partially_filled', 'filled', 'cancelled')),
  created_at ${d.int} NOT NULL,
  closed_at ${d.int}
)${d.clustered};
CREATE INDEX orders_book ON orders (token, quote_token, side, price_key, serial)
  WHERE status IN ('open', 'partially_filled');
CREATE INDEX orders_resting ON orders (serial) WHERE status IN ('open', 'partially_filled');
CREATE INDEX orders_pubkey ON orders (pubkey, serial);

CREATE TABLE order_fills (
  id ${d.autoId},
  taker_order_id TEXT NOT NULL REFERENCES orders (id),
  maker_order_id TEXT NOT NULL REFERENCES orders (id),
  amount TEXT NOT NULL ${d.unsigned('amount')},
  price TEXT NOT NULL ${d.unsigned('price')},
  quote_amount TEXT NOT NULL ${d.unsigned('quote_amount')},
  executed_at ${d.int} NOT NULL
)${d.strict};
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
const POOL = (d: Dialect) => `
CREATE TABLE pool_members (
  pubkey TEXT PRIMARY KEY,
  stake TEXT NOT NULL ${d.unsigned('stake')},
  joined_at ${d.int},
  share_difficulty TEXT ${d.positiveOrNull('share_difficulty')},
  vardiff_since_ms ${d.int} NOT NULL,
  vardiff_shares ${d.int} NOT NULL CHECK (vardiff_shares >= 0),
  shares_accepted ${d.int} NOT NULL CHECK (shares_accepted >= 0),
  shares_stale ${d.int} NOT NULL CHECK (shares_stale >= 0),
  shares_rejected ${d.int} NOT NULL CHECK (shares_rejected >= 0),
  blocks_found ${d.int} NOT NULL CHECK (blocks_found >= 0),
  last_share_at ${d.int}
)${d.clustered};
CREATE INDEX pool_members_joined ON pool_members (joined_at) WHERE joined_at IS NOT NULL;

CREATE TABLE pool_challenges (
  challenge_id TEXT PRIMARY KEY REFERENCES hex_challenges (id),
  pubkey TEXT NOT NULL,
  share_difficulty TEXT NOT NULL ${d.unsigned('share_difficulty')}
)${d.clustered};

CREATE TABLE pool_shares (
  id ${d.autoId},
  pubkey TEXT NOT NULL,
  challenge_id TEXT NOT NULL REFERENCES hex_challenges (id),
  pow_hash TEXT NOT NULL UNIQUE,
  difficulty TEXT NOT NULL ${d.unsigned('difficulty')},
  stale ${d.int} NOT NULL CHECK (stale IN (0, 1)),
  created_at_ms ${d.int} NOT NULL
)${d.strict};
CREATE INDEX pool_shares_paid ON pool_shares (id) WHERE stale = 0;

CREATE TABLE pool_blocks (
  block_hash TEXT PRIMARY KEY,
  height ${d.int} NOT NULL UNIQUE,
  q ${d.int} NOT NULL,
  r ${d.int} NOT NULL,
  s ${d.int} NOT NULL,
  finder TEXT NOT NULL,
  reward TEXT NOT NULL ${d.unsigned('reward')},
  fee TEXT NOT NULL ${d.unsigned('fee')},
  ${d.ident('window')} TEXT NOT NULL ${d.unsigned(d.ident('window'))},
  last_share_id ${d.int} NOT NULL,
  payees ${d.int} NOT NULL,
  found_at_ms ${d.int} NOT NULL
)${d.clustered};
${d.refuse('pool_blocks_no_update', 'UPDATE', 'pool_blocks', 'pool blocks are immutable')}
`;

/**
 * Pool, second step (issue 11). `pool_shares.block_difficulty`: the block difficulty of the
 * share's challenge, so that a share's PPLNS score is S / D (protocol 4.15); filled from the
 * challenges for the shares already stored. `pool_blocks.finder_payout`: what the finder was
 * paid (its PPLNS share); NULL for blocks paid before this step (a resent one is answered as
 * it was then). `pool_backoff`: the invalid-share back-off (protocol 4.16), in the database so
 * that it holds across restarts and across validator nodes sharing it.
 */
const POOL_2 = (d: Dialect) => `
ALTER TABLE pool_shares ADD COLUMN block_difficulty TEXT ${d.positiveOrNull('block_difficulty')};
UPDATE pool_shares SET block_difficulty = (SELECT c.difficulty FROM hex_challenges c WHERE c.id = pool_shares.challenge_id);

ALTER TABLE pool_blocks ADD COLUMN finder_payout TEXT ${d.unsigned('finder_payout')};

CREATE TABLE pool_backoff (
  backoff_key TEXT PRIMARY KEY,
  invalid ${d.int} NOT NULL CHECK (invalid >= 0),
  last_invalid_ms ${d.int} NOT NULL,
  until_ms ${d.int} NOT NULL
)${d.clustered};
CREATE INDEX pool_backoff_last ON pool_backoff (last_invalid_ms);
`;

/** The validator nodes sharing this database, with their heartbeats (issue 14, services/cluster.ts). */
const CLUSTER_NODES = (d: Dialect) => `
CREATE TABLE cluster_nodes (
  node_id TEXT PRIMARY KEY,
  instance TEXT NOT NULL,
  url TEXT,
  software_version TEXT NOT NULL,
  started_at_ms ${d.int} NOT NULL,
  heartbeat_at_ms ${d.int} NOT NULL,
  applied_height ${d.int} NOT NULL CHECK (applied_height >= 0),
  synced ${d.int} NOT NULL CHECK (synced IN (0, 1)),
  stopped_at_ms ${d.int}
)${d.clustered};
`;

/**
 * Device callbacks (issue 29, docs/protocol.md 4.17): where a device is called back (the source
 * address of its registration; NULL without a port, or when a status proxy relays it), how
 * (`callback_mode`), and the hash rate it reported. Indexed by address for the cap on devices
 * per address.
 */
const DEVICE_CALLBACKS = (d: Dialect) => `
ALTER TABLE devices ADD COLUMN callback_address TEXT;
ALTER TABLE devices ADD COLUMN callback_mode TEXT NOT NULL DEFAULT 'none'
  CHECK (callback_mode IN ('none', 'on', 'relayed', 'off'));
ALTER TABLE devices ADD COLUMN hashrate ${d.int} CHECK (hashrate IS NULL OR hashrate > 0);
CREATE INDEX devices_callback_address ON devices (callback_address) WHERE callback_address IS NOT NULL;
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
  {
    version: 5,
    name: 'mining pool: share scores, finder payouts, persisted back-off',
    sql: POOL_2,
  },
  { version: 6, name: 'cluster nodes', sql: CLUSTER_NODES },
  { version: 7, name: 'device callbacks: address, mode, reported hash rate', sql: DEVICE_CALLBACKS },
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
        db.exec(stepSql(step, sqliteDialect));
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

export function tooNew(location: string, version: number, latest: number): StorageError {
  return new StorageError(
    'schema_too_new',
    `the database ${location} has schema version ${version}, but this validator knows versions up to ${latest}: ` +
      'it was written by a newer @tensormine/validator; upgrade the validator or use another data directory',
  );
}

export function checkMigrations(migrations: readonly Migration[]): void {
  migrations.forEach((step, index) => {
    if (step.version !== index + 1) {
      throw new Error(`migration ${index}: expected version ${index + 1}, got ${step.version}`);
    }
  });
}
