import {
  callbackAddress,
  callbackModeFor,
  canonicalDeviceType,
  DEFAULT_PAGE_LIMIT,
  DEVICE_CALLBACK_RELAY_HEADER,
  DEVICE_TYPES,
  type DeviceType,
  isDeviceType,
  throughUnseenProxy,
} from '@tensormine/protocol';
import { nowSeconds } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { DeviceRecord } from '../../store/types.js';
import { decodeDeviceCursor, encodeDeviceCursor } from '../mining/cursor.js';
import { deviceIdFor } from '../mining/rules.js';
import type { DeviceCallbackService } from './callbacks.js';

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
 *
 * A registration with a port is called back at the address it came from (the socket's peer, or
 * the client a trusted reverse proxy forwards for; not at all through an untrusted proxy),
 * never anywhere else (docs/protocol.md 4.17); `deviceCallbacksPerAddress` caps the devices
 * with a port per address.
 */
export function deviceHandlers(callbacks: DeviceCallbackService) {
  return routeHandlers({
    async registerDevice({ body, claimNonce, ip, raw }, ctx) {
      const now = nowSeconds(ctx);
      const port = body.port ?? null;
      const relayed = raw.headers[DEVICE_CALLBACK_RELAY_HEADER] === '1';
      const unseenProxy = throughUnseenProxy(raw.headers, ip, raw.socket.remoteAddress);
      const mode = callbackModeFor(ctx.config.deviceCallbacks, ip, port, relayed, unseenProxy);
      const address = mode === 'on' || mode === 'off' ? callbackAddress(ip) : null;
      const device = await ctx.storage.transaction(async (tx) => {
        if (address !== null) {
          const others = await tx.devices.countAtAddress(address, body.pubkey);
          const cap = ctx.config.deviceCallbacksPerAddress;
          if (others >= cap) {
            throw new ApiError(
              'device_limit_reached',
              `port: this address already has ${others} devices with a callback port, the most the validator allows (${cap}); register without a port (the device then polls) or ask the operator to raise deviceCallbacksPerAddress`,
              { devices: others, limit: cap },
            );
          }
        }
        // The request's nonce is recorded with the registration, atomically: a replay of this
        // request (after a restart too) is refused and cannot undo a later registration.
        await claimNonce(tx);
        return tx.devices.upsert({
          deviceId: deviceIdFor(body.pubkey),
          pubkey: body.pubkey,
          deviceType: canonicalDeviceType(body.device_type),
          port,
          registeredAt: now,
          lastSeen: now,
          callbackAddress: address,
          callbackMode: mode,
          hashrate: body.hashrate ?? null,
        });
      });
      callbacks.registered(device);
      return {
        registered: true as const,
        pubkey: device.pubkey,
        device_type: deviceType(device),
        port: device.port,
        registered_at: device.registeredAt,
        device_id: device.deviceId,
        callbacks: device.callbackMode,
      };
    },

    /** Oldest registration first; the cursor is the last device served (keyset paging). */
    async listDevices({ query }, ctx) {
      const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
      const after = query.cursor === undefined ? undefined : decodeDeviceCursor(query.cursor, 'GET /devices');
      const filter = query.device_type && canonicalDeviceType(query.device_type);
      const [rows, counts] = await ctx.storage.read((tx) =>
        Promise.all([
          tx.devices.list({
            ...(filter ? { deviceType: filter } : {}),
            limit: limit + 1,
            ...(after === undefined ? {} : { after }),
          }),
          tx.devices.countByType(),
        ]),
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const byType = Object.fromEntries(DEVICE_TYPES.map((t) => [t, counts[t] ?? 0])) as Record<
        DeviceType,
        number
      >;
      return {
        devices: page.map((d) => {
          const rate = callbacks.callbacks.blockRate(d.pubkey);
          return {
            device_id: d.deviceId,
            pubkey: d.pubkey,
            device_type: deviceType(d),
            port: d.port,
            registered_at: d.registeredAt,
            last_seen: d.lastSeen,
            hashrate_reported: d.hashrate,
            hashrate_1h: rate.hashrate,
            blocks_1h: rate.blocks,
            work: callbacks.callbacks.work(d.pubkey),
            callback: callbacks.health(d),
          };
        }),
        next_cursor: rows.length > limit && last !== undefined ? encodeDeviceCursor(last) : null,
        by_type: byType,
        total: Object.values(counts).reduce((sum, n) => sum + n, 0),
      };
    },
  });
}
