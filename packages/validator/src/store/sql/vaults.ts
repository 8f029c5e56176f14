import type { VaultRecord, VaultRepo } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { nextSerial } from './sequences.js';
import { bigintOf, int, nullableInt, text } from './values.js';

const VAULT_COLUMNS = 'id, serial, pubkey, token, amount, unlock_at, created_at, withdrawn_at';

function toVault(row: Row): VaultRecord {
  return {
    id: text(row, 'id'),
    serial: int(row, 'serial'),
    pubkey: text(row, 'pubkey'),
    token: text(row, 'token'),
    amount: bigintOf(row, 'amount'),
    unlockAt: int(row, 'unlock_at'),
    createdAt: int(row, 'created_at'),
    withdrawnAt: nullableInt(row, 'withdrawn_at'),
  };
}

/** Table `vaults`: time-locked vaults. */
export class SqlVaultRepo implements VaultRepo {
  constructor(private readonly scope: Scope) {}

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'economy.vaults.nextSerial', 'vaults');
  }

  async insert(v: VaultRecord): Promise<void> {
    await this.scope
      .write('economy.vaults.insert')
      .prepare(`INSERT INTO vaults (${VAULT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(v.id, v.serial, v.pubkey, v.token, v.amount.toString(), v.unlockAt, v.createdAt, v.withdrawnAt);
  }

  async get(id: string): Promise<VaultRecord | undefined> {
    const row = await this.scope.read().prepare(`SELECT ${VAULT_COLUMNS} FROM vaults WHERE id = ?`).get(id);
    return row === undefined ? undefined : toVault(row);
  }

  async list(pubkey: string, limit: number): Promise<VaultRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${VAULT_COLUMNS} FROM vaults WHERE pubkey = ? ORDER BY serial LIMIT ?`)
        .all(pubkey, limit)
    ).map(toVault);
  }

  async allLocked(): Promise<VaultRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${VAULT_COLUMNS} FROM vaults WHERE withdrawn_at IS NULL ORDER BY serial`)
        .all()
    ).map(toVault);
  }

  async markWithdrawn(id: string, at: number): Promise<void> {
    await this.scope
      .write('economy.vaults.markWithdrawn')
      .prepare('UPDATE vaults SET withdrawn_at = ? WHERE id = ? AND withdrawn_at IS NULL')
      .run(at, id);
  }
}
