import { ApiError } from '../../http/errors.js';

/**
 * Opaque page cursors: base64url of `<listing>:<position>`, where the position is the ledger
 * id to continue before (GET /ledger/entries), or the registration time and key of the last
 * device served (GET /devices, `<registered_at>:<pubkey>`): keyset pages, whose cost does not
 * grow with the items before them. Clients must pass next_cursor back unchanged; the encoding
 * may change.
 */
export function encodeCursor(listing: string, position: number): string {
  return Buffer.from(`${listing}:${position}`, 'utf8').toString('base64url');
}

/**
 * Decodes a cursor of `listing` into its position (a non-negative safe integer).
 * @throws ApiError validation_failed when the cursor was not made by {@link encodeCursor} for this listing.
 */
export function decodeCursor(listing: string, cursor: string, endpoint: string): number {
  const fail = (): never => {
    throw new ApiError(
      'validation_failed',
      `cursor: expected the next_cursor of a previous ${endpoint} page, got ${JSON.stringify(cursor.length > 40 ? `${cursor.slice(0, 40)}...` : cursor)}`,
    );
  };
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) fail();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^([a-z]+):(0|[1-9][0-9]{0,15})$/.exec(text);
  if (!match || match[1] !== listing) return fail();
  const position = Number(match[2]);
  if (!Number.isSafeInteger(position)) fail();
  return position;
}

/** The position after a device in the order of GET /devices. */
export interface DeviceKey {
  readonly registeredAt: number;
  readonly pubkey: string;
}

export function encodeDeviceCursor(last: DeviceKey): string {
  return Buffer.from(`devices:${last.registeredAt}:${last.pubkey}`, 'utf8').toString('base64url');
}

/**
 * Decodes a cursor of GET /devices.
 * @throws ApiError validation_failed when it was not made by {@link encodeDeviceCursor}.
 */
export function decodeDeviceCursor(cursor: string, endpoint: string): DeviceKey {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^devices:(0|[1-9][0-9]{0,15}):([0-9a-f]{64})$/.exec(text);
  const registeredAt = match === null ? Number.NaN : Number(match[1]);
  if (match === null || !Number.isSafeInteger(registeredAt)) {
    throw new ApiError(
      'validation_failed',
      `cursor: expected the next_cursor of a previous ${endpoint} page, got ${JSON.stringify(cursor.length > 40 ? `${cursor.slice(0, 40)}...` : cursor)}`,
    );
  }
  return { registeredAt, pubkey: match[2] as string };
}
