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

/** Z = X . W for N x N int8 matrices: Z[i][j] = sum_k X[i][k] * W[k][j]. */
export function matmul(x: Int8Array, w: Int8Array, n: number): Int32Array {
  const z = new Int32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) z[i * n + j] = dotProduct(x, i * n, w, j, n, n);
  }
  return z;
}

/**
 * 2-D convolution, F filters of 3x3 over an N x N input with zero padding ("same" size):
 * Z[f][i][j] = sum over di, dj in {-1, 0, 1} of X[i+di][j+dj] * K[f][di+1][dj+1],
 * where X outside the input is 0. Output shape F x N x N.
 */
export function conv3x3(x: Int8Array, kernels: Int8Array, n: number, filters: number): Int32Array {
  const z = new Int32Array(filters * n * n);
  for (let f = 0; f < filters; f++) {
    const k = f * 9;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let di = -1; di <= 1; di++) {
          const row = i + di;
          if (row < 0 || row >= n) continue;
          for (let dj = -1; dj <= 1; dj++) {
            const col = j + dj;
            if (col < 0 || col >= n) continue;
            acc += x[row * n + col]! * kernels[k + (di + 1) * 3 + (dj + 1)]!;
          }
        }
        z[(f * n + i) * n + j] = acc;
      }
    }
  }
  return z;
}

/** floor(a / b) for integers, b > 0, computed without floating-point division. */
export function floorDiv(a: number, b: number): number {
  return Number(floorDivBig(BigInt(a), BigInt(b)));
}

function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b; // truncates toward zero
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
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
  let sum = 0;
  for (let i = 0; i < z.length; i++) sum += z[i]!;
  const mean = floorDiv(sum, z.length);
  let maxAbs = 0;
  for (let i = 0; i < z.length; i++) {
    const d = z[i]! - mean;
    const a = d < 0 ? -d : d;
    if (a > maxAbs) maxAbs = a;
  }
  const s = normalizeShift(maxAbs);
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
