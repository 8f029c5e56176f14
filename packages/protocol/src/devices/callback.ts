import { concatBytes, fromHex, toHex, utf8 } from '../bytes.js';
import { sign, verify } from '../ed25519.js';
import type { DeviceCallback } from '../schemas/device-callbacks.js';

/**
 * The device callback message (docs/protocol.md 4.17): a JSON body POSTed to a registered
 * device's callback port, signed by the node key over `utf8("PTM41/notify") || 0x00 || body`.
 * The signature covers the exact bytes sent, so the body is serialized once and signed as is.
 */

/** The path a device serves its callbacks on. */
export const DEVICE_CALLBACK_PATH = '/tm/notify';
/** The tag of the signed message. */
export const DEVICE_CALLBACK_TAG = 'PTM41/notify';
/** The largest body a device must accept (a notification is about 400 bytes). */
export const DEVICE_CALLBACK_MAX_BODY = 1024;
/** A device accepts a notification whose sent_at is within this many ms of its clock. */
export const DEVICE_CALLBACK_FRESH_MS = 60_000;
/** The header carrying the node's signature (128 lowercase hex digits). */
export const DEVICE_CALLBACK_SIGNATURE_HEADER = 'x-tm-signature';
/** The header naming the signing key (informative: the device checks the key it learned). */
export const DEVICE_CALLBACK_KEY_HEADER = 'x-tm-node-pubkey';

/** The signed message: tag, 0x00, the body bytes. */
export function deviceCallbackMessage(body: Uint8Array): Uint8Array {
  return concatBytes(utf8(DEVICE_CALLBACK_TAG), Uint8Array.of(0), body);
}

/** A notification ready to send: its body bytes and headers. */
export interface SignedDeviceCallback {
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}

/** Serializes a notification once and signs those bytes with the node's key. */
export function signDeviceCallback(
  callback: DeviceCallback,
  secretKey: Uint8Array,
  publicKey: Uint8Array,
): SignedDeviceCallback {
  const body = utf8(JSON.stringify(callback));
  const signature = sign(deviceCallbackMessage(body), secretKey);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      [DEVICE_CALLBACK_SIGNATURE_HEADER]: toHex(signature),
      [DEVICE_CALLBACK_KEY_HEADER]: toHex(publicKey),
    },
  };
}

/** True when `signatureHex` is the node key's signature of these body bytes. Never throws. */
export function verifyDeviceCallback(body: Uint8Array, signatureHex: string, nodeKey: Uint8Array): boolean {
  if (!/^[0-9a-f]{128}$/.test(signatureHex)) return false;
  return verify(fromHex(signatureHex, 64, 'signature'), deviceCallbackMessage(body), nodeKey);
}
