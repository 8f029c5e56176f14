import type {
  PoolBackoffRecord,
  PoolBlockRecord,
  PoolChallengeTerms,
  PoolMemberRecord,
  PoolRepo,
  PoolShareRecord,
  RecordedShare,
  ShareToRecord,
  StoredPoolShare,
} from '../types.js';
import type { Row } from './executor.js';
import { HEX_CHALLENGE_COLUMNS, toHexChallenge } from './hex-challenges.js';
import type { Scope } from './scope.js';
import {
  bigintOf,
  checkBigint,
  checkCount,
  int,
  nullableInt,
  nullableText,
  prefixed,
  text,
  unprefixed,
} from './values.js';

/** The mining pool tables (migration step "mining pool"). */

const MEMBER_COLUMNS =
  'pubkey, stake, joined_at, share_difficulty, vardiff_since_ms, vardiff_shares, shares_accepted, shares_stale, shares_rejected, blocks_found, last_share_at';
const SHARE_COLUMNS =
  'id, pubkey, challenge_id, pow_hash, difficulty, block_difficulty, stale, created_at_ms';
const TERMS_COLUMNS = 'challenge_id, pubkey, share_difficulty';
const BACKOFF_COLUMNS = 'backoff_key, invalid, last_invalid_ms, until_ms';
const BLOCK_COLUMNS =
  'block_hash, height, q, r, s, finder, reward, fee, "window", last_share_id, payees, found_at_ms, finder_payout';

export class SqlPoolRepo implements PoolRepo {
  constructor(private readonly scope: Scope) {}

  async getMember(pubkey: string, options: { lock?: boolean } = {}): Promise<PoolMemberRecord | undefined> {
    const db = options.lock === true ? this.scope.write('pool.getMember with lock') : this.scope.read();
    const row = await db
      .prepare(
        `SELECT ${MEMBER_COLUMNS} FROM pool_members WHERE pubkey = ?${options.lock === true ? db.dialect.forUpdate : ''}`,
      )
      .get(pubkey);
    return row === undefined ? undefined : toMember(row);
  }

  async putMember(m: PoolMemberRecord): Promise<void> {
    checkBigint('pool.putMember: stake', m.stake);
    for (const [what, n] of [
      ['vardiffShares', m.vardiffShares],
      ['sharesAccepted', m.sharesAccepted],
      ['sharesStale', m.sharesStale],
      ['sharesRejected', m.sharesRejected],
      ['blocksFound', m.blocksFound],
    ] as const) {
      checkCount(`pool.putMember: ${what}`, n);
    }
    await this.scope
      .write('pool.putMember')
      .prepare(
        `INSERT INTO pool_members (${MEMBER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
          'ON CONFLICT (pubkey) DO UPDATE SET stake = excluded.stake, joined_at = excluded.joined_at, ' +
          'share_difficulty = excluded.share_difficulty, vardiff_since_ms = excluded.vardiff_since_ms, ' +
          'vardiff_shares = excluded.vardiff_shares, shares_accepted = excluded.shares_accepted, ' +
          'shares_stale = excluded.shares_stale, shares_rejected = excluded.shares_rejected, ' +
          'blocks_found = excluded.blocks_found, last_share_at = excluded.last_share_at',
      )
      .run(
        m.pubkey,
        m.stake.toString(),
        m.joinedAt,
        m.shareDifficulty === null ? null : m.shareDifficulty.toString(),
        m.vardiffSinceMs,
        m.vardiffShares,
        m.sharesAccepted,
        m.sharesStale,
        m.sharesRejected,
        m.blocksFound,
        m.lastShareAt,
      );
  }

  async totals(): Promise<{ members: number; stake: bigint }> {
    const rows = await this.scope
      .read()
      .prepare('SELECT stake FROM pool_members WHERE joined_at IS NOT NULL')
      .all();
    let stake = 0n;
    for (const row of rows) stake += bigintOf(row, 'stake');
    return { members: rows.length, stake };
  }

  async countActive(sinceS: number): Promise<number> {
    const row = await this.scope
      .read()
      .prepare('SELECT count(*) AS n FROM pool_members WHERE joined_at IS NOT NULL AND last_share_at >= ?')
      .get(sinceS);
    return row === undefined ? 0 : int(row, 'n');
  }

  async putChallengeTerms(t: PoolChallengeTerms): Promise<void> {
    await this.scope
      .write('pool.putChallengeTerms')
      .prepare('INSERT INTO pool_challenges (challenge_id, pubkey, share_difficulty) VALUES (?, ?, ?)')
      .run(t.challengeId, t.pubkey, t.shareDifficulty.toString());
  }

  async getChallengeTerms(challengeId: string): Promise<PoolChallengeTerms | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${TERMS_COLUMNS} FROM pool_challenges WHERE challenge_id = ?`)
      .get(challengeId);
    return row === undefined ? undefined : toTerms(row);
  }

