import type { DeviceRecord, HexChallengeRecord, HexChallengeRepo, HexParentRecord } from '../types.js';
import { DEVICE_COLUMNS, toDevice } from './devices.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { nextSerial } from './sequences.js';
import {
  bigintOf,
  checkBigint,
  coordOf,
  int,
  jsonArray,
  nullableText,
  prefixed,
  record,
  text,
  toCoord,
  unprefixed,
} from './values.js';

export const HEX_CHALLENGE_COLUMNS =
  'id, serial, q, r, s, slot, slot_hash, challenge_hash, target, difficulty, entropy, parents, depth, ' +
  'miner_pubkey, issued_at, expires_at';

/**
 * hexChallenges.getWithDevice: the challenge and the device, in one row. Built once: a text
 * built per call costs its concatenation and, in the statement cache's lookup, hashing it anew.
 */
const WITH_DEVICE =
  `SELECT ${prefixed('c', HEX_CHALLENGE_COLUMNS)}, ${prefixed('d', DEVICE_COLUMNS)} ` +
  'FROM (SELECT 1 AS one) AS one LEFT JOIN hex_challenges c ON c.id = ? ' +
  'LEFT JOIN devices d ON d.pubkey = ?';

/** Table `hex_challenges`: the v4.1 hexchain challenges issued. */
export class SqlHexChallengeRepo implements HexChallengeRepo {
  constructor(private readonly scope: Scope) {}

  async insert(c: HexChallengeRecord): Promise<void> {
    checkBigint('hexChallenges.insert: difficulty', c.difficulty);
    const parents = c.parents.map((p) => ({
      q: p.coord.q,
      r: p.coord.r,
      s: p.coord.s,
      blockHash: p.blockHash,
      depth: p.depth,
    }));
    await this.scope
      .write('hexChallenges.insert')
      .prepare(
        `INSERT INTO hex_challenges (${HEX_CHALLENGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        c.id,
        c.serial,
        c.coord.q,
        c.coord.r,
        c.coord.s,
        c.slot,
        c.slotHash,
        c.challengeHash,
        c.target,
        c.difficulty.toString(),
        c.entropy,
        JSON.stringify(parents),
        c.depth,
        c.minerPubkey,
        c.issuedAt,
        c.expiresAt,
      );
  }

  async get(id: string): Promise<HexChallengeRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${HEX_CHALLENGE_COLUMNS} FROM hex_challenges WHERE id = ?`)
      .get(id);
    return row === undefined ? undefined : toHexChallenge(row);
  }

  /**
   * The challenge and the device of `pubkey` in one statement (a block's first read): each
   * undefined when it does not exist.
   */
  async getWithDevice(
    id: string,
    pubkey: string,
  ): Promise<{ readonly challenge?: HexChallengeRecord; readonly device?: DeviceRecord }> {
    // One statement (one row, both parts LEFT JOINed to it), as in pool.shareContext.
    const row = await this.scope.read().prepare(WITH_DEVICE).get(id, pubkey);
    if (row === undefined) throw new Error('hexChallenges.getWithDevice: no row');
    const challenge = unprefixed(row, 'c');
    const device = unprefixed(row, 'd');
    return {
      ...(challenge.id === null ? {} : { challenge: toHexChallenge(challenge) }),
      ...(device.pubkey === null ? {} : { device: toDevice(device) }),
    };
  }

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'hexChallenges.nextSerial', 'hex_challenges');
  }

  async countOpen(now: number): Promise<number> {
    const row = await this.scope
      .read()
      .prepare('SELECT count(*) AS n FROM hex_challenges WHERE expires_at >= ?')
      .get(now);
    return row === undefined ? 0 : int(row, 'n');
  }

  async openExpiries(now: number): Promise<number[]> {
    return (
      await this.scope.read().prepare('SELECT expires_at FROM hex_challenges WHERE expires_at >= ?').all(now)
    ).map((row) => int(row, 'expires_at'));
  }
}

/** A row of HEX_CHALLENGE_COLUMNS (also read by the pool's share context, pool.ts). */
export function toHexChallenge(row: Row): HexChallengeRecord {
  return {
    id: text(row, 'id'),
    serial: int(row, 'serial'),
    coord: coordOf(row),
    slot: int(row, 'slot'),
    slotHash: text(row, 'slot_hash'),
    challengeHash: text(row, 'challenge_hash'),
    target: text(row, 'target'),
    difficulty: bigintOf(row, 'difficulty'),
    entropy: text(row, 'entropy'),
    parents: jsonArray(row, 'parents').map(toHexParent),
    depth: int(row, 'depth'),
    minerPubkey: nullableText(row, 'miner_pubkey'),
    issuedAt: int(row, 'issued_at'),
    expiresAt: int(row, 'expires_at'),
  };
}

function toHexParent(value: unknown): HexParentRecord {
  const o = record(value, 'parents');
  return { coord: toCoord(o), blockHash: text(o, 'blockHash'), depth: int(o, 'depth') };
}
