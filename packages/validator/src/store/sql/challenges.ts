import type { ChallengeRecord, ChallengeRepo } from '../types.js';
import type { Scope } from './scope.js';
import { nextSerial } from './sequences.js';
import { int, text } from './values.js';

const CHALLENGE_COLUMNS =
  'id, serial, slot, slot_hash, device_type, difficulty, dim, entropy, challenge_hash, issued_at, expires_at';

/** Table `challenges`: the v4.0 challenges issued. */
export class SqlChallengeRepo implements ChallengeRepo {
  constructor(private readonly scope: Scope) {}

  async insert(c: ChallengeRecord): Promise<void> {
    await this.scope
      .write('challenges.insert')
      .prepare(`INSERT INTO challenges (${CHALLENGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(
        c.id,
        c.serial,
        c.slot,
        c.slotHash,
        c.deviceType,
        c.difficulty,
        c.dim,
        c.entropy,
        c.challengeHash,
        c.issuedAt,
        c.expiresAt,
      );
  }

  async get(id: string): Promise<ChallengeRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${CHALLENGE_COLUMNS} FROM challenges WHERE id = ?`)
      .get(id);
    if (row === undefined) return undefined;
    return {
      id: text(row, 'id'),
      serial: int(row, 'serial'),
      slot: int(row, 'slot'),
      slotHash: text(row, 'slot_hash'),
      deviceType: text(row, 'device_type'),
      difficulty: int(row, 'difficulty'),
      dim: int(row, 'dim'),
      entropy: text(row, 'entropy'),
      challengeHash: text(row, 'challenge_hash'),
      issuedAt: int(row, 'issued_at'),
      expiresAt: int(row, 'expires_at'),
    };
  }

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'challenges.nextSerial', 'challenges');
  }

  async countOpen(now: number): Promise<number> {
    const row = await this.scope
      .read()
      .prepare('SELECT count(*) AS n FROM challenges WHERE expires_at >= ?')
      .get(now);
    return row === undefined ? 0 : int(row, 'n');
  }
}