  async getMemberAndTerms(
    pubkey: string,
    challengeId: string,
  ): Promise<{ readonly member?: PoolMemberRecord; readonly terms?: PoolChallengeTerms }> {
    // One statement (one row, both parts LEFT JOINed to it), as in shareContext.
    const row = await this.scope.read().prepare(MEMBER_AND_TERMS_SQL).get(pubkey, challengeId);
    if (row === undefined) throw new Error('pool.getMemberAndTerms: no row');
    const member = unprefixed(row, 'm');
    const terms = unprefixed(row, 't');
    return {
      ...(member.pubkey === null ? {} : { member: toMember(member) }),
      ...(terms.challenge_id === null ? {} : { terms: toTerms(terms) }),
    };
  }

  async insertShare(s: PoolShareRecord): Promise<boolean> {
    checkBigint('pool.insertShare: difficulty', s.difficulty);
    checkBigint('pool.insertShare: blockDifficulty', s.blockDifficulty);
    const result = await this.scope
      .write('pool.insertShare')
      .prepare(
        'INSERT INTO pool_shares (pubkey, challenge_id, pow_hash, difficulty, block_difficulty, stale, created_at_ms) ' +
          'VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (pow_hash) DO NOTHING',
      )
      .run(
        s.pubkey,
        s.challengeId,
        s.powHash,
        s.difficulty.toString(),
        s.blockDifficulty.toString(),
        s.stale ? 1 : 0,
        s.createdAtMs,
      );
    return result.changes === 1;
  }

  async recordShares(items: readonly ShareToRecord[]): Promise<RecordedShare[]> {
    for (const { share: s, from, next } of items) {
      checkBigint('pool.recordShares: difficulty', s.difficulty);
      checkBigint('pool.recordShares: blockDifficulty', s.blockDifficulty);
      checkCount('pool.recordShares: next.vardiffShares', next.vardiffShares);
      if (s.stale) throw new Error('pool.recordShares: a stale share is recorded with insertShare');
      if (s.pubkey !== from.pubkey || next.pubkey !== from.pubkey) {
        throw new Error('pool.recordShares: a share, its from and next must be of one member');
      }
      if (from.shareDifficulty === null || next.shareDifficulty === null) {
        throw new Error('pool.recordShares: the member must have a share difficulty');
      }
    }
    if (new Set(items.map((i) => i.share.pubkey)).size !== items.length) {
      throw new Error('pool.recordShares: at most one share per member');
    }
    if (items.length === 0) return [];
    const db = this.scope.write('pool.recordShares');
    if (!db.dialect.concurrentWriters) {
      // SQLite (no data-modifying WITH): two statements a share, in process, one writer at a time.
      const out: RecordedShare[] = [];
      for (const { share: s, from, next } of items) {
        const inserted =
          (
            await db
              .prepare(
                'INSERT INTO pool_shares (pubkey, challenge_id, pow_hash, difficulty, block_difficulty, stale, created_at_ms) ' +
                  'VALUES (?, ?, ?, ?, ?, 0, ?) ON CONFLICT (pow_hash) DO NOTHING',
              )
              .run(
                s.pubkey,
                s.challengeId,
                s.powHash,
                `${s.difficulty}`,
                `${s.blockDifficulty}`,
                s.createdAtMs,
              )
          ).changes === 1;
        const advanced =
          inserted &&
          (
            await db
              .prepare(
                'UPDATE pool_members SET share_difficulty = ?, vardiff_since_ms = ?, vardiff_shares = ?, last_share_at = ?, ' +
                  'shares_accepted = shares_accepted + 1 WHERE pubkey = ? AND share_difficulty = ? AND vardiff_since_ms = ? AND vardiff_shares = ?',
              )
              .run(
                `${next.shareDifficulty}`,
                next.vardiffSinceMs,
                next.vardiffShares,
                next.lastShareAt,
                s.pubkey,
                `${from.shareDifficulty}`,
                from.vardiffSinceMs,
                from.vardiffShares,
              )
          ).changes === 1;
        out.push({ busy: false, inserted, advanced });
      }
      return out;
    }
    // PostgreSQL: one statement (one text whatever the number of shares: they travel as one
    // JSON parameter), so one round trip, and one that never waits for a lock: the members'
    // rows are locked first, skipping any another transaction holds (that share is `busy`,
    // nothing written for it); then the shares of the locked members are inserted, and each
    // member's row advanced if its vardiff state is the one `next` was computed from (a
    // compare-and-set on the row now locked).
    const rows = await db.prepare(RECORD_SHARES_SQL).all(
      JSON.stringify(
        items.map(({ share: s, from, next }, ord) => ({
          ord,
          pubkey: s.pubkey,
          challenge_id: s.challengeId,
          pow_hash: s.powHash,
          difficulty: `${s.difficulty}`,
          block_difficulty: `${s.blockDifficulty}`,
          created_at_ms: s.createdAtMs,
          next_difficulty: `${next.shareDifficulty}`,
          next_since_ms: next.vardiffSinceMs,
          next_shares: next.vardiffShares,
          last_share_at: next.lastShareAt,
          from_difficulty: `${from.shareDifficulty}`,
          from_since_ms: from.vardiffSinceMs,
          from_shares: from.vardiffShares,
        })),
      ),
    );
    if (rows.length !== items.length) throw new Error('pool.recordShares: an answer per share expected');
    return rows.map((row) => ({
      busy: int(row, 'busy') === 1,
      inserted: int(row, 'inserted') === 1,
      advanced: int(row, 'advanced') === 1,
    }));
  }

