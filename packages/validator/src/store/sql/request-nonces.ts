import type { RequestNonceRepo } from '../types.js';
import type { Scope } from './scope.js';

/** At most this many expired pairs are deleted per claim: the cost of a claim stays bounded. */
const FORGET_BATCH = 64;

/** With concurrent writers, one claim in this many also sweeps other keys' expired pairs. */
const SWEEP_ONE_IN = 16;

/** Table `request_nonces` (migration 2): one row per accepted signed request. */
export class SqlRequestNonceRepo implements RequestNonceRepo {
  constructor(private readonly scope: Scope) {}

  async claim(pubkey: string, nonce: string, expiresAtMs: number, forgetBeforeMs: number): Promise<boolean> {
    const db = this.scope.write('requestNonces.claim');
    if (db.dialect.concurrentWriters && Math.random() >= 1 / SWEEP_ONE_IN) {
      // With concurrent writers (PostgreSQL), every claim sweeping everyone's expired pairs
      // would make concurrent claims delete the same rows, each waiting for the others' locks
      // (and, at SERIALIZABLE, conflict: a 3x re-run rate measured with 8 at once). The key's
      // own expired pairs are only its own claims' business, forgotten in the claim's statement
      // (the insert reads the delete's count, so it runs after it and a pair the delete removed
      // no longer conflicts); the sweep of everyone's runs on one claim in SWEEP_ONE_IN, still
      // deleting up to FORGET_BATCH pairs, more than the claims in between added.
      const result = await db
        .prepare(
          'WITH forgotten AS (DELETE FROM request_nonces WHERE pubkey = ?1 AND expires_at_ms < ?4 RETURNING 1) ' +
            'INSERT INTO request_nonces (pubkey, nonce, expires_at_ms) ' +
            'SELECT ?1, ?2::text, ?3::bigint FROM (SELECT count(*) FROM forgotten) AS f ON CONFLICT DO NOTHING',
        )
        .run(pubkey, nonce, expiresAtMs, forgetBeforeMs);
      return Number(result.changes) === 1;
    }
    // Issued together (one round trip on PostgreSQL): the forgetting, then the claim.
    const [, result] = await Promise.all([
      db
        .prepare(
          'DELETE FROM request_nonces WHERE (pubkey, nonce) IN (SELECT pubkey, nonce FROM request_nonces WHERE expires_at_ms < ? LIMIT ?)',
        )
        .run(forgetBeforeMs, FORGET_BATCH),
      db
        .prepare(
          'INSERT INTO request_nonces (pubkey, nonce, expires_at_ms) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
        )
        .run(pubkey, nonce, expiresAtMs),
    ]);
    return Number(result.changes) === 1;
  }

  async count(): Promise<number> {
    const row = await this.scope.read().prepare('SELECT count(*) AS n FROM request_nonces').get();
    return Number(row?.n ?? 0);
  }
}
