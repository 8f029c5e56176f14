import type { MinerRepo, MinerStats } from '../types.js';
import type { Scope } from './scope.js';
import { checkCount, checkInteger, int, nullableInt, text } from './values.js';

/** Table `miners`: a miner's accepted and rejected work and when it was last seen. */
export class SqlMinerRepo implements MinerRepo {
  constructor(private readonly scope: Scope) {}

  async get(pubkey: string): Promise<MinerStats | undefined> {
    const row = await this.scope
      .read()
      .prepare(
        'SELECT pubkey, proofs_accepted, proofs_rejected, blocks_accepted, last_seen FROM miners WHERE pubkey = ?',
      )
      .get(pubkey);
    if (row === undefined) return undefined;
    return {
      pubkey: text(row, 'pubkey'),
      proofsAccepted: int(row, 'proofs_accepted'),
      proofsRejected: int(row, 'proofs_rejected'),
      blocksAccepted: int(row, 'blocks_accepted'),
      lastSeen: nullableInt(row, 'last_seen'),
    };
  }

  /** Adds the counts; lastSeen becomes the latest of the stored value and seenAt. */
  async record(pubkey: string, change: MinerChange): Promise<void> {
    await this.scope
      .write('miners.record')
      .prepare(MINER_UPSERT)
      .run(...minerValues(pubkey, change));
  }

  /**
   * `record` and `devices.touch(pubkey, seenAt)`: on PostgreSQL one statement, the device's
   * update reading the miner's upsert (so the miner's row is locked first, as when they were
   * two statements); on SQLite the two, issued together.
   */
  async recordAndTouch(pubkey: string, change: MinerChange): Promise<void> {
    const values = minerValues(pubkey, change);
    const db = this.scope.write('miners.recordAndTouch');
    if (db.dialect.name === 'sqlite') {
      await Promise.all([
        db.prepare(MINER_UPSERT).run(...values),
        db.prepare('UPDATE devices SET last_seen = ? WHERE pubkey = ?').run(change.seenAt, pubkey),
      ]);
      return;
    }
    await db
      .prepare(
        `WITH miner AS (${MINER_UPSERT} RETURNING pubkey) ` +
          'UPDATE devices SET last_seen = ?5 WHERE pubkey = (SELECT pubkey FROM miner)',
      )
      .run(...values);
  }
}

type MinerChange = {
  proofsAccepted?: number;
  proofsRejected?: number;
  blocksAccepted?: number;
  seenAt: number;
};

/** The columns of the miner's upsert, in its values' order. */
export const MINER_INSERT =
  'INSERT INTO miners (pubkey, proofs_accepted, proofs_rejected, blocks_accepted, last_seen)';

/** The miner's upsert after its values: the counts added, last_seen the later (also proofs.insertOrFail's). */
export const MINER_ON_CONFLICT =
  'ON CONFLICT (pubkey) DO UPDATE SET proofs_accepted = miners.proofs_accepted + excluded.proofs_accepted, ' +
  'proofs_rejected = miners.proofs_rejected + excluded.proofs_rejected, ' +
  'blocks_accepted = miners.blocks_accepted + excluded.blocks_accepted, ' +
  // The later of the two (CASE: SQLite's max(a, b) is PostgreSQL's greatest(a, b)).
  'last_seen = CASE WHEN miners.last_seen IS NULL OR miners.last_seen < excluded.last_seen ' +
  'THEN excluded.last_seen ELSE miners.last_seen END';

/** The miner's upsert (?1 pubkey, ?2 proofs accepted, ?3 rejected, ?4 blocks, ?5 seen at). */
const MINER_UPSERT = `${MINER_INSERT} VALUES (?1, ?2, ?3, ?4, ?5) ${MINER_ON_CONFLICT}`;

function minerValues(pubkey: string, change: MinerChange): [string, number, number, number, number] {
  const accepted = change.proofsAccepted ?? 0;
  const rejected = change.proofsRejected ?? 0;
  const blocks = change.blocksAccepted ?? 0;
  checkCount('miners.record: proofsAccepted', accepted);
  checkCount('miners.record: proofsRejected', rejected);
  checkCount('miners.record: blocksAccepted', blocks);
  checkInteger('miners.record: seenAt', change.seenAt);
  return [pubkey, accepted, rejected, blocks, change.seenAt];
}