  async sharesBefore(beforeId: number, afterId: number, limit: number): Promise<StoredPoolShare[]> {
    return (
      await this.scope
        .read()
        .prepare(
          `SELECT ${SHARE_COLUMNS} FROM pool_shares WHERE stale = 0 AND id < ? AND id > ? ORDER BY id DESC LIMIT ?`,
        )
        .all(beforeId, afterId, limit)
    ).map(toShare);
  }

  async lastShareId(): Promise<number> {
    const row = await this.scope.read().prepare('SELECT max(id) AS id FROM pool_shares').get();
    return row === undefined ? 0 : (nullableInt(row, 'id') ?? 0);
  }

  async insertBlock(b: PoolBlockRecord): Promise<boolean> {
    const result = await this.scope
      .write('pool.insertBlock')
      .prepare(
        `INSERT INTO pool_blocks (${BLOCK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (block_hash) DO NOTHING`,
      )
      .run(
        b.blockHash,
        b.height,
        b.coord.q,
        b.coord.r,
        b.coord.s,
        b.finder,
        b.reward.toString(),
        b.fee.toString(),
        b.window.toString(),
        b.lastShareId,
        b.payees,
        b.foundAtMs,
        b.finderPayout === null ? null : b.finderPayout.toString(),
      );
    return result.changes === 1;
  }

