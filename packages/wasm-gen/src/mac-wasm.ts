/**
 * The v4.0 multiply-accumulate cores in WebAssembly SIMD, as functions for a generated module
 * (the protocol's verifier core and the miner's kernels module, each made by its package's
 * scripts/generate-wasm.ts): int8 operands widened to int16 (v128.load8x8_s) and multiplied
 * into int32 sums, 8 products per instruction.
 *
 * And the weights themselves, `expand(seed, 32 * blocks)` into W, 4 counters per vector:
 *   expandWeights(blocks):      W[32i .. 32i + 32) = SHA-256(seed || u32le(i)), i < blocks
 *                               (rounded up to a multiple of 4: W has the slack)
 *
 * Memory layout (byte offsets, MAC_LAYOUT); strides are padded and the padding is zero:
 *   seed the 32-byte work seed.
 *   X   the input. matmul: ip = round_up(N, 2) rows of stride kp = round_up(N, 8).
 *       conv: the input with a zero border, N + 2 rows of stride sp = round_up(N, 8) + 8,
 *       X[r][c] at (r + 1) * sp + c + 1.
 *   W   the weight bytes as `expand` gives them (matmul W[k][j] at k * N + j; conv K[f][a][b]
 *       at f * 9 + a * 3 + b), read at byte index t ^ swap: swap = 0 for bytes, 3 for
 *       big-endian 32-bit words stored little-endian (the miner's digest words).
 *   WT  scratch: the matmul weights transposed, N rows of stride kp (padding zero).
 *   Z   the int32 accumulators. matmul: ip rows of stride jp = round_up(N, 4);
 *       conv: F planes of N rows of stride round_up(N, 8).
 *
 *   macMatmul(n, swap):         Z[i][j] = sum_k X[i][k] * W[k][j]
 *   macConv(n, filters, swap):  Z[f][i][j] = sum_{a,b in 0..2} X[i+a-1][j+b-1] * K[f][a][b]
 *                               (taps in pairs: the two taps' inputs interleaved as int16,
 *                               one i32x4.dot_i16x8_s per pair and 4 outputs; tap 8 alone)
 */
import { BSWAP32_LANES, Builder, compressSymbolic, IV256, lit, type Val } from './sha256-wasm.js';
import { type FunctionDef, forLoop, I32, Locals, op, V128 } from './wasm-emit.js';

/** W has 128 bytes of slack: expandWeights writes whole groups of 4 blocks. */
export const MAC_LAYOUT = { seed: 512, x: 1024, w: 9216, wt: 13440, z: 17536 } as const;
/** Pages the MAC layout needs: Z holds at most 8 x 64 x 64 int32 (the largest conv). */
export const MAC_PAGES = 3;

const { x: X, w: W, wt: WT, z: Z } = MAC_LAYOUT;

const get = op.localGet;
const set = op.localSet;
const c = op.i32Const;
/** round_up(local, m) for a power of two m. */
const roundUp = (local: number, m: number) => [
  ...get(local),
  ...c(m - 1),
  ...op.i32Add,
  ...c(-m),
  ...op.i32And,
];
/** Lane i32 indices -> i8x16.shuffle byte indices (0..3 first operand, 4..7 second). */
const lanes32 = (l: readonly number[]) => l.flatMap((i) => [4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3]);

