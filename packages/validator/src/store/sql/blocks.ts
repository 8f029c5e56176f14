import { StorageError } from '../errors.js';
import type {
  AppendedBlock,
  BlockRecord,
  BlockRepo,
  ChainHead,
  CoordRecord,
  DifficultyWrite,
  DifficultyWriteKind,
  NewBlockRecord,
} from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import {
  bigintOf,
  checkBigint,
  checkInteger,
  coordOf,
  corrupt,
  int,
  jsonArray,
  nullableText,
  text,
  toCoord,
} from './values.js';

const BLOCK_COLUMNS =
  'height, q, r, s, block_hash, pow_hash, depth, parents, miner_pubkey, nonce, challenge_id, slot, difficulty, timestamp_ms';

/**
 * Tables `blocks` (the accepted hexchain blocks, immutable, one per coordinate and per height)
 * and `hex_chain` (the head: the newest height, the live difficulty and its write count).
 */
export class SqlBlockRepo implements BlockRepo {
  constructor(private readonly scope: Scope) {}

  /**
   * Two statements issued together (one round trip on PostgreSQL): the head's height goes up by
   * one, which locks the head row until the transaction ends, then the block is stored at that
   * height unless its coordinate is taken. Only blocks holding the head lock insert, so the
   * coordinate check sees every committed block; a taken one puts the height back.
   */
  async append(b: NewBlockRecord): Promise<AppendedBlock | undefined> {
    checkBigint('blocks.append: difficulty', b.difficulty);
    const db = this.scope.write('blocks.append');
    const [head, inserted] = await Promise.all([
      db
        .prepare(
          'UPDATE hex_chain SET height = height + 1 WHERE id = 1 RETURNING height, difficulty, difficulty_seq',
        )
        .get(),
      db
        .prepare(
          `INSERT INTO blocks (${BLOCK_COLUMNS}) VALUES ((SELECT height FROM hex_chain WHERE id = 1), ` +
            '?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (q, r, s) DO NOTHING',
        )
        .run(
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
        ),
    ]);
    if (head === undefined) throw new StorageError('corrupt_row', 'the hexchain head row is missing');
    if (inserted.changes !== 1) {
      await db.prepare('UPDATE hex_chain SET height = height - 1 WHERE id = 1').run();
      return undefined;
    }
    const chain = toHead(head);
    return { block: { ...b, height: chain.height }, head: chain };
  }

  async head(): Promise<ChainHead> {
    const row = await this.scope
      .read()
      .prepare('SELECT height, difficulty, difficulty_seq FROM hex_chain WHERE id = 1')
      .get();
    if (row === undefined) throw new StorageError('corrupt_row', 'the hexchain head row is missing');
    return toHead(row);
  }

  async setDifficulty(
    value: bigint,
    write: { readonly kind: DifficultyWriteKind; readonly atMs: number },
  ): Promise<{ readonly previous: bigint | null; readonly head: ChainHead }> {
    checkBigint('blocks.setDifficulty: value', value);
    if (value === 0n) {
      throw new StorageError(
        'invalid_value',
        'blocks.setDifficulty: value: expected a positive bigint, got 0',
      );
    }
    if (write.kind !== 'retarget' && write.kind !== 'admin') {
      throw new StorageError(
        'invalid_value',
        `blocks.setDifficulty: kind: expected retarget or admin, got ${String(write.kind)}`,
      );
    }
    checkInteger('blocks.setDifficulty: atMs', write.atMs);
    const db = this.scope.write('blocks.setDifficulty');
    // Issued together (one round trip on PostgreSQL): the locking read returns the committed
    // value this write replaces; the insert records the write with its number and height.
    const [before, , after] = await Promise.all([
      db.prepare(`SELECT difficulty FROM hex_chain WHERE id = 1${db.dialect.forUpdate}`).get(),
      db
        .prepare(
          'INSERT INTO hex_difficulty_writes (seq, height, kind, previous, value, at_ms) ' +
            'SELECT difficulty_seq + 1, height, ?, difficulty, ?, ? FROM hex_chain WHERE id = 1',
        )
        .run(write.kind, value.toString(), write.atMs),
      db
        .prepare(
          'UPDATE hex_chain SET difficulty = ?, difficulty_seq = difficulty_seq + 1 WHERE id = 1 ' +
            'RETURNING height, difficulty, difficulty_seq',
        )
        .get(value.toString()),
    ]);
    if (before === undefined || after === undefined) {
      throw new StorageError('corrupt_row', 'the hexchain head row is missing');
    }
    const previous = nullableText(before, 'difficulty');
    return { previous: previous === null ? null : bigintOf(before, 'difficulty'), head: toHead(after) };
  }

  async difficultyWrites(afterSeq: number, limit: number): Promise<DifficultyWrite[]> {
    checkInteger('blocks.difficultyWrites: afterSeq', afterSeq);
    checkInteger('blocks.difficultyWrites: limit', limit);
    const rows = await this.scope
      .read()
      .prepare(
        'SELECT seq, height, kind, previous, value, at_ms FROM hex_difficulty_writes WHERE seq > ? ORDER BY seq LIMIT ?',
      )
      .all(afterSeq, limit);
    return rows.map((row) => {
      const kind = text(row, 'kind');
      if (kind !== 'retarget' && kind !== 'admin') throw corrupt('kind', kind);
      return {
        seq: int(row, 'seq'),
        height: int(row, 'height'),
        kind,
        previous: nullableText(row, 'previous') === null ? null : bigintOf(row, 'previous'),
        value: bigintOf(row, 'value'),
        atMs: int(row, 'at_ms'),
      };
    });
  }

  async putSnapshot(
    snapshot: { readonly height: number; readonly state: string; readonly createdAtMs: number },
    keep: number,
  ): Promise<void> {
    checkInteger('blocks.putSnapshot: height', snapshot.height);
    checkInteger('blocks.putSnapshot: createdAtMs', snapshot.createdAtMs);
    checkInteger('blocks.putSnapshot: keep', keep);
    const db = this.scope.write('blocks.putSnapshot');
    await Promise.all([
      db
        .prepare(
          'INSERT INTO lattice_snapshots (height, state, created_at_ms) VALUES (?, ?, ?) ON CONFLICT (height) DO NOTHING',
        )
        .run(snapshot.height, snapshot.state, snapshot.createdAtMs),
      db
        .prepare(
          'DELETE FROM lattice_snapshots WHERE height < (SELECT min(height) FROM ' +
            '(SELECT height FROM lattice_snapshots ORDER BY height DESC LIMIT ?) kept)',
        )
        .run(Math.max(1, keep)),
    ]);
  }

  async latestSnapshot(
    atMostHeight: number,
  ): Promise<{ readonly height: number; readonly state: string } | undefined> {
    checkInteger('blocks.latestSnapshot: atMostHeight', atMostHeight);
    const row = await this.scope
      .read()
      .prepare('SELECT height, state FROM lattice_snapshots WHERE height <= ? ORDER BY height DESC LIMIT 1')
      .get(atMostHeight);
    return row === undefined ? undefined : { height: int(row, 'height'), state: text(row, 'state') };
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

function toHead(row: Row): ChainHead {
  const difficulty = nullableText(row, 'difficulty');
  return {
    height: int(row, 'height'),
    difficulty: difficulty === null ? null : bigintOf(row, 'difficulty'),
    difficultySeq: int(row, 'difficulty_seq'),
  };
}