  async lastBlock(): Promise<PoolBlockRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${BLOCK_COLUMNS} FROM pool_blocks ORDER BY height DESC LIMIT 1`)
      .get();
    return row === undefined ? undefined : toBlock(row);
  }

  async countBlocks(): Promise<number> {
    const row = await this.scope.read().prepare('SELECT count(*) AS n FROM pool_blocks').get();
    return row === undefined ? 0 : int(row, 'n');
  }

  async paidTotal(pubkey: string, token: string): Promise<bigint> {
    const row = await this.scope
      .read()
      .prepare("SELECT credited FROM ledger_totals WHERE pubkey = ? AND token = ? AND type = 'pool_payout'")
      .get(pubkey, token);
    return row === undefined ? 0n : bigintOf(row, 'credited');
  }

  async getBlock(blockHash: string): Promise<PoolBlockRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${BLOCK_COLUMNS} FROM pool_blocks WHERE block_hash = ?`)
      .get(blockHash);
    return row === undefined ? undefined : toBlock(row);
  }

  async pruneShares(beforeId: number, expiredBeforeS: number, limit: number): Promise<number> {
    checkCount('pool.pruneShares: limit', limit);
    const result = await this.scope
      .write('pool.pruneShares')
      .prepare(
        'DELETE FROM pool_shares WHERE id IN (SELECT s.id FROM pool_shares s JOIN hex_challenges c ON c.id = s.challenge_id ' +
          'WHERE s.id < ? AND c.expires_at < ? ORDER BY s.id LIMIT ?)',
      )
      .run(beforeId, expiredBeforeS, limit);
    return Number(result.changes);
  }

  async pruneChallengeTerms(expiredBeforeS: number, limit: number): Promise<number> {
    checkCount('pool.pruneChallengeTerms: limit', limit);
    const result = await this.scope
      .write('pool.pruneChallengeTerms')
      .prepare(
        'DELETE FROM pool_challenges WHERE challenge_id IN (SELECT p.challenge_id FROM pool_challenges p ' +
          'JOIN hex_challenges c ON c.id = p.challenge_id WHERE c.expires_at < ? ORDER BY c.expires_at LIMIT ?)',
      )
      .run(expiredBeforeS, limit);
    return Number(result.changes);
  }

  async getBackoff(key: string): Promise<PoolBackoffRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${BACKOFF_COLUMNS} FROM pool_backoff WHERE backoff_key = ?`)
      .get(key);
    return row === undefined ? undefined : toBackoff(row);
  }

  async shareContext(challengeId: string, backoffKey: string, pubkey: string) {
    // One statement (one row: every part LEFT JOINed to it), where four would cost four
    // executions and, on PostgreSQL, four statements' protocol work on both sides.
    const row = await this.scope.read().prepare(SHARE_CONTEXT_SQL).get(challengeId, backoffKey, pubkey);
    if (row === undefined) throw new Error('pool.shareContext: no row');
    const part = (prefix: string, key: string) => {
      const sub = unprefixed(row, prefix);
      return sub[key] === null ? undefined : sub;
    };
    const terms = part('t', 'challenge_id');
    const backoff = part('b', 'backoff_key');
    const member = part('m', 'pubkey');
    return {
      challenge: row.id === null ? undefined : toHexChallenge(row),
      terms: terms === undefined ? undefined : toTerms(terms),
      backoff: backoff === undefined ? undefined : toBackoff(backoff),
      member: member === undefined ? undefined : toMember(member),
    };
  }

  async putBackoff(e: PoolBackoffRecord): Promise<void> {
    checkCount('pool.putBackoff: invalid', e.invalid);
    await this.scope
      .write('pool.putBackoff')
      .prepare(
        'INSERT INTO pool_backoff (backoff_key, invalid, last_invalid_ms, until_ms) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (backoff_key) DO UPDATE SET invalid = excluded.invalid, last_invalid_ms = excluded.last_invalid_ms, until_ms = excluded.until_ms',
      )
      .run(e.key, e.invalid, e.lastInvalidMs, e.untilMs);
  }

  async deleteBackoff(key: string): Promise<void> {
    await this.scope
      .write('pool.deleteBackoff')
      .prepare('DELETE FROM pool_backoff WHERE backoff_key = ?')
      .run(key);
  }

  async pruneBackoff(beforeMs: number, limit: number): Promise<number> {
    checkCount('pool.pruneBackoff: limit', limit);
    const result = await this.scope
      .write('pool.pruneBackoff')
      .prepare(
        'DELETE FROM pool_backoff WHERE backoff_key IN (SELECT backoff_key FROM pool_backoff WHERE last_invalid_ms < ? ORDER BY last_invalid_ms LIMIT ?)',
      )
      .run(beforeMs, limit);
    return Number(result.changes);
  }
}

/**
 * pool.shareContext: the challenge (its own column names), its share terms, the back-off and the
 * member, in one row. Built once: the statement cache is keyed by the text.
 */
const SHARE_CONTEXT_SQL =
  `SELECT ${HEX_CHALLENGE_COLUMNS.split(', ')
    .map((c) => `c.${c}`)
    .join(', ')}, ${prefixed('t', TERMS_COLUMNS)}, ` +
  `${prefixed('b', BACKOFF_COLUMNS)}, ${prefixed('m', MEMBER_COLUMNS)} ` +
  'FROM (SELECT 1 AS one) AS one LEFT JOIN hex_challenges c ON c.id = ? ' +
  'LEFT JOIN pool_challenges t ON t.challenge_id = c.id LEFT JOIN pool_backoff b ON b.backoff_key = ? ' +
  'LEFT JOIN pool_members m ON m.pubkey = ?';

/** pool.getMemberAndTerms: the member and a challenge's share terms, in one row. */
const MEMBER_AND_TERMS_SQL =
  `SELECT ${prefixed('m', MEMBER_COLUMNS)}, ${prefixed('t', TERMS_COLUMNS)} ` +
  'FROM (SELECT 1 AS one) AS one LEFT JOIN pool_members m ON m.pubkey = ? ' +
  'LEFT JOIN pool_challenges t ON t.challenge_id = ?';

/** recordShares on PostgreSQL: the shares in order (`ord`), each one's answer in that order. */
const RECORD_SHARES_SQL =
  'WITH v AS (SELECT * FROM json_to_recordset(?::json) AS x(ord bigint, pubkey text, challenge_id text, pow_hash text, ' +
  'difficulty text, block_difficulty text, created_at_ms bigint, next_difficulty text, next_since_ms bigint, next_shares bigint, ' +
  'last_share_at bigint, from_difficulty text, from_since_ms bigint, from_shares bigint)), ' +
  // The members' rows first, skipping those another transaction holds: this statement never waits.
  'locked AS (SELECT m.pubkey FROM pool_members m WHERE m.pubkey IN (SELECT pubkey FROM v) ORDER BY m.pubkey ' +
  'FOR UPDATE SKIP LOCKED), ' +
  'ins AS (INSERT INTO pool_shares (pubkey, challenge_id, pow_hash, difficulty, block_difficulty, stale, created_at_ms) ' +
  'SELECT pubkey, challenge_id, pow_hash, difficulty, block_difficulty, 0, created_at_ms FROM v ' +
  'WHERE pubkey IN (SELECT pubkey FROM locked) ORDER BY ord ON CONFLICT (pow_hash) DO NOTHING RETURNING pow_hash), ' +
  'upd AS (UPDATE pool_members m SET share_difficulty = v.next_difficulty, vardiff_since_ms = v.next_since_ms, ' +
  'vardiff_shares = v.next_shares, last_share_at = v.last_share_at, shares_accepted = m.shares_accepted + 1 FROM v ' +
  'WHERE m.pubkey = v.pubkey AND v.pow_hash IN (SELECT pow_hash FROM ins) AND m.share_difficulty = v.from_difficulty ' +
  'AND m.vardiff_since_ms = v.from_since_ms AND m.vardiff_shares = v.from_shares RETURNING v.pow_hash) ' +
  'SELECT CASE WHEN v.pubkey IN (SELECT pubkey FROM locked) THEN 0 ELSE 1 END AS busy, ' +
  'CASE WHEN v.pow_hash IN (SELECT pow_hash FROM ins) THEN 1 ELSE 0 END AS inserted, ' +
  'CASE WHEN v.pow_hash IN (SELECT pow_hash FROM upd) THEN 1 ELSE 0 END AS advanced FROM v ORDER BY v.ord';

function toTerms(row: Row): PoolChallengeTerms {
  return {
    challengeId: text(row, 'challenge_id'),
    pubkey: text(row, 'pubkey'),
    shareDifficulty: bigintOf(row, 'share_difficulty'),
  };
}

function toBackoff(row: Row): PoolBackoffRecord {
  return {
    key: text(row, 'backoff_key'),
    invalid: int(row, 'invalid'),
    lastInvalidMs: int(row, 'last_invalid_ms'),
    untilMs: int(row, 'until_ms'),
  };
}

function toMember(row: Row): PoolMemberRecord {
  const shareDifficulty = nullableText(row, 'share_difficulty');
  return {
    pubkey: text(row, 'pubkey'),
    stake: bigintOf(row, 'stake'),
    joinedAt: nullableInt(row, 'joined_at'),
    shareDifficulty: shareDifficulty === null ? null : bigintOf(row, 'share_difficulty'),
    vardiffSinceMs: int(row, 'vardiff_since_ms'),
    vardiffShares: int(row, 'vardiff_shares'),
    sharesAccepted: int(row, 'shares_accepted'),
    sharesStale: int(row, 'shares_stale'),
    sharesRejected: int(row, 'shares_rejected'),
    blocksFound: int(row, 'blocks_found'),
    lastShareAt: nullableInt(row, 'last_share_at'),
  };
}

function toShare(row: Row): StoredPoolShare {
  return {
    id: int(row, 'id'),
    pubkey: text(row, 'pubkey'),
    challengeId: text(row, 'challenge_id'),
    powHash: text(row, 'pow_hash'),
    difficulty: bigintOf(row, 'difficulty'),
    // Null only for a share whose challenge was gone at migration 5: scored as a whole block's worth at most.
    blockDifficulty:
      nullableText(row, 'block_difficulty') === null
        ? bigintOf(row, 'difficulty')
        : bigintOf(row, 'block_difficulty'),
    stale: int(row, 'stale') === 1,
    createdAtMs: int(row, 'created_at_ms'),
  };
}

function toBlock(row: Row): PoolBlockRecord {
  return {
    blockHash: text(row, 'block_hash'),
    height: int(row, 'height'),
    coord: { q: int(row, 'q'), r: int(row, 'r'), s: int(row, 's') },
    finder: text(row, 'finder'),
    reward: bigintOf(row, 'reward'),
    fee: bigintOf(row, 'fee'),
    window: bigintOf(row, 'window'),
    lastShareId: int(row, 'last_share_id'),
    payees: int(row, 'payees'),
    foundAtMs: int(row, 'found_at_ms'),
    finderPayout: nullableText(row, 'finder_payout') === null ? null : bigintOf(row, 'finder_payout'),
  };
}