function macMatmul(): FunctionDef {
  const N = 0;
  const SWAP = 1;
  const L = new Locals(2);
  const kp = L.i32();
  const jp = L.i32();
  const ip = L.i32();
  const i = L.i32();
  const j = L.i32();
  const k = L.i32();
  const xa = L.i32();
  const xb = L.i32();
  const wa = L.i32();
  const acc = Array.from({ length: 8 }, () => L.v128());
  const xv = [L.v128(), L.v128()];
  const wv = Array.from({ length: 4 }, () => L.v128());
  const t = [L.v128(), L.v128(), L.v128(), L.v128()];
  const src = L.i32();
  const dst = L.i32();
  const word = L.i32();

  // With bytes in order (swap 0) and N a multiple of 4 (every device size): the same
  // transpose 4 bytes at a time, one 32-bit load (W[k][j..j+4)) and 4 byte stores.
  const byteAt = (q: number) => [
    ...get(dst),
    ...(q > 0 ? [...get(kp), ...c(q), ...op.i32Mul, ...op.i32Add] : []),
    ...get(word),
    ...(q > 0 ? [...c(8 * q), ...op.i32ShrU] : []),
    ...op.i32Store8(WT),
  ];
  const transpose4 = [
    ...c(0),
    ...set(src),
    ...forLoop(k, c(0), get(N), 1, [
      ...get(k),
      ...set(dst),
      ...forLoop(j, c(0), get(N), 4, [
        ...get(src),
        ...op.i32Load(W),
        ...set(word),
        ...byteAt(0),
        ...byteAt(1),
        ...byteAt(2),
        ...byteAt(3),
        ...get(src),
        ...c(4),
        ...op.i32Add,
        ...set(src),
        ...get(dst),
        ...get(kp),
        ...c(2),
        ...op.i32Shl,
        ...op.i32Add,
        ...set(dst),
      ]),
    ]),
  ];

  // WT[j][k] = W[k][j]: WT + j * kp + k <- W + ((k * N + j) ^ swap).
  const transpose = forLoop(
    k,
    c(0),
    get(N),
    1,
    forLoop(j, c(0), get(N), 1, [
      ...get(j),
      ...get(kp),
      ...op.i32Mul,
      ...get(k),
      ...op.i32Add,
      ...get(k),
      ...get(N),
      ...op.i32Mul,
      ...get(j),
      ...op.i32Add,
      ...get(SWAP),
      ...op.i32Xor,
      ...op.i32Load8S(W),
      ...op.i32Store8(WT),
    ]),
  );

  // Two rows of X (xa, xb) against four rows of WT (wa + q * kp), 8 products per dot.
  const inner: number[] = [
    ...get(xa),
    ...get(k),
    ...op.i32Add,
    ...op.v128Load8x8S(X),
    ...set(xv[0]!),
    ...get(xb),
    ...get(k),
    ...op.i32Add,
    ...op.v128Load8x8S(X),
    ...set(xv[1]!),
  ];
  for (let q = 0; q < 4; q++) {
    inner.push(...get(wa), ...get(k), ...op.i32Add);
    if (q > 0) inner.push(...get(kp), ...c(q), ...op.i32Mul, ...op.i32Add);
    inner.push(...op.v128Load8x8S(WT), ...set(wv[q]!));
  }
  for (let r = 0; r < 2; r++) {
    for (let q = 0; q < 4; q++) {
      const a = acc[4 * r + q]!;
      inner.push(...get(a), ...get(xv[r]!), ...get(wv[q]!), ...op.i32x4DotI16x8S, ...op.i32x4Add, ...set(a));
    }
  }

  // Horizontal sums of four accumulators into one vector [sum a0, sum a1, sum a2, sum a3].
  const reduce4 = (a: readonly number[]): number[] => [
    ...get(a[0]!),
    ...get(a[1]!),
    ...op.i8x16Shuffle(lanes32([0, 4, 1, 5])),
    ...get(a[0]!),
    ...get(a[1]!),
    ...op.i8x16Shuffle(lanes32([2, 6, 3, 7])),
    ...op.i32x4Add,
    ...set(t[0]!),
    ...get(a[2]!),
    ...get(a[3]!),
    ...op.i8x16Shuffle(lanes32([0, 4, 1, 5])),
    ...get(a[2]!),
    ...get(a[3]!),
    ...op.i8x16Shuffle(lanes32([2, 6, 3, 7])),
    ...op.i32x4Add,
    ...set(t[1]!),
    ...get(t[0]!),
    ...get(t[1]!),
    ...op.i8x16Shuffle(lanes32([0, 1, 4, 5])),
    ...get(t[0]!),
    ...get(t[1]!),
    ...op.i8x16Shuffle(lanes32([2, 3, 6, 7])),
    ...op.i32x4Add,
  ];
  const zero = acc.flatMap((a) => [...op.v128Const([0, 0, 0, 0]), ...set(a)]);
  const columns = forLoop(j, c(0), get(jp), 4, [
    ...zero,
    ...get(j),
    ...get(kp),
    ...op.i32Mul,
    ...set(wa),
    ...forLoop(k, c(0), get(kp), 8, inner),
    // Z + (i * jp + j) * 4 and the next row.
    ...get(i),
    ...get(jp),
    ...op.i32Mul,
    ...get(j),
    ...op.i32Add,
    ...c(2),
    ...op.i32Shl,
    ...reduce4(acc.slice(0, 4)),
    ...op.v128Store(Z),
    ...get(i),
    ...c(1),
    ...op.i32Add,
    ...get(jp),
    ...op.i32Mul,
    ...get(j),
    ...op.i32Add,
    ...c(2),
    ...op.i32Shl,
    ...reduce4(acc.slice(4, 8)),
    ...op.v128Store(Z),
  ]);
  const rows = forLoop(i, c(0), get(ip), 2, [
    ...get(i),
    ...get(kp),
    ...op.i32Mul,
    ...op.localTee(xa),
    ...get(kp),
    ...op.i32Add,
    ...set(xb),
    ...columns,
  ]);
  return {
    name: 'macMatmul',
    params: [I32, I32],
    results: [],
    locals: L.types,
    body: [
      ...roundUp(N, 8),
      ...set(kp),
      ...roundUp(N, 4),
      ...set(jp),
      ...roundUp(N, 2),
      ...set(ip),
      ...get(SWAP),
      ...op.i32Eqz,
      ...get(N),
      ...c(3),
      ...op.i32And,
      ...op.i32Eqz,
      ...op.i32And,
      ...op.if(),
      ...transpose4,
      ...op.else,
      ...transpose,
      ...op.end,
      ...rows,
    ],
  };
}

