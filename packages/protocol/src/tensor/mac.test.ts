import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { conv3x3, matmul } from './fixed-point.js';
import { referenceMac, wasmMac } from './mac.js';
import { checkedWasmMac } from './mac-check.js';
import { computeWork } from './work.js';

const random = (length: number) => new Int8Array(randomBytes(length).buffer, 0, length);
const extreme = (length: number, v: number) => new Int8Array(length).fill(v);

/** The operand kinds: random, all -128 (the largest sums), all 127, alternating signs. */
function operands(length: number): Int8Array[] {
  return [
    random(length),
    extreme(length, -128),
    extreme(length, 127),
    Int8Array.from({ length }, (_, i) => (i % 2 === 0 ? -128 : 127)),
  ];
}

describe('WebAssembly SIMD multiply-accumulate core', () => {
  const mac = wasmMac();

  test('is available on Node 24 (WebAssembly SIMD) and the reference is the fixed-point code', () => {
    expect(mac?.name).toBe('wasm');
    expect(referenceMac.matmul).toBe(matmul);
  });

  test('matmul equals the reference for every N in [1, 64] and every operand kind', () => {
    for (let n = 1; n <= 64; n++) {
      for (const x of operands(n * n)) {
        for (const w of operands(n * n)) expect(mac!.matmul(x, w, n)).toEqual(matmul(x, w, n));
      }
    }
  });

  test('conv3x3 equals the reference for every N in [1, 64], F in [1, 8] and every operand kind', () => {
    for (let n = 1; n <= 64; n++) {
      // Every filter count at the small sizes and at 16, 31, 64; one elsewhere.
      const every = n <= 9 || n === 16 || n === 31 || n === 64;
      for (let f = every ? 1 : 1 + (n % 8); f <= (every ? 8 : 1 + (n % 8)); f++) {
        const xs = n % 16 === 0 ? operands(n * n) : [random(n * n)];
        for (const x of xs) {
          for (const k of operands(f * 9)) expect(mac!.conv3x3(x, k, n, f)).toEqual(conv3x3(x, k, n, f));
        }
      }
    }
  });

  test('accumulators (weights from the seed, then the MAC) equal the reference on every shape', () => {
    for (let n = 4; n <= 64; n++) {
      for (const operation of ['matmul', 'conv'] as const) {
        const task = { operation, dim: n, filters: 1 + (n % 8), input: random(n * n) };
        for (let i = 0; i < 3; i++) {
          const seed = new Uint8Array(randomBytes(32));
          expect(mac!.accumulators(task, seed)).toEqual(referenceMac.accumulators(task, seed));
        }
      }
    }
  });

  test('computeWork with the core (its passes over Z too) equals the reference, every shape and activation', () => {
    expect(mac!.passes).toBeDefined();
    const key = new Uint8Array(randomBytes(32));
    for (let n = 4; n <= 64; n += n < 20 ? 1 : 7) {
      for (const operation of ['matmul', 'conv'] as const) {
        for (const activation of ['relu', 'sigmoid', 'tanh'] as const) {
          const inputs = n % 16 === 0 ? operands(n * n) : [random(n * n)];
          for (const input of inputs) {
            const task = {
              challengeHash: new Uint8Array(randomBytes(32)),
              operation,
              activation,
              dim: n,
              filters: 1 + ((n + activation.length) % 8),
              input,
              pathTarget: new Uint8Array(randomBytes(8)),
            };
            const nonce = randomBytes(4).readUInt32LE(0);
            expect(computeWork(task, key, nonce, mac)).toEqual(computeWork(task, key, nonce));
          }
        }
      }
    }
  });

  test('checkedWasmMac passes its self-check here', () => {
    expect(checkedWasmMac()?.name).toBe('wasm');
  });

  test('a changed input in the same array is seen (no stale layout)', () => {
    const x = random(16 * 16);
    const w = random(16 * 16);
    mac!.matmul(x, w, 16);
    x.set(random(16 * 16));
    expect(mac!.matmul(x, w, 16)).toEqual(matmul(x, w, 16));
  });

  test('rejects shapes it cannot compute', () => {
    expect(() => mac!.matmul(random(4), random(4), 3)).toThrow(/input: expected 9 values/);
    expect(() => mac!.conv3x3(random(16), random(9), 4, 9)).toThrow(/filters/);
    expect(() => mac!.matmul(random(65 * 65), random(65 * 65), 65)).toThrow(/n: expected/);
  });
});
