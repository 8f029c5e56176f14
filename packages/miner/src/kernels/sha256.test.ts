import { createHash, randomBytes } from 'node:crypto';
import {
  bswap32,
  compressSha256,
  loadBlockWords,
  popcount32,
  SHA256_IV,
  Sha256Message,
  storeDigestWords,
} from '@tensormine/protocol/sha256-words';
import { describe, expect, test } from 'vitest';
import { expandWords } from './sha256.generated.js';

const nodeSha256 = (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('sha256 building blocks', () => {
  test('PaddedMessage hashes every length from 0 to 200 bytes as node:crypto does', () => {
    for (let length = 0; length <= 200; length++) {
      const msg = new Sha256Message(length);
      msg.bytes.set(randomBytes(length));
      const words = msg.digestInto(new Int32Array(8));
      expect(hex(storeDigestWords(words, new Uint8Array(32))), `length ${length}`).toBe(
        hex(nodeSha256(msg.bytes)),
      );
    }
  });

  test('PaddedMessage can be rewritten in place and hashed again', () => {
    const msg = new Sha256Message(100);
    for (let i = 0; i < 5; i++) {
      msg.bytes.set(randomBytes(100));
      expect(hex(storeDigestWords(msg.digestInto(new Int32Array(8)), new Uint8Array(32)))).toBe(
        hex(nodeSha256(msg.bytes)),
      );
    }
  });

  test('a midstate resumes the hash after the first block', () => {
    const msg = new Sha256Message(82);
    msg.bytes.set(randomBytes(82));
    const mid = Int32Array.from(SHA256_IV);
    const w = new Int32Array(64);
    loadBlockWords(msg.bytes, 0, w);
    compressSha256(mid, w);
    const words = msg.digestInto(new Int32Array(8), mid, 1);
    expect(hex(storeDigestWords(words, new Uint8Array(32)))).toBe(hex(nodeSha256(msg.bytes)));
  });

  test('expandWords is SHA-256(seed || u32le(i)) for each block', () => {
    for (const blocks of [1, 3, 128, 300]) {
      const seed = randomBytes(32);
      const seedWords = new Int32Array(8);
      for (let i = 0; i < 8; i++) seedWords[i] = seed.readInt32BE(4 * i);
      const out = new Int32Array(8 * blocks);
      expandWords(seedWords, out, blocks);
      for (const i of new Set([0, Math.min(1, blocks - 1), blocks - 1])) {
        const input = Buffer.concat([seed, Buffer.from([i & 0xff, (i >> 8) & 0xff, 0, 0])]);
        expect(hex(storeDigestWords(out.subarray(8 * i, 8 * i + 8), new Uint8Array(32)))).toBe(
          hex(nodeSha256(input)),
        );
      }
    }
  });

  test('bswap32 and popcount32', () => {
    expect(bswap32(0x11223344) >>> 0).toBe(0x44332211);
    expect(bswap32(0xff) >>> 0).toBe(0xff000000);
    for (const x of [0, 1, -1, 0x80000000, 0x12345678, 0x0f0f0f0f]) {
      expect(popcount32(x | 0)).toBe([...(x >>> 0).toString(2)].filter((c) => c === '1').length);
    }
  });
});
