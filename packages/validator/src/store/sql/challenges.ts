import type { ChallengeRecord, ChallengeRepo, SubmitRead } from '../types.js';
import { DEVICE_COLUMNS, toDevice } from './devices.js';
import type { Row } from './executor.js';
import { PROOF_COLUMNS, toProof } from './proofs.js';
import type { Scope } from './scope.js';
import { nextSerial } from './sequences.js';
import { int, prefixed, text, unprefixed } from './values.js';

const CHALLENGE_COLUMNS =
  'id, serial, slot, slot_hash, device_type, difficulty, dim, entropy, challenge_hash, issued_at, expires_at';

/** A v4.0 submission's first read: the challenge, the miner's device, the key's earlier proof. */
const FOR_SUBMIT =
  `SELECT ${prefixed('c', CHALLENGE_COLUMNS)}, ${prefixed('d', DEVICE_COLUMNS)}, ${prefixed('p', PROOF_COLUMNS)} ` +
  'FROM (SELECT 1 AS one) AS one LEFT JOIN challenges c ON c.id = ?1 ' +
  'LEFT JOIN devices d ON d.pubkey = ?2 ' +
  'LEFT JOIN proofs p ON p.challenge_id = ?1 AND p.pubkey = ?2';

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
    return row === undefined ? undefined : toChallenge(row);
  }

  async getForSubmit(id: string, pubkey: string): Promise<SubmitRead> {
    // One statement (one row, every part LEFT JOINed to it), as in hexChallenges.getWithDevice.
    const row = await this.scope.read().prepare(FOR_SUBMIT).get(id, pubkey);
    if (row === undefined) throw new Error('challenges.getForSubmit: no row');
    const challenge = unprefixed(row, 'c');
    const device = unprefixed(row, 'd');
    const proof = unprefixed(row, 'p');
    return {
      ...(challenge.id === null ? {} : { challenge: toChallenge(challenge) }),
      ...(device.pubkey === null ? {} : { device: toDevice(device) }),
      ...(proof.challenge_id === null ? {} : { proof: toProof(proof) }),
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

/** A row of CHALLENGE_COLUMNS. */
function toChallenge(row: Row): ChallengeRecord {
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
