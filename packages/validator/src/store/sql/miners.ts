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
  async record(
    pubkey: string,
    change: { proofsAccepted?: number; proofsRejected?: number; blocksAccepted?: number; seenAt: number },
  ): Promise<void> {
    const accepted = change.proofsAccepted ?? 0;
    const rejected = change.proofsRejected ?? 0;
    const blocks = change.blocksAccepted ?? 0;
    checkCount('miners.record: proofsAccepted', accepted);
    checkCount('miners.record: proofsRejected', rejected);
    checkCount('miners.record: blocksAccepted', blocks);
    checkInteger('miners.record: seenAt', change.seenAt);
    await this.scope
      .write('miners.record')
      .prepare(
        'INSERT INTO miners (pubkey, proofs_accepted, proofs_rejected, blocks_accepted, last_seen) VALUES (?, ?, ?, ?, ?) ' +
          'ON CONFLICT (pubkey) DO UPDATE SET proofs_accepted = miners.proofs_accepted + excluded.proofs_accepted, ' +
          'proofs_rejected = miners.proofs_rejected + excluded.proofs_rejected, ' +
          'blocks_accepted = miners.blocks_accepted + excluded.blocks_accepted, ' +
          // The later of the two (CASE: SQLite's max(a, b) is PostgreSQL's greatest(a, b)).
          'last_seen = CASE WHEN miners.last_seen IS NULL OR miners.last_seen < excluded.last_seen ' +
          'THEN excluded.last_seen ELSE miners.last_seen END',
      )
      .run(pubkey, accepted, rejected, blocks, change.seenAt);
  }
}
