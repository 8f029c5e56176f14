import { StorageError } from '../errors.js';
import type { DeviceCallbackMode, DeviceRecord, DeviceRepo } from '../types.js';
import { SqlCounterRepo } from './counters.js';
import type { Row, SqlValue } from './executor.js';
import type { Scope } from './scope.js';
import { checkInteger, int, nullableInt, text } from './values.js';

export const DEVICE_COLUMNS =
  'device_id, pubkey, device_type, port, registered_at, last_seen, callback_address, callback_mode, hashrate';

/** Table `devices`: registered miners and devices, one row per public key. */
export class SqlDeviceRepo implements DeviceRepo {
  constructor(private readonly scope: Scope) {}

  /**
   * A known pubkey keeps its registeredAt and its deviceId; its type, port, callback, hash rate
   * and lastSeen change.
   * The count of its type (and of its old type) changes with it, in the transaction's counters.
   */
  async upsert(device: DeviceRecord): Promise<DeviceRecord> {
    const db = this.scope.write('devices.upsert');
    // Issued together: the type it had (locked, so that the counts follow every change), then the write.
    const [before, row] = await Promise.all([
      db
        .prepare(`SELECT device_type FROM devices WHERE pubkey = ?${db.dialect.forUpdate}`)
        .get(device.pubkey),
      db
        .prepare(
          `INSERT INTO devices (${DEVICE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
            'ON CONFLICT (pubkey) DO UPDATE SET device_type = excluded.device_type, port = excluded.port, ' +
            'last_seen = excluded.last_seen, callback_address = excluded.callback_address, ' +
            `callback_mode = excluded.callback_mode, hashrate = excluded.hashrate RETURNING ${DEVICE_COLUMNS}`,
        )
        .get(
          device.deviceId,
          device.pubkey,
          device.deviceType,
          device.port,
          device.registeredAt,
          device.lastSeen,
          device.callbackAddress,
          device.callbackMode,
          device.hashrate,
        ),
    ]);
    if (row === undefined) throw new StorageError('corrupt_row', 'INSERT ... RETURNING returned no row');
    const previous = before === undefined ? undefined : text(before, 'device_type');
    if (previous !== device.deviceType) {
      const counters = new SqlCounterRepo(this.scope);
      if (previous !== undefined) await counters.add(`${BY_TYPE}${previous}`, -1);
      await counters.add(`${BY_TYPE}${device.deviceType}`, 1);
    }
    return toDevice(row);
  }

  async get(pubkey: string): Promise<DeviceRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${DEVICE_COLUMNS} FROM devices WHERE pubkey = ?`)
      .get(pubkey);
    return row === undefined ? undefined : toDevice(row);
  }

  async touch(pubkey: string, lastSeen: number): Promise<void> {
    await this.scope
      .write('devices.touch')
      .prepare('UPDATE devices SET last_seen = ? WHERE pubkey = ?')
      .run(lastSeen, pubkey);
  }

  async list(filter: {
    deviceType?: string;
    limit: number;
    after?: { readonly registeredAt: number; readonly pubkey: string };
  }): Promise<DeviceRecord[]> {
    checkInteger('devices.list: limit', filter.limit);
    if (filter.after !== undefined)
      checkInteger('devices.list: after.registeredAt', filter.after.registeredAt);
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.deviceType !== undefined) {
      where.push('device_type = ?');
      params.push(filter.deviceType);
    }
    if (filter.after !== undefined) {
      // Row values compare in order: after (registered_at, pubkey). Both engines use the
      // (device_type,) registered_at, pubkey index for it.
      where.push('(registered_at, pubkey) > (?, ?)');
      params.push(filter.after.registeredAt, filter.after.pubkey);
    }
    const sql =
      `SELECT ${DEVICE_COLUMNS} FROM devices` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ' ORDER BY registered_at, pubkey LIMIT ?';
    params.push(filter.limit);
    return (
      await this.scope
        .read()
        .prepare(sql)
        .all(...params)
    ).map(toDevice);
  }

  async countByType(): Promise<Record<string, number>> {
    const counts = await new SqlCounterRepo(this.scope).list(BY_TYPE);
    return Object.fromEntries(
      Object.entries(counts)
        .filter(([, n]) => n > 0)
        .map(([name, n]) => [name.slice(BY_TYPE.length), n]),
    );
  }

  async countAtAddress(address: string, exceptPubkey: string): Promise<number> {
    const row = await this.scope
      .read()
      .prepare('SELECT count(*) AS n FROM devices WHERE callback_address = ? AND pubkey <> ?')
      .get(address, exceptPubkey);
    return row === undefined ? 0 : int(row, 'n');
  }

  async listCallbacks(limit: number): Promise<DeviceRecord[]> {
    const rows = await this.scope
      .read()
      .prepare(
        `SELECT ${DEVICE_COLUMNS} FROM devices WHERE callback_mode = 'on' ORDER BY registered_at, pubkey LIMIT ?`,
      )
      .all(limit);
    return rows.map(toDevice);
  }
}

const MODES: ReadonlySet<string> = new Set<DeviceCallbackMode>(['none', 'on', 'relayed', 'off']);

/** The prefix of the counters of registered devices per type (`devices.by_type.esp32`...). */
export const BY_TYPE = 'devices.by_type.';

export function toDevice(row: Row): DeviceRecord {
  const mode = text(row, 'callback_mode');
  if (!MODES.has(mode))
    throw new StorageError('corrupt_row', `devices.callback_mode: unknown mode ${JSON.stringify(mode)}`);
  return {
    deviceId: text(row, 'device_id'),
    pubkey: text(row, 'pubkey'),
    deviceType: text(row, 'device_type'),
    port: nullableInt(row, 'port'),
    registeredAt: int(row, 'registered_at'),
    lastSeen: int(row, 'last_seen'),
    callbackAddress: row.callback_address === null ? null : text(row, 'callback_address'),
    callbackMode: mode as DeviceCallbackMode,
    hashrate: nullableInt(row, 'hashrate'),
  };
}
