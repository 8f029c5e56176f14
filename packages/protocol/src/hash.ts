import { createHmac, hash } from 'node:crypto';
import { concatBytes, utf8 } from './bytes.js';
import { ONE_BLOCK_MAX, OneBlockSha256 } from './sha256-block.js';

/**
 * The hash functions of the protocol. SHA-256 everywhere; node:crypto because it is several
 * times faster than a JavaScript implementation on the verification hot path.
 */

export function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(hash('sha256', data, 'buffer'));
}

/**
 * Domain-separated hash: `SHA-256(tag || 0x00 || data)`, with `tag` an ASCII string such as
 * `"PTM4/work"`. Every hash in the protocol that is not the hexchain proof of work is tagged,
 * so no value can be reused in another role.
 */
export function taggedHash(tag: string, ...parts: Uint8Array[]): Uint8Array {
  return sha256(concatBytes(utf8(tag), Uint8Array.of(0), ...parts));
}

/**
 * Expands a 32-byte seed into `length` bytes: `SHA-256(seed || u32le(i))` for i = 0, 1, ...
 * concatenated and truncated. Each of those messages fits one SHA-256 block, hashed in
 * JavaScript without an allocation (sha256-block.ts: a call into node:crypto per 32 bytes cost
 * more than the hash); a seed too long for one block goes to node:crypto.
 */
export function expand(seed: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  if (seed.length + 4 <= ONE_BLOCK_MAX) {
    const hasher = new OneBlockSha256(seed.length + 4);
    const message = hasher.message;
    message.set(seed, 0);
    const c = seed.length;
    for (let i = 0, at = 0; at < length; i++, at += 32) {
      message[c] = i & 0xff;
      message[c + 1] = (i >>> 8) & 0xff;
      message[c + 2] = (i >>> 16) & 0xff;
      message[c + 3] = i >>> 24;
      hasher.digest(out, at, Math.min(32, length - at));
    }
    return out;
  }
  const input = new Uint8Array(seed.length + 4);
  input.set(seed, 0);
  const view = new DataView(input.buffer);
  for (let i = 0, at = 0; at < length; i++, at += 32) {
    view.setUint32(seed.length, i, true);
    const block = sha256(input);
    out.set(length - at >= 32 ? block : block.subarray(0, length - at), at);
  }
  return out;
}

export function hmacSha256(key: Uint8Array, ...parts: Uint8Array[]): Uint8Array {
  const mac = createHmac('sha256', key);
  for (const p of parts) mac.update(p);
  return new Uint8Array(mac.digest());
}
