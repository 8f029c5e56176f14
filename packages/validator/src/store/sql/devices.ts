import { StorageError } from '../errors.js';
import type { DeviceRecord, DeviceRepo } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { int, nullableInt, text } from './values.js';

const DEVICE_COLUMNS = 'device_id, pubkey, device_type, port, registered_at, last_seen';

/** Table `devices`: registered miners and devices, one row per public key. */
export class SqlDeviceRepo implements DeviceRepo {
  constructor(private readonly scope: Scope) {}

  /** A known pubkey keeps its registeredAt and its deviceId; its type, port and lastSeen change. */
  async upsert(device: DeviceRecord): Promise<DeviceRecord> {
    const row = await this.scope
      .write('devices.upsert')
      .prepare(
        `INSERT INTO devices (${DEVICE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ` +
          'ON CONFLICT (pubkey) DO UPDATE SET device_type = excluded.device_type, port = excluded.port, ' +
          `last_seen = excluded.last_seen RETURNING ${DEVICE_COLUMNS}`,
      )
      .get(
        device.deviceId,
        device.pubkey,
        device.deviceType,
        device.port,
        device.registeredAt,
        device.lastSeen,
      );
    if (row === undefined) throw new StorageError('corrupt_row', 'INSERT ... RETURNING returned no row');
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

  async list(filter: { deviceType?: string; limit: number; offset: number }): Promise<DeviceRecord[]> {
    const db = this.scope.read();
    const rows =
      filter.deviceType === undefined
        ? await db
            .prepare(`SELECT ${DEVICE_COLUMNS} FROM devices ORDER BY registered_at, pubkey LIMIT ? OFFSET ?`)
            .all(filter.limit, filter.offset)
        : await db
            .prepare(
              `SELECT ${DEVICE_COLUMNS} FROM devices WHERE device_type = ? ORDER BY registered_at, pubkey LIMIT ? OFFSET ?`,
            )
            .all(filter.deviceType, filter.limit, filter.offset);
    return rows.map(toDevice);
  }

  async countByType(): Promise<Record<string, number>> {
    const rows = await this.scope
      .read()
      .prepare('SELECT device_type, count(*) AS n FROM devices GROUP BY device_type ORDER BY device_type')
      .all();
    return Object.fromEntries(rows.map((row) => [text(row, 'device_type'), int(row, 'n')]));
  }
}

function toDevice(row: Row): DeviceRecord {
  return {
    deviceId: text(row, 'device_id'),
    pubkey: text(row, 'pubkey'),
    deviceType: text(row, 'device_type'),
    port: nullableInt(row, 'port'),
    registeredAt: int(row, 'registered_at'),
    lastSeen: int(row, 'last_seen'),
  };
}
