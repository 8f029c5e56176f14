import type { AcceptedProof, ProofRepo } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { int, text } from './values.js';

export const PROOF_COLUMNS = 'challenge_id, pubkey, nonce, accepted_at, ledger_entry_id, tx_sig';

/** Table `proofs`: the accepted v4.0 proofs, one per (challenge, key). */
export class SqlProofRepo implements ProofRepo {
  constructor(private readonly scope: Scope) {}

  async insert(p: AcceptedProof): Promise<boolean> {
    // One statement: either the row is written or (same challenge and key) nothing is.
    // Any other constraint (an unknown challenge or ledger entry) throws: that is a bug.
    const result = await this.scope
      .write('proofs.insert')
      .prepare(
        `INSERT INTO proofs (${PROOF_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (challenge_id, pubkey) DO NOTHING`,
      )
      .run(p.challengeId, p.pubkey, p.nonce, p.acceptedAt, p.ledgerEntryId, p.txSig);
    return result.changes === 1;
  }

  async insertOrFail(p: AcceptedProof): Promise<boolean> {
    try {
      await this.scope
        .write('proofs.insertOrFail')
        .prepare(`INSERT INTO proofs (${PROOF_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`)
        .run(p.challengeId, p.pubkey, p.nonce, p.acceptedAt, p.ledgerEntryId, p.txSig);
      return true;
    } catch (error) {
      // The key's earlier proof (PostgreSQL's unique_violation, SQLite's constraint message).
      const { code, table, message } = (error ?? {}) as { code?: string; table?: string; message?: string };
      if (code === '23505' && table === 'proofs') return false;
      if (/^UNIQUE constraint failed: proofs\./.test(String(message))) return false;
      throw error;
    }
  }

  async get(challengeId: string, pubkey: string): Promise<AcceptedProof | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${PROOF_COLUMNS} FROM proofs WHERE challenge_id = ? AND pubkey = ?`)
      .get(challengeId, pubkey);
    return row === undefined ? undefined : toProof(row);
  }
}

/** A row of PROOF_COLUMNS (also read by challenges.getForSubmit). */
export function toProof(row: Row): AcceptedProof {
  return {
    challengeId: text(row, 'challenge_id'),
    pubkey: text(row, 'pubkey'),
    nonce: int(row, 'nonce'),
    acceptedAt: int(row, 'accepted_at'),
    ledgerEntryId: int(row, 'ledger_entry_id'),
    txSig: text(row, 'tx_sig'),
  };
}
