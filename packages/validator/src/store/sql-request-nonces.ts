import type { Scope } from './sql-repos.js';
import type { RequestNonceRepo } from './types.js';

/** At most this many expired pairs are deleted per claim: the cost of a claim stays bounded. */
const FORGET_BATCH = 64;

/** Table `request_nonces` (migration 2): one row per accepted signed request. */
export class SqlRequestNonceRepo implements RequestNonceRepo {
  constructor(private readonly scope: Scope) {}

  async claim(pubkey: string, nonce: string, expiresAtMs: number, forgetBeforeMs: number): Promise<boolean> {
    const db = this.scope.write('requestNonces.claim');
    await db
      .prepare(
        'DELETE FROM request_nonces WHERE (pubkey, nonce) IN (SELECT pubkey, nonce FROM request_nonces WHERE expires_at_ms < ? LIMIT ?)',
      )
      .run(forgetBeforeMs, FORGET_BATCH);
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
