import type { AcceptedProof, ProofRepo } from '../types.js';
import type { Row } from './executor.js';
import { MINER_INSERT, MINER_ON_CONFLICT, SqlMinerRepo } from './miners.js';
import type { Scope } from './scope.js';
import { int, text } from './values.js';

export const PROOF_COLUMNS = 'challenge_id, pubkey, nonce, accepted_at, ledger_entry_id, tx_sig';
const INSERT = `INSERT INTO proofs (${PROOF_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`;
/**
 * PostgreSQL: the proof, then (reading its row) the miner's upsert, one accepted proof seen at
 * ?4, then (reading the miner's) the device's last_seen: miners.recordAndTouch in the proof's
 * statement, the rows locked in the same order as when they were two statements. A proof
 * already there fails the statement before the miner's row is touched.
 */
const INSERT_AND_RECORD =
  `WITH proof AS (${INSERT} RETURNING pubkey), ` +
  `miner AS (${MINER_INSERT} SELECT pubkey, 1, 0, 0, ?4 FROM proof ${MINER_ON_CONFLICT} RETURNING pubkey) ` +
  'UPDATE devices SET last_seen = ?4 WHERE pubkey = (SELECT pubkey FROM miner)';

/**
 * PostgreSQL: INSERT_AND_RECORD for a group of proofs of distinct keys (insertAllOrFail): the
 * proofs from one JSON array, then their miners' upserts, then their devices' last_seen. The
 * rows are taken in key order; the group's accounts are locked before (ledger.apply), so two
 * groups sharing a key never reach these rows in two orders.
 */
const INSERT_ALL_AND_RECORD =
  `WITH proof AS (INSERT INTO proofs (${PROOF_COLUMNS}) ` +
  'SELECT r.challenge_id, r.pubkey, r.nonce, r.accepted_at, r.ledger_entry_id, r.tx_sig ' +
  'FROM json_to_recordset(?1::json) AS r(challenge_id text, pubkey text, nonce bigint, ' +
  'accepted_at bigint, ledger_entry_id bigint, tx_sig text) ORDER BY r.pubkey RETURNING pubkey, accepted_at), ' +
  `miner AS (${MINER_INSERT} SELECT pubkey, 1, 0, 0, accepted_at FROM proof ORDER BY pubkey ${MINER_ON_CONFLICT} RETURNING pubkey) ` +
  'UPDATE devices SET last_seen = proof.accepted_at FROM proof ' +
  'WHERE devices.pubkey = proof.pubkey AND devices.pubkey IN (SELECT pubkey FROM miner)';

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

  async insertOrFail(p: AcceptedProof, options: { readonly recordMiner?: boolean } = {}): Promise<boolean> {
    const db = this.scope.write('proofs.insertOrFail');
    const values = [p.challengeId, p.pubkey, p.nonce, p.acceptedAt, p.ledgerEntryId, p.txSig];
    try {
      if (options.recordMiner !== true) {
        await db.prepare(INSERT).run(...values);
      } else if (db.dialect.name === 'sqlite') {
        await db.prepare(INSERT).run(...values);
        await new SqlMinerRepo(this.scope).recordAndTouch(p.pubkey, {
          proofsAccepted: 1,
          seenAt: p.acceptedAt,
        });
      } else {
        await db.prepare(INSERT_AND_RECORD).run(...values);
      }
      return true;
    } catch (error) {
      if (isEarlierProof(error)) return false;
      throw error;
    }
  }

  async insertAllOrFail(proofs: readonly AcceptedProof[]): Promise<boolean> {
    const db = this.scope.write('proofs.insertAllOrFail');
    if (new Set(proofs.map((p) => p.pubkey)).size !== proofs.length) {
      throw new Error('proofs.insertAllOrFail: the proofs of a group have distinct keys');
    }
    if (proofs.length === 0) return true;
    try {
      if (db.dialect.name === 'sqlite') {
        // The statements of insertOrFail, proof by proof, all issued at once (a caller may leave
        // this in flight: each statement's failure fails the transaction as it runs).
        const miners = new SqlMinerRepo(this.scope);
        await Promise.all(
          proofs.flatMap((p) => [
            db.prepare(INSERT).run(p.challengeId, p.pubkey, p.nonce, p.acceptedAt, p.ledgerEntryId, p.txSig),
            miners.recordAndTouch(p.pubkey, { proofsAccepted: 1, seenAt: p.acceptedAt }),
          ]),
        );
      } else {
        await db.prepare(INSERT_ALL_AND_RECORD).run(
          JSON.stringify(
            proofs.map((p) => ({
              challenge_id: p.challengeId,
              pubkey: p.pubkey,
              nonce: p.nonce,
              accepted_at: p.acceptedAt,
              ledger_entry_id: p.ledgerEntryId,
              tx_sig: p.txSig,
            })),
          ),
        );
      }
      return true;
    } catch (error) {
      if (isEarlierProof(error)) return false;
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

/** A key's earlier proof refused the insert (PostgreSQL's unique_violation, SQLite's constraint message). */
function isEarlierProof(error: unknown): boolean {
  const { code, table, message } = (error ?? {}) as { code?: string; table?: string; message?: string };
  if (code === '23505' && table === 'proofs') return true;
  return /^UNIQUE constraint failed: proofs\./.test(String(message));
}
