import { createHmac, hash } from 'node:crypto';
import { concatBytes, utf8 } from './bytes.js';
import { Sha256Message } from './sha256-words.js';

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
 * concatenated and truncated. The messages are hashed in JavaScript without an allocation
 * (sha256-words.ts): a call into node:crypto per 32 bytes costs more than the hash.
 */
export function expand(seed: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  const hasher = new Sha256Message(seed.length + 4);
  const message = hasher.bytes;
  const words = new Int32Array(8);
  message.set(seed, 0);
  const c = seed.length;
  for (let i = 0, at = 0; at < length; i++, at += 32) {
    message[c] = i & 0xff;
    message[c + 1] = (i >>> 8) & 0xff;
    message[c + 2] = (i >>> 16) & 0xff;
    message[c + 3] = i >>> 24;
    hasher.digestInto(words);
    const take = Math.min(32, length - at);
    for (let k = 0; k < take; k++) out[at + k] = words[k >> 2]! >>> (24 - 8 * (k & 3));
  }
  return out;
}

export function hmacSha256(key: Uint8Array, ...parts: Uint8Array[]): Uint8Array {
  const mac = createHmac('sha256', key);
  for (const p of parts) mac.update(p);
  return new Uint8Array(mac.digest());
}
