import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { floorLog2, mmlScoreFromBits, mmlScoreQ16 } from './mml.js';

/** mml_score bit by bit, as docs/protocol.md 3.3 defines it. */
function mmlByDefinition(bitmap: Uint8Array, count: number): number {
  let bits = 1;
  let run = 1;
  let previous = bitmap[0]! & 1;
  for (let i = 1; i < count; i++) {
    const bit = (bitmap[i >> 3]! >> (i & 7)) & 1;
    if (bit === previous) {
      run++;
    } else {
      bits += 2 * floorLog2(run) + 1;
      previous = bit;
      run = 1;
    }
  }
  bits += 2 * floorLog2(run) + 1;
  return mmlScoreFromBits(bits, count);
}

describe('mml score', () => {
  test('equals the bit-by-bit definition on every length, pattern and stray bits past the count', () => {
    const patterns = (bytes: number): Uint8Array[] => [
      randomBytes(bytes),
      new Uint8Array(bytes),
      new Uint8Array(bytes).fill(0xff),
      new Uint8Array(bytes).fill(0xaa),
      Uint8Array.from({ length: bytes }, (_, i) => (i % 5 === 0 ? 0xff : 0)),
      // Long runs across word boundaries, sparse single bits.
      Uint8Array.from({ length: bytes }, (_, i) => (Math.floor(i / 7) % 2 === 0 ? 0xff : 0x00)),
      Uint8Array.from({ length: bytes }, (_, i) => (i % 9 === 4 ? 0x10 : 0)),
    ];
    for (let count = 1; count <= 300; count++) {
      for (const bitmap of patterns(Math.ceil(count / 8))) {
        expect(mmlScoreQ16(bitmap, count)).toBe(mmlByDefinition(bitmap, count));
      }
    }
    for (const count of [1024, 4096, 4100, 32768]) {
      for (const bitmap of patterns(Math.ceil(count / 8) + 3)) {
        expect(mmlScoreQ16(bitmap, count)).toBe(mmlByDefinition(bitmap, count));
      }
    }
  });
});
