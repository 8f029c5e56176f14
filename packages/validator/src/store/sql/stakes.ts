import { StorageError } from '../errors.js';
import type { StakeRecord, StakeRepo } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { nextSerial } from './sequences.js';
import { bigintOf, int, nullableInt, text } from './values.js';

const STAKE_COLUMNS =
  'id, serial, pubkey, token, amount, lock_days, yield_bps, penalty_bps, created_at, lock_expiry, yield_paid, last_claim_at, closed_at';

function toStake(row: Row): StakeRecord {
  const lockDays = int(row, 'lock_days');
  if (lockDays !== 0 && lockDays !== 7 && lockDays !== 30) {
    throw new StorageError('corrupt_row', `stored lock_days: unexpected value ${lockDays}`);
  }
  return {
    id: text(row, 'id'),
    serial: int(row, 'serial'),
    pubkey: text(row, 'pubkey'),
    token: text(row, 'token'),
    amount: bigintOf(row, 'amount'),
    lockDays,
    yieldBps: BigInt(int(row, 'yield_bps')),
    penaltyBps: BigInt(int(row, 'penalty_bps')),
    createdAt: int(row, 'created_at'),
    lockExpiry: int(row, 'lock_expiry'),
    yieldPaid: bigintOf(row, 'yield_paid'),
    lastClaimAt: int(row, 'last_claim_at'),
    closedAt: nullableInt(row, 'closed_at'),
  };
}

/** Table `stakes`: staking positions. */
export class SqlStakeRepo implements StakeRepo {
  constructor(private readonly scope: Scope) {}

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'economy.stakes.nextSerial', 'stakes');
  }

  async insert(s: StakeRecord): Promise<void> {
    await this.scope
      .write('economy.stakes.insert')
      .prepare(`INSERT INTO stakes (${STAKE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(
        s.id,
        s.serial,
        s.pubkey,
        s.token,
        s.amount.toString(),
        s.lockDays,
        Number(s.yieldBps),
        Number(s.penaltyBps),
        s.createdAt,
        s.lockExpiry,
        s.yieldPaid.toString(),
        s.lastClaimAt,
        s.closedAt,
      );
  }

  async get(id: string): Promise<StakeRecord | undefined> {
    const row = await this.scope.read().prepare(`SELECT ${STAKE_COLUMNS} FROM stakes WHERE id = ?`).get(id);
    return row === undefined ? undefined : toStake(row);
  }

  async listOpen(pubkey: string, limit: number): Promise<StakeRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(
          `SELECT ${STAKE_COLUMNS} FROM stakes WHERE pubkey = ? AND closed_at IS NULL ORDER BY serial LIMIT ?`,
        )
        .all(pubkey, limit)
    ).map(toStake);
  }

  async allOpen(): Promise<StakeRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${STAKE_COLUMNS} FROM stakes WHERE closed_at IS NULL ORDER BY serial`)
        .all()
    ).map(toStake);
  }

  async recordClaim(id: string, yieldPaid: bigint, at: number): Promise<void> {
    await this.scope
      .write('economy.stakes.recordClaim')
      .prepare('UPDATE stakes SET yield_paid = ?, last_claim_at = ? WHERE id = ? AND closed_at IS NULL')
      .run(yieldPaid.toString(), at, id);
  }

  async close(id: string, yieldPaid: bigint, at: number): Promise<void> {
    await this.scope
      .write('economy.stakes.close')
      .prepare(
        'UPDATE stakes SET yield_paid = ?, last_claim_at = ?, closed_at = ? WHERE id = ? AND closed_at IS NULL',
      )
      .run(yieldPaid.toString(), at, at, id);
  }
}
