import type { Activation } from './devices.js';

/**
 * The integer building blocks of the tensor work. Every value is an integer; JavaScript
 * numbers hold only integers far below 2^53 here, so every operation is exact, and the C core
 * computes the same bits with int32/int64. Tensors are row-major.
 *
 * Ranges (N <= 64, F <= 8): inputs and weights are int8; an accumulator is a sum of at most
 * 64 products (matmul) or 9 products (conv) of two int8, so |acc| <= 64 * 128 * 128 = 2^20;
 * a tensor sum has at most 8 * 64 * 64 terms, so |sum| < 2^36.
 */

/** Sum of a[i] * b[i * stride] for i in [0, n). */
export function dotProduct(
  a: Int8Array,
  aOffset: number,
  b: Int8Array,
  bOffset: number,
  stride: number,
  n: number,
): number {
  let acc = 0;
  for (let i = 0; i < n; i++) acc += a[aOffset + i]! * b[bOffset + i * stride]!;
  return acc;
}

/**
 * Z = X . W for N x N int8 matrices: Z[i][j] = sum_k X[i][k] * W[k][j].
 *
 * Computed in the order i, k, j (W read along its rows, Z's row accumulated in place), four
 * rows of X and two k at a time, so that each value of W loaded feeds four multiply-adds: a
 * few times faster than one dot product per element, with the same bits (every partial sum
 * is an integer, |sum| <= 64 * 128 * 128 = 2^20, so the order of the additions changes
 * nothing). fixed-point.test.ts compares it with the one-dot-product-per-element definition for
 * every N.
 */
export function matmul(x: Int8Array, w: Int8Array, n: number): Int32Array {
  const z = new Int32Array(n * n);
  let i = 0;
  for (; i + 4 <= n; i += 4) matmulRows4(x, w, n, i * n, z);
  for (; i < n; i++) matmulRow(x, w, n, i * n, z);
  return z;
}

/** Rows i..i+3 of Z (`r` = i * n), k two at a time. */
function matmulRows4(x: Int8Array, w: Int8Array, n: number, r: number, z: Int32Array): void {
  const r1 = r + n;
  const r2 = r1 + n;
  const r3 = r2 + n;
  let k = 0;
  for (; k + 2 <= n; k += 2) {
    const a0 = x[r + k]!;
    const a1 = x[r1 + k]!;
    const a2 = x[r2 + k]!;
    const a3 = x[r3 + k]!;
    const c0 = x[r + k + 1]!;
    const c1 = x[r1 + k + 1]!;
    const c2 = x[r2 + k + 1]!;
    const c3 = x[r3 + k + 1]!;
    const wk = k * n;
    const wl = wk + n;
    for (let j = 0; j < n; j++) {
      const b = w[wk + j]!;
      const d = w[wl + j]!;
      z[r + j]! += a0 * b + c0 * d;
      z[r1 + j]! += a1 * b + c1 * d;
      z[r2 + j]! += a2 * b + c2 * d;
      z[r3 + j]! += a3 * b + c3 * d;
    }
  }
  if (k < n) {
    const a0 = x[r + k]!;
    const a1 = x[r1 + k]!;
    const a2 = x[r2 + k]!;
    const a3 = x[r3 + k]!;
    const wk = k * n;
    for (let j = 0; j < n; j++) {
      const b = w[wk + j]!;
      z[r + j]! += a0 * b;
      z[r1 + j]! += a1 * b;
      z[r2 + j]! += a2 * b;
      z[r3 + j]! += a3 * b;
    }
  }
}

/** Row i of Z (`r` = i * n). */
function matmulRow(x: Int8Array, w: Int8Array, n: number, r: number, z: Int32Array): void {
  for (let k = 0; k < n; k++) {
    const a = x[r + k]!;
    const wk = k * n;
    for (let j = 0; j < n; j++) z[r + j]! += a * w[wk + j]!;
  }
}

/**
 * 2-D convolution, F filters of 3x3 over an N x N input with zero padding ("same" size):
 * Z[f][i][j] = sum over di, dj in {-1, 0, 1} of X[i+di][j+dj] * K[f][di+1][dj+1],
 * where X outside the input is 0. Output shape F x N x N.
 *
 * Computed over a copy of X with a border of zeros (N + 2 on a side), so the inner loop has
 * no bounds tests, with the filter's nine weights held in locals; the same bits as the
 * definition (the sums are integers, |sum| <= 9 * 128 * 128 < 2^18).
 */
