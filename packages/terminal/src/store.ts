import { DatabaseSync } from 'node:sqlite';

/**
 * The terminal's own storage (node:sqlite): OAuth flows (single use), the social accounts seen,
 * welcome claims with their prepared transfers, purchases and entitlements.
 *
 * The rules that keep money safe are constraints of the schema, not only checks in code:
 * - one claim per social account and one per wallet, ever: UNIQUE (provider, account_id) and
 *   UNIQUE (wallet) on claims;
 * - a claim's transfers are prepared (the exact signed request: body, timestamp, nonce) and
 *   stored BEFORE they are sent, so a crash between "sent" and "recorded" is repaired by sending
 *   the identical request again, which the validator answers with the original transfer
 *   (idempotent retry) instead of paying twice;
 * - a transfer pays for one purchase: UNIQUE (transfer_id) on purchases.
 */

export const TERMINAL_SCHEMA_VERSION = 1;

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE oauth_flows (
     state_hash TEXT PRIMARY KEY,
     created_at INTEGER NOT NULL,
     consumed_at INTEGER
   );
   CREATE TABLE accounts (
     provider TEXT NOT NULL,
     account_id TEXT NOT NULL,
     username TEXT,
     first_seen INTEGER NOT NULL,
     last_seen INTEGER NOT NULL,
     PRIMARY KEY (provider, account_id)
   );
   CREATE TABLE claims (
     claim_id TEXT PRIMARY KEY,
     provider TEXT NOT NULL,
     account_id TEXT NOT NULL,
     wallet TEXT NOT NULL UNIQUE,
     state TEXT NOT NULL CHECK (state IN ('pending', 'paid')),
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     UNIQUE (provider, account_id)
   );
   CREATE TABLE claim_transfers (
     claim_id TEXT NOT NULL REFERENCES claims (claim_id) ON DELETE CASCADE,
     token TEXT NOT NULL,
     amount TEXT NOT NULL,
     body TEXT NOT NULL,
     signed_at_ms INTEGER NOT NULL,
     nonce TEXT NOT NULL,
     transfer_id TEXT,
     PRIMARY KEY (claim_id, token)
   );
   CREATE TABLE purchases (
     purchase_id TEXT PRIMARY KEY,
     transfer_id TEXT NOT NULL UNIQUE,
     wallet TEXT NOT NULL,
     product TEXT NOT NULL CHECK (product IN ('premium', 'no_ads')),
     currency TEXT NOT NULL,
     amount TEXT NOT NULL,
     valid_until INTEGER,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE entitlements (
     wallet TEXT NOT NULL,
     product TEXT NOT NULL CHECK (product IN ('premium', 'no_ads')),
     valid_until INTEGER,
     PRIMARY KEY (wallet, product)
   );`,
];

export interface ClaimRow {
  readonly claim_id: string;
  readonly provider: string;
  readonly account_id: string;
  readonly wallet: string;
  readonly state: 'pending' | 'paid';
  readonly created_at: number;
}

export interface ClaimTransferRow {
  readonly claim_id: string;
  readonly token: string;
  readonly amount: string;
  readonly body: string;
  readonly signed_at_ms: number;
  readonly nonce: string;
  readonly transfer_id: string | null;
}

export interface PurchaseRow {
  readonly purchase_id: string;
  readonly transfer_id: string;
  readonly wallet: string;
  readonly product: 'premium' | 'no_ads';
  readonly currency: string;
  readonly amount: string;
  readonly valid_until: number | null;
  readonly created_at: number;
}

export interface EntitlementRow {
  readonly product: 'premium' | 'no_ads';
  readonly valid_until: number | null;
}

/** True for a UNIQUE or PRIMARY KEY violation of node:sqlite. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  return (
    (e.errcode === 2067 || e.errcode === 1555 || e.code === 'ERR_SQLITE_ERROR') &&
    typeof e.message === 'string' &&
    /UNIQUE constraint failed/.test(e.message)
  );
}

export class TerminalStore {
  readonly #db: DatabaseSync;

  constructor(path: string) {
    this.#db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
    this.#db.exec('PRAGMA busy_timeout = 5000');
    if (path !== ':memory:') this.#db.exec('PRAGMA journal_mode = WAL');
    this.#db.exec('PRAGMA synchronous = FULL');
    this.#migrate();
  }

  #migrate(): void {
    const version = Number(
      (this.#db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
    );
    if (version > MIGRATIONS.length) {
      throw new Error(
        `the terminal database is at schema version ${version}, newer than this software (${MIGRATIONS.length}): upgrade the terminal`,
      );
    }
    for (let v = version; v < MIGRATIONS.length; v++) {
      this.transaction(() => {
        this.#db.exec(MIGRATIONS[v] as string);
        this.#db.exec(`PRAGMA user_version = ${v + 1}`);
      });
    }
  }

  /** Runs `fn` in one IMMEDIATE transaction (synchronous: nothing else runs in between). */
  transaction<T>(fn: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  // --- OAuth flows -------------------------------------------------------------------------

  startFlow(stateHash: string, nowS: number): void {
    this.#db.prepare('INSERT INTO oauth_flows (state_hash, created_at) VALUES (?, ?)').run(stateHash, nowS);
    // Flows older than a day are of no use any more: keep the table small.
    this.#db.prepare('DELETE FROM oauth_flows WHERE created_at < ?').run(nowS - 86_400);
  }

  /** Marks a flow used; false when it is unknown or was already used (a replayed callback). */
  consumeFlow(stateHash: string, nowS: number): boolean {
    const r = this.#db
      .prepare('UPDATE oauth_flows SET consumed_at = ? WHERE state_hash = ? AND consumed_at IS NULL')
      .run(nowS, stateHash);
    return Number(r.changes) === 1;
  }

  // --- accounts ----------------------------------------------------------------------------

  upsertAccount(provider: string, accountId: string, username: string | null, nowS: number): void {
    this.#db
      .prepare(
        `INSERT INTO accounts (provider, account_id, username, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (provider, account_id) DO UPDATE SET username = excluded.username, last_seen = excluded.last_seen`,
      )
      .run(provider, accountId, username, nowS, nowS);
  }

  // --- claims ------------------------------------------------------------------------------

  claimByAccount(provider: string, accountId: string): ClaimRow | undefined {
    return this.#db
      .prepare('SELECT * FROM claims WHERE provider = ? AND account_id = ?')
      .get(provider, accountId) as ClaimRow | undefined;
  }

  claimByWallet(wallet: string): ClaimRow | undefined {
    return this.#db.prepare('SELECT * FROM claims WHERE wallet = ?').get(wallet) as ClaimRow | undefined;
  }

  pendingClaims(): ClaimRow[] {
    return this.#db
      .prepare("SELECT * FROM claims WHERE state = 'pending' ORDER BY created_at")
      .all() as unknown as ClaimRow[];
  }

  /** Inserts a pending claim and its prepared transfers; throws a UNIQUE violation when taken. */
  insertClaim(
    claim: Omit<ClaimRow, 'state'>,
    transfers: readonly Omit<ClaimTransferRow, 'transfer_id'>[],
  ): void {
    this.transaction(() => {
      this.#db
        .prepare(
          `INSERT INTO claims (claim_id, provider, account_id, wallet, state, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'pending', ?, ?)`,
        )
        .run(
          claim.claim_id,
          claim.provider,
          claim.account_id,
          claim.wallet,
          claim.created_at,
          claim.created_at,
        );
      const insert = this.#db.prepare(
        `INSERT INTO claim_transfers (claim_id, token, amount, body, signed_at_ms, nonce) VALUES (?, ?, ?, ?, ?, ?)`,
      );
      for (const t of transfers) insert.run(t.claim_id, t.token, t.amount, t.body, t.signed_at_ms, t.nonce);
    });
  }

  /** Removes a claim none of whose transfers was executed (the treasury could not pay). */
  deleteUnpaidClaim(claimId: string): void {
    this.transaction(() => {
      const paid = this.#db
        .prepare('SELECT COUNT(*) AS n FROM claim_transfers WHERE claim_id = ? AND transfer_id IS NOT NULL')
        .get(claimId) as { n: number };
      if (Number(paid.n) > 0) throw new Error('refusing to delete a claim with executed transfers');
      this.#db.prepare('DELETE FROM claims WHERE claim_id = ?').run(claimId);
    });
  }

  claimTransfers(claimId: string): ClaimTransferRow[] {
    return this.#db
      .prepare('SELECT * FROM claim_transfers WHERE claim_id = ? ORDER BY rowid')
      .all(claimId) as unknown as ClaimTransferRow[];
  }

  /** A transfer prepared again (new nonce and time): only for one the validator never executed. */
  reprepareTransfer(claimId: string, token: string, body: string, signedAtMs: number, nonce: string): void {
    this.#db
      .prepare(
        'UPDATE claim_transfers SET body = ?, signed_at_ms = ?, nonce = ? WHERE claim_id = ? AND token = ? AND transfer_id IS NULL',
      )
      .run(body, signedAtMs, nonce, claimId, token);
  }

  recordTransfer(claimId: string, token: string, transferId: string): void {
    this.#db
      .prepare('UPDATE claim_transfers SET transfer_id = ? WHERE claim_id = ? AND token = ?')
      .run(transferId, claimId, token);
  }

  markClaimPaid(claimId: string, nowS: number): void {
    this.#db
      .prepare("UPDATE claims SET state = 'paid', updated_at = ? WHERE claim_id = ?")
      .run(nowS, claimId);
  }

  // --- purchases and entitlements ------------------------------------------------------------

  purchaseByTransfer(transferId: string): PurchaseRow | undefined {
    return this.#db.prepare('SELECT * FROM purchases WHERE transfer_id = ?').get(transferId) as
      | PurchaseRow
      | undefined;
  }

  entitlement(wallet: string, product: 'premium' | 'no_ads'): EntitlementRow | undefined {
    return this.#db
      .prepare('SELECT product, valid_until FROM entitlements WHERE wallet = ? AND product = ?')
      .get(wallet, product) as EntitlementRow | undefined;
  }

  entitlements(wallet: string, nowS: number): EntitlementRow[] {
    return this.#db
      .prepare(
        'SELECT product, valid_until FROM entitlements WHERE wallet = ? AND (valid_until IS NULL OR valid_until > ?) ORDER BY product',
      )
      .all(wallet, nowS) as unknown as EntitlementRow[];
  }

  /**
   * Records a purchase and extends the entitlement, in one transaction. Throws a UNIQUE
   * violation when the transfer already paid for a purchase.
   */
  recordPurchase(row: PurchaseRow): void {
    this.transaction(() => {
      this.#db
        .prepare(
          `INSERT INTO purchases (purchase_id, transfer_id, wallet, product, currency, amount, valid_until, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          row.purchase_id,
          row.transfer_id,
          row.wallet,
          row.product,
          row.currency,
          row.amount,
          row.valid_until,
          row.created_at,
        );
      this.#db
        .prepare(
          `INSERT INTO entitlements (wallet, product, valid_until) VALUES (?, ?, ?)
           ON CONFLICT (wallet, product) DO UPDATE SET valid_until = excluded.valid_until`,
        )
        .run(row.wallet, row.product, row.valid_until);
    });
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
