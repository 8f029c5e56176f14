import {
  canonicalDeviceType,
  DEFAULT_PAGE_LIMIT,
  DEVICE_TYPES,
  type DeviceType,
  isDeviceType,
} from '@tensormine/protocol';
import { nowSeconds } from '../../context.js';
import { routeHandlers } from '../../http/handlers.js';
import type { DeviceRecord } from '../../store/types.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { deviceIdFor } from './rules.js';

function deviceType(record: DeviceRecord): DeviceType {
  if (!isDeviceType(record.deviceType)) {
    throw new Error(
      `stored device ${record.deviceId} has an unknown type ${JSON.stringify(record.deviceType)}`,
    );
  }
  return record.deviceType;
}

/**
 * POST /devices/register (signed: the router has verified the x-tm-* headers and that
 * body.pubkey is the signer, so registering proves ownership of the key) and GET /devices.
 */
export function deviceHandlers() {
  return routeHandlers({
    async registerDevice({ body, claimNonce }, ctx) {
      const now = nowSeconds(ctx);
      const device = await ctx.storage.transaction(async (tx) => {
        // The request's nonce is recorded with the registration, atomically: a replay of this
        // request (after a restart too) is refused and cannot undo a later registration.
        await claimNonce(tx);
        return tx.devices.upsert({
          deviceId: deviceIdFor(body.pubkey),
          pubkey: body.pubkey,
          deviceType: canonicalDeviceType(body.device_type),
          port: body.port ?? null,
          registeredAt: now,
          lastSeen: now,
        });
      });
      return {
        registered: true as const,
        pubkey: device.pubkey,
        device_type: deviceType(device),
        port: device.port,
        registered_at: device.registeredAt,
        device_id: device.deviceId,
      };
    },

    /** Oldest registration first; the cursor counts the devices already served. */
    async listDevices({ query }, ctx) {
      const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
      const offset = query.cursor === undefined ? 0 : decodeCursor('devices', query.cursor, 'GET /devices');
      const filter = query.device_type && canonicalDeviceType(query.device_type);
      const { rows, counts } = await ctx.storage.read(async (tx) => ({
        rows: await tx.devices.list({ ...(filter ? { deviceType: filter } : {}), limit: limit + 1, offset }),
        counts: await tx.devices.countByType(),
      }));
      const page = rows.slice(0, limit);
      const byType = Object.fromEntries(DEVICE_TYPES.map((t) => [t, counts[t] ?? 0])) as Record<
        DeviceType,
        number
      >;
      return {
        devices: page.map((d) => ({
          device_id: d.deviceId,
          pubkey: d.pubkey,
          device_type: deviceType(d),
          port: d.port,
          registered_at: d.registeredAt,
          last_seen: d.lastSeen,
        })),
        next_cursor: rows.length > limit ? encodeCursor('devices', offset + limit) : null,
        by_type: byType,
        total: Object.values(counts).reduce((sum, n) => sum + n, 0),
      };
    },
  });
}