export function conv3x3(x: Int8Array, kernels: Int8Array, n: number, filters: number): Int32Array {
  const m = n + 2;
  const b = new Int8Array(m * m);
  for (let i = 0; i < n; i++) b.set(x.subarray(i * n, i * n + n), (i + 1) * m + 1);
  const z = new Int32Array(filters * n * n);
  for (let f = 0; f < filters; f++) {
    const k = f * 9;
    const k0 = kernels[k]!;
    const k1 = kernels[k + 1]!;
    const k2 = kernels[k + 2]!;
    const k3 = kernels[k + 3]!;
    const k4 = kernels[k + 4]!;
    const k5 = kernels[k + 5]!;
    const k6 = kernels[k + 6]!;
    const k7 = kernels[k + 7]!;
    const k8 = kernels[k + 8]!;
    for (let i = 0; i < n; i++) {
      // Rows i - 1, i and i + 1 of X are rows i, i + 1 and i + 2 of the bordered copy.
      const p = i * m;
      const q = p + m;
      const s = q + m;
      const out = (f * n + i) * n;
      for (let j = 0; j < n; j++) {
        z[out + j] =
          k0 * b[p + j]! +
          k1 * b[p + j + 1]! +
          k2 * b[p + j + 2]! +
          k3 * b[q + j]! +
          k4 * b[q + j + 1]! +
          k5 * b[q + j + 2]! +
          k6 * b[s + j]! +
          k7 * b[s + j + 1]! +
          k8 * b[s + j + 2]!;
      }
    }
  }
  return z;
}

/**
 * floor(a / b) for safe integers, computed without rounding: r = a % b is exact (it has a's
 * sign), a - r is an exact multiple of b, so (a - r) / b is an exact integer, one less when the
 * remainder and b differ in sign.
 */
export function floorDiv(a: number, b: number): number {
  if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b) || b === 0) {
    throw new RangeError(`floorDiv: expected safe integers and b != 0, got ${a} / ${b}`);
  }
  const r = a % b;
  const q = (a - r) / b + 0; // + 0: a -0 quotient (0 / -b) becomes 0
  return r !== 0 && r < 0 !== b < 0 ? q - 1 : q;
}

/** Arithmetic right shift (floor division by 2^s) of an integer |v| < 2^31. */
export function shiftRight(v: number, s: number): number {
  return v >> s;
}

/**
 * normalize: maps accumulators to int8 by subtracting the tensor mean and scaling by a power
 * of two. m = floor(sum(Z) / count); D = Z - m; s = the smallest s >= 0 with
 * (max |D|) >> s <= 127; out = D >> s (arithmetic). Every output lies in [-128, 127]
 * without clamping.
 */
export function normalize(z: Int32Array): Int8Array {
  // One pass for the sum and the extremes: max |Z - m| = max(max - m, m - min), since
  // min <= m <= max (m is the floor of the mean of integers).
  let sum = 0;
  let min = z[0]!;
  let max = min;
  for (let i = 0; i < z.length; i++) {
    const v = z[i]!;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = floorDiv(sum, z.length);
  const s = normalizeShift(Math.max(max - mean, mean - min));
  const out = new Int8Array(z.length);
  for (let i = 0; i < z.length; i++) out[i] = (z[i]! - mean) >> s;
  return out;
}

/** normalize's s: the smallest s >= 0 with maxAbs >> s <= 127. */
export function normalizeShift(maxAbs: number): number {
  let s = 0;
  while (maxAbs >> s > 127) s++;
  return s;
}

export function clampInt8(v: number): number {
  return v < -128 ? -128 : Math.min(v, 127);
}

/** relu(a) = max(a, 0). */
export function relu(a: number): number {
  return Math.max(a, 0);
}

/**
 * Integer hard sigmoid. The input a is Q5 fixed point (a / 32, range [-4, 4)); the output is
 * Q7 (value / 128): sigma(t) = clamp(t / 4 + 1/2, 0, 1) becomes clamp(a + 64, 0, 127).
 */
export function sigmoid(a: number): number {
  const v = a + 64;
  return v < 0 ? 0 : Math.min(v, 127);
}

/** Integer hard tanh: input Q5, output Q7: clamp(t, -1, 1) becomes clamp(4a, -128, 127). */
export function tanh(a: number): number {
  return clampInt8(a * 4);
}

/**
 * The activations as clamp(a * mul + add, lo, 127) for a in [-128, 127]: relu, sigmoid and
 * tanh above, as [mul, add, lo] (fixed-point.test.ts checks every a). The loops over a whole
 * tensor (work.ts, the WebAssembly core) use this form.
 */
export const ACTIVATION_AFFINE: Readonly<Record<Activation, readonly [number, number, number]>> = {
  relu: [1, 0, 0],
  sigmoid: [1, 64, 0],
  tanh: [4, 0, -128],
};

/**
 * clamp(v, lo, hi) for integers |v|, |lo|, |hi| < 2^30, without a branch on v: over a tensor
 * the signs are random, and a branch on them mispredicts every other element.
 */
export function clampInt(v: number, lo: number, hi: number): number {
  const d = v - lo;
  const atLeastLo = lo + (d & ~(d >> 31)); // max(v, lo)
  const e = hi - atLeastLo;
  return hi - (e & ~(e >> 31)); // min(., hi)
}
