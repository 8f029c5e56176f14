import { StorageError } from '../errors.js';
import type { DeviceCallbackMode, DeviceRecord, DeviceRepo } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { int, nullableInt, text } from './values.js';

const DEVICE_COLUMNS =
  'device_id, pubkey, device_type, port, registered_at, last_seen, callback_address, callback_mode, hashrate';

/** Table `devices`: registered miners and devices, one row per public key. */
export class SqlDeviceRepo implements DeviceRepo {
  constructor(private readonly scope: Scope) {}

  /**
   * A known pubkey keeps its registeredAt and its deviceId; its type, port, callback, hash rate
   * and lastSeen change.
   */
  async upsert(device: DeviceRecord): Promise<DeviceRecord> {
    const row = await this.scope
      .write('devices.upsert')
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

function toDevice(row: Row): DeviceRecord {
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