function macConv(): FunctionDef {
  const N = 0;
  const F = 1;
  const SWAP = 2;
  const L = new Locals(3);
  const sp = L.i32();
  const jp = L.i32();
  const f = L.i32();
  const i = L.i32();
  const j = L.i32();
  const row = L.i32();
  const out = L.i32();
  // Taps 2p and 2p + 1 (t = 3a + b) as int16 pairs for i32x4.dot_i16x8_s, and tap 8 alone.
  const pairs = Array.from({ length: 4 }, () => L.v128());
  const last = L.v128();
  const lo = L.v128();
  const hi = L.v128();
  const v = L.v128();
  const u = L.v128();

  const tap = (t: number) => [
    ...get(f),
    ...c(9),
    ...op.i32Mul,
    ...c(t),
    ...op.i32Add,
    ...get(SWAP),
    ...op.i32Xor,
    ...op.i32Load8S(W),
  ];
  // The taps of filter f: pair p splatted as [K(2p), K(2p + 1)] x 4 (int16), tap 8 to 8 lanes.
  const loadTaps: number[] = [];
  for (let p = 0; p < 4; p++) {
    loadTaps.push(
      ...tap(2 * p),
      ...c(0xffff),
      ...op.i32And,
      ...tap(2 * p + 1),
      ...c(16),
      ...op.i32Shl,
      ...op.i32Or,
      ...op.i32x4Splat,
      ...set(pairs[p]!),
    );
  }
  loadTaps.push(...tap(8), ...op.i16x8Splat, ...set(last));
  /** The 8 inputs under tap t of the window at `row`, widened to int16. */
  const under = (t: number): number[] => {
    const [ta, tb] = [Math.floor(t / 3), t % 3];
    return [
      ...get(row),
      ...(ta > 0 ? [...get(sp), ...c(ta), ...op.i32Mul, ...op.i32Add] : []),
      ...op.v128Load8x8S(X + tb),
    ];
  };
  // i16 lanes interleaved: [v0, u0, v1, u1, v2, u2, v3, u3] and the same of lanes 4..7.
  const interleaveLow = [0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23];
  const interleaveHigh = [8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31];
  // Eight outputs Z[f][i][j..j+8): row = X + i * sp + j (the window's top-left corner). Each
  // pair of taps is one dot product per 4 outputs: the two taps' inputs interleaved.
  const eight: number[] = [
    ...op.v128Const([0, 0, 0, 0]),
    ...set(lo),
    ...op.v128Const([0, 0, 0, 0]),
    ...set(hi),
  ];
  for (let p = 0; p < 4; p++) {
    eight.push(
      ...under(2 * p),
      ...set(v),
      ...under(2 * p + 1),
      ...set(u),
      ...get(lo),
      ...get(v),
      ...get(u),
      ...op.i8x16Shuffle(interleaveLow),
      ...get(pairs[p]!),
      ...op.i32x4DotI16x8S,
      ...op.i32x4Add,
      ...set(lo),
      ...get(hi),
      ...get(v),
      ...get(u),
      ...op.i8x16Shuffle(interleaveHigh),
      ...get(pairs[p]!),
      ...op.i32x4DotI16x8S,
      ...op.i32x4Add,
      ...set(hi),
    );
  }
  eight.push(
    ...under(8),
    ...set(v),
    ...get(lo),
    ...get(v),
    ...get(last),
    ...op.i32x4ExtmulLowI16x8S,
    ...op.i32x4Add,
    ...set(lo),
    ...get(hi),
    ...get(v),
    ...get(last),
    ...op.i32x4ExtmulHighI16x8S,
    ...op.i32x4Add,
    ...set(hi),
  );
  eight.push(
    ...get(out),
    ...get(lo),
    ...op.v128Store(Z),
    ...get(out),
    ...get(hi),
    ...op.v128Store(Z + 16),
    ...get(out),
    ...c(32),
    ...op.i32Add,
    ...set(out),
    ...get(row),
    ...c(8),
    ...op.i32Add,
    ...set(row),
  );
  const body = [
    ...roundUp(N, 8),
    ...set(jp),
    ...get(jp),
    ...c(8),
    ...op.i32Add,
    ...set(sp),
    ...c(0),
    ...set(out),
    ...forLoop(f, c(0), get(F), 1, [
      ...loadTaps,
      ...forLoop(i, c(0), get(N), 1, [
        ...get(i),
        ...get(sp),
        ...op.i32Mul,
        ...set(row),
        ...forLoop(j, c(0), get(jp), 8, eight),
      ]),
    ]),
  ];
  return { name: 'macConv', params: [I32, I32, I32], results: [], locals: L.types, body };
}

