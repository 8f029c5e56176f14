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

/**
 * The head's increment of `appendLast` (?1 the retarget window, ?2 the height its retarget
 * write is for, ?3 that write's value, ?4 the write count and ?5 the stored difficulty it
 * follows): at a retarget height only with its write, which it makes.
 */
const headUpdate = (isNot: string) =>
  'UPDATE hex_chain SET height = height + 1, ' +
  'difficulty = CASE WHEN height + 1 = ?2 THEN ?3 ELSE difficulty END, ' +
  'difficulty_seq = CASE WHEN height + 1 = ?2 THEN difficulty_seq + 1 ELSE difficulty_seq END ' +
  `WHERE id = 1 AND ((height + 1) % ?1 <> 0 OR (height + 1 = ?2 AND difficulty_seq = ?4 AND difficulty ${isNot} ?5))`;

/** SQLite: the retarget write of `appendLast` (?2 its previous value, ?3 its time), from the head after it. */
const WRITE_INSERT =
  'INSERT INTO hex_difficulty_writes (seq, height, kind, previous, value, at_ms) ' +
  "SELECT difficulty_seq, height, 'retarget', ?2, difficulty, ?3";

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
   * PostgreSQL: one statement, the head's increment (with the retarget write when the block
   * lands on its height; refused at another retarget height), the block's insert at the new
   * height and the notification, so that the head's row lock, taken here, is held from this
   * statement to the COMMIT that follows it in the same round trip. A refused increment leaves
   * the block without a height: the insert fails on NOT NULL; a taken coordinate fails on the
   * unique key; either failure aborts the transaction. SQLite (one writer at a time): the same
   * statements one after the other, the insert's height the head's only if no block holds it
   * (the head's update was refused otherwise), else 0, which the height's CHECK refuses.
   */
  async appendLast(
    b: NewBlockRecord,
    windowBlocks: number,
    note: BlockNote,
    retarget?: DifficultyWrite,
  ): Promise<AppendedBlock | { readonly refused: 'taken' | 'retarget' }> {
    checkBigint('blocks.appendLast: difficulty', b.difficulty);
    checkInteger('blocks.appendLast: windowBlocks', windowBlocks);
    // The longest height and write count a note can hold (16 digits each).
    checkNotification(note.channel, `${note.atRetarget ?? note.template}${' '.repeat(32)}`);
    if (retarget !== undefined) {
      checkBigint('blocks.appendLast: retarget.value', retarget.value);
      checkInteger('blocks.appendLast: retarget.seq', retarget.seq);
      checkInteger('blocks.appendLast: retarget.height', retarget.height);
      checkInteger('blocks.appendLast: retarget.atMs', retarget.atMs);
    }
    const scope = this.scope;
    const db = scope.write('blocks.appendLast');
    // (No retarget: height 0, never landed on.)
    const at = retarget?.height ?? 0;
    const previous = retarget?.previous?.toString() ?? null;
    const head: SqlValue[] = [
      windowBlocks,
      at,
      retarget?.value.toString() ?? null,
      (retarget?.seq ?? 0) - 1,
      previous,
    ];
    const atMs = retarget?.atMs ?? 0;
    const fill = (after: ChainHead) => {
      const landed = after.height === at;
      return (landed ? (note.atRetarget ?? note.template) : note.template)
        .replaceAll(`${note.heightKey}-1`, `${note.heightKey}${after.height}`)
        .replaceAll(`${note.seqKey}-1`, `${note.seqKey}${after.difficultySeq - (landed ? 1 : 0)}`);
    };
    const refusal = (error: unknown): 'taken' | 'retarget' | undefined => {
      const { code, table, column, message } = (error ?? {}) as Record<string, unknown>;
      if (db.dialect.name === 'sqlite') {
        if (/^UNIQUE constraint failed: blocks\./.test(String(message))) return 'taken';
        // (Height 0: refused by the CHECK; a NULL would be numbered, the height being the rowid.)
        if (/^CHECK constraint failed: height >= 1/.test(String(message))) return 'retarget';
        return undefined;
      }
      if (code === '23505' && table === 'blocks') return 'taken';
      if (code === '23502' && table === 'blocks' && column === 'height') return 'retarget';
      return undefined;
    };
    const appended = (row: Row | undefined): AppendedBlock => {
      if (row === undefined) throw new StorageError('corrupt_row', 'the hexchain head row is missing');
      const after = toHead(row);
      return { block: { ...b, height: after.height }, head: after };
    };
    if (db.dialect.name === 'sqlite') {
      // Issued at once (node:sqlite runs a statement when it is called), so that a refusal has
      // failed the transaction before the callback's end is seen.
      const queued = { channel: note.channel, payload: '' };
      const updated = db
        .prepare(`${headUpdate('IS')} RETURNING height, difficulty, difficulty_seq`)
        .get(...head);
      const inserted = db
        .prepare(
          `INSERT INTO blocks (${BLOCK_COLUMNS}) VALUES (coalesce((SELECT height FROM hex_chain WHERE id = 1 AND ` +
            'NOT EXISTS (SELECT 1 FROM blocks WHERE height = hex_chain.height)), 0), ' +
            '?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(...blockValues(b));
      const written = db
        .prepare(`${WRITE_INSERT} FROM hex_chain WHERE id = 1 AND height = ?1`)
        .run(at, previous, atMs);
      scope.notifications.push(queued);
      try {
        const [row] = await Promise.all([updated, inserted, written]);
        const result = appended(row);
        queued.payload = fill(result.head);
        return result;
      } catch (error) {
        const reason = refusal(error);
        if (reason === undefined) throw error;
        return { refused: reason };
      }
    }
    try {
      const row = await db
        .prepare(
          `WITH head AS (${headUpdate('IS NOT DISTINCT FROM')} RETURNING height, difficulty, difficulty_seq), ` +
            `added AS (INSERT INTO blocks (${BLOCK_COLUMNS}) VALUES ((SELECT height FROM head), ` +
            '?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)), ' +
            'written AS (INSERT INTO hex_difficulty_writes (seq, height, kind, previous, value, at_ms) ' +
            "SELECT difficulty_seq, height, 'retarget', ?5, difficulty, ?19 FROM head WHERE height = ?2) " +
            'SELECT height, difficulty, difficulty_seq, pg_notify(?20, ' +
            "replace(replace(CASE WHEN height = ?2 THEN ?21::text ELSE ?22::text END, ?23::text || '-1', ?23::text || height), " +
            "?24::text || '-1', ?24::text || (difficulty_seq - CASE WHEN height = ?2 THEN 1 ELSE 0 END))) AS notified FROM head",
        )
        .get(
          ...head,
          ...blockValues(b),
          atMs,
          note.channel,
          note.atRetarget ?? note.template,
          note.template,
          note.heightKey,
          note.seqKey,
        );
      return appended(row);
    } catch (error) {
      const reason = refusal(error);
      if (reason === undefined) throw error;
      return { refused: reason };
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
