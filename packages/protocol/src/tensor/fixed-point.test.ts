import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import {
  ACTIVATION_AFFINE,
  clampInt,
  clampInt8,
  conv3x3,
  floorDiv,
  matmul,
  normalize,
  relu,
  sigmoid,
  tanh,
} from './fixed-point.js';

/**
 * The fast reference loops (fixed-point.ts) against their definitions written as plainly as
 * possible: the same bits for every shape and for random and extreme operands.
 */
function matmulByDefinition(x: Int8Array, w: Int8Array, n: number): Int32Array {
  const z = new Int32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let k = 0; k < n; k++) acc += x[i * n + k]! * w[k * n + j]!;
      z[i * n + j] = acc;
    }
  }
  return z;
}

function conv3x3ByDefinition(x: Int8Array, kernels: Int8Array, n: number, filters: number): Int32Array {
  const z = new Int32Array(filters * n * n);
  const at = (r: number, c: number) => (r < 0 || r >= n || c < 0 || c >= n ? 0 : x[r * n + c]!);
  for (let f = 0; f < filters; f++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let di = -1; di <= 1; di++) {
          for (let dj = -1; dj <= 1; dj++)
            acc += at(i + di, j + dj) * kernels[f * 9 + (di + 1) * 3 + dj + 1]!;
        }
        z[(f * n + i) * n + j] = acc;
      }
    }
  }
  return z;
}

const random = (length: number) => new Int8Array(randomBytes(length).buffer, 0, length);
/** Random, all -128 (the largest sums), all 127, alternating extremes. */
const operands = (length: number): Int8Array[] => [
  random(length),
  new Int8Array(length).fill(-128),
  new Int8Array(length).fill(127),
  Int8Array.from({ length }, (_, i) => (i % 3 === 0 ? 127 : -128)),
];

describe('fixed-point reference loops', () => {
  test('matmul equals its definition for every N in [1, 64] and every operand kind', () => {
    for (let n = 1; n <= 64; n++) {
      for (const x of operands(n * n)) {
        for (const w of operands(n * n)) expect(matmul(x, w, n)).toEqual(matmulByDefinition(x, w, n));
      }
    }
  });

  test('conv3x3 equals its definition for every N in [1, 64] and F in [1, 8]', () => {
    for (let n = 1; n <= 64; n++) {
      for (const x of operands(n * n)) {
        for (const f of n <= 9 || n % 16 === 0 ? [1, 2, 3, 4, 5, 6, 7, 8] : [1 + (n % 8)]) {
          for (const k of n <= 9 ? operands(f * 9) : operands(f * 9).slice(0, 2))
            expect(conv3x3(x, k, n, f)).toEqual(conv3x3ByDefinition(x, k, n, f));
        }
      }
    }
  });

  test('floorDiv is the floor of the exact quotient, for either sign', () => {
    const exact = (a: number, b: number) => {
      const q = BigInt(a) / BigInt(b);
      return Number(BigInt(a) % BigInt(b) !== 0n && a < 0 !== b < 0 ? q - 1n : q);
    };
    const values = [
      0,
      1,
      -1,
      2,
      -2,
      7,
      -7,
      4095,
      -4096,
      2 ** 36 - 1,
      -(2 ** 36),
      2 ** 53 - 1,
      -(2 ** 53 - 1),
    ];
    for (let i = 0; i < 2000; i++) values.push(Math.round((Math.random() - 0.5) * 2 ** (1 + (i % 52))));
    for (const a of values) {
      for (const b of [1, 2, 3, 7, 4096, 32768, 2 ** 40 + 1, -1, -3, -32768]) {
        expect(Object.is(floorDiv(a, b), exact(a, b) + 0)).toBe(true);
      }
    }
    expect(() => floorDiv(1.5, 2)).toThrow(RangeError);
    expect(() => floorDiv(1, 0)).toThrow(RangeError);
    expect(() => floorDiv(2 ** 53, 3)).toThrow(RangeError);
  });

  test('normalize maps the extremes of Z into int8 without clamping', () => {
    const z = Int32Array.of(-(2 ** 20), 2 ** 20, 0, 5, -5);
    const out = normalize(z);
    expect(Math.min(...out)).toBeGreaterThanOrEqual(-128);
    expect(Math.max(...out)).toBeLessThanOrEqual(127);
  });

  test('the affine form of each activation and the branch-free clamp equal the definitions', () => {
    const definitions = { relu, sigmoid, tanh };
    for (const [name, [mul, add, lo]] of Object.entries(ACTIVATION_AFFINE)) {
      const activation = definitions[name as keyof typeof definitions];
      for (let a = -128; a <= 127; a++) expect(clampInt(a * mul + add, lo, 127)).toBe(activation(a));
    }
    for (let v = -600; v <= 600; v++) {
      expect(clampInt(v, -128, 127)).toBe(clampInt8(v));
      expect(clampInt(v, 0, 127)).toBe(Math.min(Math.max(v, 0), 127));
    }
  });
});
