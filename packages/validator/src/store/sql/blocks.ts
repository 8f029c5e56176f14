import type { BlockRecord, BlockRepo, CoordRecord } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { bigintOf, checkBigint, coordOf, int, jsonArray, text, toCoord } from './values.js';

const BLOCK_COLUMNS =
  'height, q, r, s, block_hash, pow_hash, depth, parents, miner_pubkey, nonce, challenge_id, slot, difficulty, timestamp_ms';

/** Table `blocks`: the accepted hexchain blocks (immutable), one per coordinate and per height. */
export class SqlBlockRepo implements BlockRepo {
  constructor(private readonly scope: Scope) {}

  async insert(b: BlockRecord): Promise<boolean> {
    checkBigint('blocks.insert: difficulty', b.difficulty);
    // One statement: an occupied coordinate writes nothing and returns false; any other
    // constraint (a height or block hash already used, an unknown challenge) throws.
    const result = await this.scope
      .write('blocks.insert')
      .prepare(
        `INSERT INTO blocks (${BLOCK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (q, r, s) DO NOTHING`,
      )
      .run(
        b.height,
        b.coord.q,
        b.coord.r,
        b.coord.s,
        b.blockHash,
        b.powHash,
        b.depth,
        JSON.stringify(b.parents.map((p) => ({ q: p.q, r: p.r, s: p.s }))),
        b.minerPubkey,
        b.nonce,
        b.challengeId,
        b.slot,
        b.difficulty.toString(),
        b.timestampMs,
      );
    return result.changes === 1;
  }

  async get(coord: CoordRecord): Promise<BlockRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks WHERE q = ? AND r = ? AND s = ?`)
      .get(coord.q, coord.r, coord.s);
    return row === undefined ? undefined : toBlock(row);
  }

  async list(afterHeight: number, limit: number): Promise<BlockRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks WHERE height > ? ORDER BY height LIMIT ?`)
        .all(afterHeight, limit)
    ).map(toBlock);
  }

  async all(): Promise<BlockRecord[]> {
    return (await this.scope.read().prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks ORDER BY height`).all()).map(
      toBlock,
    );
  }

  async byHeight(height: number): Promise<BlockRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${BLOCK_COLUMNS} FROM blocks WHERE height = ?`)
      .get(height);
    return row === undefined ? undefined : toBlock(row);
  }

  async count(): Promise<number> {
    const row = await this.scope.read().prepare('SELECT count(*) AS n FROM blocks').get();
    return row === undefined ? 0 : int(row, 'n');
  }
}

function toBlock(row: Row): BlockRecord {
  return {
    coord: coordOf(row),
    blockHash: text(row, 'block_hash'),
    powHash: text(row, 'pow_hash'),
    depth: int(row, 'depth'),
    parents: jsonArray(row, 'parents').map(toCoord),
    minerPubkey: text(row, 'miner_pubkey'),
    nonce: int(row, 'nonce'),
    challengeId: text(row, 'challenge_id'),
    slot: int(row, 'slot'),
    difficulty: bigintOf(row, 'difficulty'),
    timestampMs: int(row, 'timestamp_ms'),
    height: int(row, 'height'),
  };
}
