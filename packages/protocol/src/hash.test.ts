import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { expand } from './hash.js';

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