function expandWeights(): FunctionDef {
  const BLOCKS = 0;
  const bld = new Builder(1, 1);
  // The seed as 8 big-endian words (fixed for the call).
  const seed = Array.from({ length: 8 }, (_, i) =>
    bld.fixed([
      ...c(0),
      ...op.v128Load32Splat(MAC_LAYOUT.seed + 4 * i),
      ...c(0),
      ...op.v128Load32Splat(MAC_LAYOUT.seed + 4 * i),
      ...op.i8x16Shuffle(BSWAP32_LANES),
      ...op.i32x4ExtractLane(0),
    ]),
  );
  // The counter vector [i, i + 1, i + 2, i + 3] and the block index i.
  const counter = bld.local(V128);
  const i = bld.local(I32);
  const out = bld.local(I32);
  const w8 = bld.perNonce(() => [...get(counter), ...get(counter), ...op.i8x16Shuffle(BSWAP32_LANES)]);
  const message: Val[] = [
    ...seed,
    w8,
    lit(0x80000000),
    ...Array.from({ length: 5 }, () => lit(0)),
    lit(36 * 8),
  ];
  const state = compressSymbolic(bld, IV256.map(lit), message);
  // Digest word k of the 4 blocks, byte-swapped so that a little-endian store writes the
  // big-endian digest bytes; block i + l at W + 32 (i + l).
  const digest = state.map((v, k) => {
    const d = bld.sum(lit(IV256[k]!), v);
    return bld.perNonce(() => [...bld.get(d, 0), ...bld.get(d, 0), ...op.i8x16Shuffle(BSWAP32_LANES)]);
  });
  const stores: number[] = [];
  for (let l = 0; l < 4; l++) {
    for (let k = 0; k < 8; k++) {
      stores.push(
        ...get(out),
        ...bld.get(digest[k]!, 0),
        ...op.i32x4ExtractLane(l),
        ...op.i32Store(MAC_LAYOUT.w + 32 * l + 4 * k),
      );
    }
  }
  return {
    name: 'expandWeights',
    params: [I32],
    results: [],
    locals: bld.locals,
    body: [
      ...get(BLOCKS),
      ...op.i32Eqz,
      ...op.if(),
      ...op.return,
      ...op.end,
      ...op.v128Const([0, 1, 2, 3]),
      ...set(counter),
      ...c(0),
      ...set(i),
      ...c(0),
      ...set(out),
      ...bld.pre,
      ...op.loop(),
      ...bld.body,
      ...stores,
      ...get(counter),
      ...op.v128Const([4, 4, 4, 4]),
      ...op.i32x4Add,
      ...set(counter),
      ...get(out),
      ...c(128),
      ...op.i32Add,
      ...set(out),
      ...get(i),
      ...c(4),
      ...op.i32Add,
      ...op.localTee(i),
      ...get(BLOCKS),
      ...op.i32LtU,
      ...op.brIf(0),
      ...op.end,
    ],
  };
}

export function macFunctions(): FunctionDef[] {
  return [macMatmul(), macConv(), expandWeights()];
}
