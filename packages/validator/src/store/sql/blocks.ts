import { StorageError } from '../errors.js';
import type {
  AppendedBlock,
  BlockNote,
  BlockRecord,
  BlockRepo,
  ChainHead,
  CoordRecord,
  DifficultyWrite,
  DifficultyWriteKind,
  NewBlockRecord,
} from '../types.js';
import type { Row, SqlValue } from './executor.js';
import { checkNotification, type Scope } from './scope.js';
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
        .run(...blockValues(b)),
    ]);
    if (head === undefined) throw new StorageError('corrupt_row', 'the hexchain head row is missing');
    if (inserted.changes !== 1) {
      await db.prepare('UPDATE hex_chain SET height = height - 1 WHERE id = 1').run();
      return undefined;
    }
    const chain = toHead(head);
    return { block: { ...b, height: chain.height }, head: chain };
  }

  /**
   * PostgreSQL: one statement, the head's increment (refused at a retarget height), the block's
   * insert at the new height and the notification, so that the head's row lock, taken here, is
   * held from this statement to the COMMIT that follows it in the same round trip. A retarget
   * height leaves the head as it is and the block without a height: the insert fails on NOT
   * NULL; a taken coordinate fails on the unique key; either failure aborts the transaction.
   * SQLite (one writer at a time): `append`'s statements, the same refusals.
   */
  async appendLast(
    b: NewBlockRecord,
    windowBlocks: number,
    note: BlockNote,
  ): Promise<AppendedBlock | { readonly refused: 'taken' | 'retarget' }> {
    checkBigint('blocks.appendLast: difficulty', b.difficulty);
    checkInteger('blocks.appendLast: windowBlocks', windowBlocks);
    // The longest height and write count a note can hold (16 digits each).
    checkNotification(note.channel, note.template + ' '.repeat(32));
    const scope = this.scope;
    const db = scope.write('blocks.appendLast');
    const fill = (head: ChainHead) =>
      note.template
        .replaceAll(`${note.heightKey}-1`, `${note.heightKey}${head.height}`)
        .replaceAll(`${note.seqKey}-1`, `${note.seqKey}${head.difficultySeq}`);
    if (db.dialect.name === 'sqlite') {
      // Issued at once (node:sqlite runs a statement when it is called, so that a refusal has
      // failed the transaction before the callback's end is seen). The insert's height is the
      // head's only if the head's update changed it.
      const queued = { channel: note.channel, payload: '' };
      const head = db
        .prepare(
          'UPDATE hex_chain SET height = height + 1 WHERE id = 1 AND (height + 1) % ? <> 0 ' +
            'RETURNING height, difficulty, difficulty_seq',
        )
        .get(windowBlocks)
        .then((row) => {
          if (row === undefined) return undefined;
          const after = toHead(row);
          queued.payload = fill(after);
          return after;
        });
      const inserted = db
        .prepare(
          `INSERT INTO blocks (${BLOCK_COLUMNS}) VALUES ` +
            '((SELECT height FROM hex_chain WHERE id = 1 AND changes() = 1), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(...blockValues(b));
      scope.notifications.push(queued);
      try {
        const [after] = await Promise.all([head, inserted]);
        if (after === undefined) throw new StorageError('corrupt_row', 'the hexchain head row is missing');
        return { block: { ...b, height: after.height }, head: after };
      } catch (error) {
        const message = String((error as Error)?.message);
        if (/UNIQUE constraint failed: blocks\./.test(message)) return { refused: 'taken' };
        if (/NOT NULL constraint failed: blocks\.height/.test(message)) return { refused: 'retarget' };
        throw error;
      }
    }
    const statement = db
      .prepare(
        'WITH head AS (UPDATE hex_chain SET height = height + 1 WHERE id = 1 AND (height + 1) % ?14 <> 0 ' +
          'RETURNING height, difficulty, difficulty_seq), ' +
          `added AS (INSERT INTO blocks (${BLOCK_COLUMNS}) VALUES ((SELECT height FROM head), ` +
          '?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING height) ' +
          'SELECT height, difficulty, difficulty_seq, pg_notify(?15, ' +
          "replace(replace(?16::text, ?17::text || '-1', ?17::text || height), ?18::text || '-1', ?18::text || difficulty_seq)) " +
          'AS notified FROM head',
      )
      .get(...blockValues(b), windowBlocks, note.channel, note.template, note.heightKey, note.seqKey);
    try {
      const row = await statement;
      if (row === undefined) throw new StorageError('corrupt_row', 'the hexchain head row is missing');
      const head = toHead(row);
      return { block: { ...b, height: head.height }, head };
    } catch (error) {
      const { code, table, column } = (error ?? {}) as { code?: string; table?: string; column?: string };
      if (code === '23505' && table === 'blocks') return { refused: 'taken' };
      if (code === '23502' && table === 'blocks' && column === 'height') return { refused: 'retarget' };
      throw error;
    }
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

function blockValues(b: NewBlockRecord): SqlValue[] {
  return [
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
  ];
}
