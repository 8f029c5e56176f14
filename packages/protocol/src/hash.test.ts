import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { expand } from './hash.js';
import { ONE_BLOCK_MAX, OneBlockSha256 } from './sha256-block.js';

const nodeSha256 = (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());

/** expand as defined: SHA-256(seed || u32le(i)) for i = 0, 1, ..., concatenated and truncated. */
function expandByDefinition(seed: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0, at = 0; at < length; i++, at += 32) {
    const counter = new Uint8Array(4);
    new DataView(counter.buffer).setUint32(0, i, true);
    const block = nodeSha256(Uint8Array.from([...seed, ...counter]));
    out.set(block.subarray(0, Math.min(32, length - at)), at);
  }
  return out;
}

describe('one-block SHA-256', () => {
  test('equals node:crypto for every message length that fits one block', () => {
    for (let length = 0; length <= ONE_BLOCK_MAX; length++) {
      for (const message of [
        randomBytes(length),
        new Uint8Array(length).fill(0xff),
        new Uint8Array(length),
      ]) {
        const hasher = new OneBlockSha256(length);
        hasher.message.set(message);
        const out = new Uint8Array(40);
        hasher.digest(out, 3, 32);
        expect(out.subarray(3, 35)).toEqual(nodeSha256(message));
        // Hashing twice with the same hasher gives the same digest (no state carried over).
        hasher.digest(out, 0, 32);
        expect(out.subarray(0, 32)).toEqual(nodeSha256(message));
      }
    }
  });

  test('refuses a message longer than one block', () => {
    expect(() => new OneBlockSha256(ONE_BLOCK_MAX + 1)).toThrow(RangeError);
    expect(() => new OneBlockSha256(-1)).toThrow(RangeError);
  });
});

describe('expand', () => {
  test('equals its definition for seeds that fit one block and seeds that do not', () => {
    for (const seedLength of [0, 1, 31, 32, 33, 50, 51, 52, 60, 64, 100]) {
      const seed = randomBytes(seedLength);
      for (const length of [0, 1, 31, 32, 33, 72, 256, 1000, 4096]) {
        expect(expand(seed, length)).toEqual(expandByDefinition(seed, length));
      }
    }
  });
});
