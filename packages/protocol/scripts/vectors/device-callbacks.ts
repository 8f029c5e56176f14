import { toHex, utf8 } from '../../src/bytes.js';
import {
  DEVICE_CALLBACK_PATH,
  DEVICE_CALLBACK_TAG,
  deviceCallbackMessage,
  signDeviceCallback,
  verifyDeviceCallback,
} from '../../src/devices/callback.js';
import type { DeviceCallback } from '../../src/schemas/device-callbacks.js';
import { testKey } from './_keys.js';

/**
 * Device callback vectors (docs/protocol.md 4.17): notifications signed by a test node key, their
 * exact body bytes, signed message and signature, and `verification` cases a device must decide
 * the same way (the C board in firmware-sim checks them bit for bit).
 */
export function generate() {
  const node = testKey('node');
  const device = testKey('esp32-board');
  const other = testKey('other-node');
  const base: DeviceCallback = {
    type: 'work_stale',
    reason: 'block',
    device: toHex(device.publicKey),
    challenge_id: 'h-0123456789abcdef01234567',
    coord: { q: 1, r: -1, s: 0 },
    height: 41,
    difficulty: 1048576,
    sent_at: 1_700_000_000_123,
    seq: 1,
  };
  const notifications = [
    { name: 'a block took the cell', callback: base },
    {
      name: 'the difficulty fell below the challenge',
      callback: {
        ...base,
        reason: 'retarget',
        difficulty: 262144,
        height: 48,
        sent_at: 1_700_000_010_000,
        seq: 2,
      },
    },
  ].map(({ name, callback }) => {
    const signed = signDeviceCallback(callback as DeviceCallback, node.secretKey, node.publicKey);
    return {
      name,
      body_hex: toHex(signed.body),
      message_hex: toHex(deviceCallbackMessage(signed.body)),
      headers: signed.headers,
    };
  });
  const first = notifications[0]!;
  const body = Uint8Array.from(Buffer.from(first.body_hex, 'hex'));
  const signature = first.headers['x-tm-signature']!;
  const tampered = utf8(JSON.stringify({ ...base, challenge_id: 'h-someone-elses-challenge' }));
  const flipped = `${signature.slice(0, 127)}${signature[127] === '0' ? '1' : '0'}`;
  const verification = [
    { name: 'the signed body', body_hex: toHex(body), signature, key: toHex(node.publicKey) },
    {
      name: 'another body with that signature',
      body_hex: toHex(tampered),
      signature,
      key: toHex(node.publicKey),
    },
    {
      name: 'one bit of the signature changed',
      body_hex: toHex(body),
      signature: flipped,
      key: toHex(node.publicKey),
    },
    { name: 'signed by another key', body_hex: toHex(body), signature, key: toHex(other.publicKey) },
    {
      name: 'a body with a trailing space (the bytes are signed, not the JSON value)',
      body_hex: toHex(new Uint8Array([...body, 0x20])),
      signature,
      key: toHex(node.publicKey),
    },
  ].map((c) => ({
    ...c,
    valid: verifyDeviceCallback(
      Uint8Array.from(Buffer.from(c.body_hex, 'hex')),
      c.signature,
      Buffer.from(c.key, 'hex'),
    ),
  }));
  return {
    description:
      'Device callbacks (docs/protocol.md 4.17): POST to the device callback path, body signed by the node key over utf8(tag) || 0x00 || body. TEST-ONLY keys.',
    path: DEVICE_CALLBACK_PATH,
    tag: DEVICE_CALLBACK_TAG,
    node_secret_key_test_only: toHex(node.secretKey),
    node_public_key: toHex(node.publicKey),
    device_public_key: toHex(device.publicKey),
    notifications,
    verification,
  };
}
