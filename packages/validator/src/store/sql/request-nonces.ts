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
    if (!db.dialect.concurrentWriters || Math.random() < 1 / SWEEP_ONE_IN) {
      await db
        .prepare(
          'DELETE FROM request_nonces WHERE (pubkey, nonce) IN (SELECT pubkey, nonce FROM request_nonces WHERE expires_at_ms < ? LIMIT ?)',
        )
        .run(forgetBeforeMs, FORGET_BATCH);
    } else {
      // With concurrent writers (PostgreSQL, SERIALIZABLE), the scan of every expired pair above
      // would make all concurrent claims conflict with each other (a 3x re-run rate measured
      // with 8 at once). The key's own expired pairs conflict only with the same key's claims;
      // the sweep of everyone's runs on one claim in SWEEP_ONE_IN, still deleting up to
      // FORGET_BATCH pairs, more than the claims in between added.
      await db
        .prepare('DELETE FROM request_nonces WHERE pubkey = ? AND expires_at_ms < ?')
        .run(pubkey, forgetBeforeMs);
    }
    const result = await db
      .prepare(
        'INSERT INTO request_nonces (pubkey, nonce, expires_at_ms) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      )
      .run(pubkey, nonce, expiresAtMs);
    return Number(result.changes) === 1;
  }

  async count(): Promise<number> {
    const row = await this.scope.read().prepare('SELECT count(*) AS n FROM request_nonces').get();
    return Number(row?.n ?? 0);
  }
}
