/**
 * The per-nonce post-processing of the v4.0 accumulators in WebAssembly (SIMD where it helps),
 * for the miner's kernel module (packages/miner/scripts/generate-wasm.ts): what follows the
 * multiply-accumulates of mac-wasm.ts on the Z they leave in memory, contiguous (`count`
 * int32 values from MAC_LAYOUT.z), so that the search touches Z from JavaScript only for a
 * nonce that passes. The definitions are docs/protocol.md 3.3 and the reference
 * (@tensormine/protocol `computeWork`, tensor/mml.ts); the miner's tests compare every field
 * with it on random tasks and the MML score with `mmlScoreQ16` on adversarial bitmaps.
 *
 *   postStats(count):         one pass over Z, 8 neurons per iteration (two i32x4):
 *                             the accumulator fold, 8 lanes of 32 bits, lane l from l, Z[i]
 *                             into lane i mod 8 as s = rotl32(s ^ Z[i], 13) * 0x9E3779B1;
 *                             sum(Z) (i64), min(Z), max(Z). Written at POST_LAYOUT.stats:
 *                             the 8 lanes (u32), then the sum (i64), min, max (i32).
 *   postFired(count, below):  the fired bitmap, bit i set when Z[i] > below (32 neurons per
 *   -> bits                   word: i32x4.gt_s, narrowed to bytes, i8x16.bitmask), written
 *                             at POST_LAYOUT.fired as the path message wants it (byte i >> 3,
 *                             bit i & 7), zero past `count`; returns the MML description
 *                             length in bits, 1 + sum over maximal runs of
 *                             (2 * floor(log2(L)) + 1), counted without visiting the runs:
 *
 *   postActivate(count, mean, shift, bias, mul, add, lo):
 *                             the activations Y[i] = clamp(A[i] * mul + add, lo, 127) with
 *                             A[i] = clamp(((Z[i] - mean) >> shift) + bias, -128, 127), 16
 *                             neurons per iteration, as int8 at POST_LAYOUT.result (relu:
 *                             mul 1, add 0, lo 0; sigmoid: 1, 64, 0; tanh: 4, 0, -128).
 *
 * With W_m the number of windows of m equal consecutive bits, a run of length L holds
 * L - m + 1 of them (when L >= m), so the runs of length >= m number W_m - W_(m+1), and
 * sum over runs of floor(log2(L)) = sum over k >= 1 of (W_(2^k) - W_(2^k + 1)); the runs
 * number count - W_2. W_m is the popcount of S_(m-1), where S_j(i) = 1 when bits i - j .. i are
 * equal: S_1 = (bit i == bit i - 1) for 1 <= i < count, and S_(2d) = S_d & (S_d << d),
 * S_(2d-1) = S_d & (S_(d-1) << d) (shifts towards higher positions, across 64-bit words). The
 * doubling stops at the first level where S_(2^k) is empty (no run is longer), after about
 * log2 of the longest run levels of one pass over count / 64 words each.
 */
import { MAC_LAYOUT } from './mac-wasm.js';
import { type FunctionDef, forLoop, I32, Locals, op } from './wasm-emit.js';

/** The largest Z: 8 filters of 64 x 64. */
const MAX_NEURONS = 8 * 64 * 64;
/** Zero bytes below each bitmap level: the largest shift reads 16384 bits (257 words) below. */
const PREFIX = 2112;

const stats = MAC_LAYOUT.z + 4 * MAX_NEURONS;
const fired = stats + 64;
const levelA = fired + MAX_NEURONS / 8 + 16 + PREFIX;
const levelB = levelA + MAX_NEURONS / 8 + 16 + PREFIX;

const result = levelB + MAX_NEURONS / 8 + 16;

/** Byte offsets of the post-processing buffers, after MAC_LAYOUT's (end: POST_END). */
export const POST_LAYOUT = { stats, fired, levelA, levelB, result } as const;
export const POST_END = result + MAX_NEURONS + 16;
/** Pages a module with these buffers needs. */
export const POST_PAGES = Math.ceil(POST_END / 65536);

const Z = MAC_LAYOUT.z;
const FOLD_MULTIPLIER = 0x9e3779b1 | 0;
const get = op.localGet;
const set = op.localSet;
const tee = op.localTee;
const c = op.i32Const;
/** Lane i32 indices -> i8x16.shuffle byte indices. */
const lanes32 = (l: readonly number[]) => l.flatMap((i) => [4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3]);

function postStats(): FunctionDef {
  const COUNT = 0;
  const L = new Locals(1);
  const i = L.i32();
  const end = L.i32();
  const lane = L.i32();
  const zv = L.i32();
  const min32 = L.i32();
  const max32 = L.i32();
  const sum64 = L.i64();
  const s0 = L.v128();
  const s1 = L.v128();
  const min = L.v128();
  const max = L.v128();
  const sum = L.v128();
  const v0 = L.v128();
  const v1 = L.v128();
  const x = L.v128();
  const M = FOLD_MULTIPLIER;

  const fold = (s: number, v: number) => [
    ...get(s),
    ...get(v),
    ...op.v128Xor,
    ...tee(x),
    ...c(13),
    ...op.i32x4Shl,
    ...get(x),
    ...c(19),
    ...op.i32x4ShrU,
    ...op.v128Or,
    ...op.v128Const([M, M, M, M]),
    ...op.i32x4Mul,
    ...set(s),
  ];
  const widen = (v: number) => [
    ...get(sum),
    ...get(v),
    ...op.i64x2ExtendLowI32x4S,
    ...op.i64x2Add,
    ...get(v),
    ...op.i64x2ExtendHighI32x4S,
    ...op.i64x2Add,
    ...set(sum),
  ];
  const horizontal = (v: number, instr: readonly number[]) => [
    ...get(v),
    ...get(v),
    ...get(v),
    ...op.i8x16Shuffle(lanes32([2, 3, 0, 1])),
    ...instr,
    ...tee(v),
    ...get(v),
    ...get(v),
    ...op.i8x16Shuffle(lanes32([1, 0, 3, 2])),
    ...instr,
    ...op.i32x4ExtractLane(0),
  ];
  const body = [
    ...op.v128Const([0, 1, 2, 3]),
    ...set(s0),
    ...op.v128Const([4, 5, 6, 7]),
    ...set(s1),
    ...c(0),
    ...op.v128Load32Splat(Z),
    ...tee(min),
    ...set(max),
    ...op.v128Const([0, 0, 0, 0]),
    ...set(sum),
    ...get(COUNT),
    ...c(-8),
    ...op.i32And,
    ...c(2),
    ...op.i32Shl,
    ...set(end),
    ...forLoop(i, c(0), get(end), 32, [
      ...get(i),
      ...op.v128Load(Z),
      ...set(v0),
      ...get(i),
      ...op.v128Load(Z + 16),
      ...set(v1),
      ...fold(s0, v0),
      ...fold(s1, v1),
      ...get(min),
      ...get(v0),
      ...get(v1),
      ...op.i32x4MinS,
      ...op.i32x4MinS,
      ...set(min),
      ...get(max),
      ...get(v0),
      ...get(v1),
      ...op.i32x4MaxS,
      ...op.i32x4MaxS,
      ...set(max),
      ...widen(v0),
      ...widen(v1),
    ]),
    ...c(0),
    ...get(s0),
    ...op.v128Store(stats),
    ...c(0),
    ...get(s1),
    ...op.v128Store(stats + 16),
    ...horizontal(min, op.i32x4MinS),
    ...set(min32),
    ...horizontal(max, op.i32x4MaxS),
    ...set(max32),
    ...get(sum),
    ...op.i64x2ExtractLane(0),
    ...get(sum),
    ...op.i64x2ExtractLane(1),
    ...op.i64Add,
    ...set(sum64),
    // The last count mod 8 neurons, one at a time.
    ...forLoop(i, get(end), [...get(COUNT), ...c(2), ...op.i32Shl], 4, [
      ...get(i),
      ...op.i32Load(Z),
      ...set(zv),
      ...get(i),
      ...c(28),
      ...op.i32And,
      ...tee(lane),
      ...get(lane),
      ...op.i32Load(stats),
      ...get(zv),
      ...op.i32Xor,
      ...c(13),
      ...op.i32Rotl,
      ...c(M),
      ...op.i32Mul,
      ...op.i32Store(stats),
      ...get(sum64),
      ...get(zv),
      ...op.i64ExtendI32S,
      ...op.i64Add,
      ...set(sum64),
      ...get(zv),
      ...get(min32),
      ...get(zv),
      ...get(min32),
      ...op.i32LtS,
      ...op.select,
      ...set(min32),
      ...get(zv),
      ...get(max32),
      ...get(zv),
      ...get(max32),
      ...op.i32GtS,
      ...op.select,
      ...set(max32),
    ]),
    ...c(0),
    ...get(sum64),
    ...op.i64Store(stats + 32),
    ...c(0),
    ...get(min32),
    ...op.i32Store(stats + 40),
    ...c(0),
    ...get(max32),
    ...op.i32Store(stats + 44),
  ];
  return { name: 'postStats', params: [I32], results: [], locals: L.types, body };
}

function postFired(): FunctionDef {
  const COUNT = 0;
  const BELOW = 1;
  const L = new Locals(2);
  const k = L.i32();
  const o = L.i32();
  const nw = L.i32();
  const nqb = L.i32();
  const valid = L.i32();
  const j = L.i32();
  const pa = L.i32();
  const pb = L.i32();
  const runs = L.i32();
  const logSum = L.i32();
  const d = L.i32();
  const base = L.i32();
  const prev = L.i64();
  const b = L.i64();
  const vm = L.i64();
  const s = L.i64();
  const a = L.i64();
  const r = L.i64();
  const rr = L.i64();
  const bv = L.v128();

  // 16 fired bits of Z[o/4 + 16h .. + 16) against `below`.
  const sixteen = (h: number): number[] => {
    const gt = (q: number) => [...get(o), ...op.v128Load(Z + 64 * h + 16 * q), ...get(bv), ...op.i32x4GtS];
    return [
      ...gt(0),
      ...gt(1),
      ...op.i16x8NarrowI32x4S,
      ...gt(2),
      ...gt(3),
      ...op.i16x8NarrowI32x4S,
      ...op.i8x16NarrowI16x8S,
      ...op.i8x16Bitmask,
    ];
  };
  const bitmap = forLoop(k, c(0), get(nw), 1, [
    ...get(k),
    ...c(7),
    ...op.i32Shl,
    ...set(o),
    ...get(COUNT),
    ...get(k),
    ...c(5),
    ...op.i32Shl,
    ...op.i32Sub,
    ...set(valid),
    ...get(k),
    ...c(2),
    ...op.i32Shl,
    ...sixteen(0),
    ...sixteen(1),
    ...c(16),
    ...op.i32Shl,
    ...op.i32Or,
    // Bits at or past count are zero: mask (1 << valid) - 1, all of it from 32 on.
    ...c(-1),
    ...c(1),
    ...get(valid),
    ...op.i32Shl,
    ...c(1),
    ...op.i32Sub,
    ...c(0),
    ...get(valid),
    ...c(0),
    ...op.i32GtS,
    ...op.select,
    ...get(valid),
    ...c(32),
    ...op.i32GeS,
    ...op.select,
    ...op.i32And,
    ...op.i32Store(fired),
  ]);

  // Level 1: S_1 into A, the in-range mask (S_0) into B, W_2 = popcount(S_1).
  const level1 = forLoop(j, c(0), get(nqb), 8, [
    ...get(j),
    ...op.i64Load(fired),
    ...set(b),
    ...op.i64Const(-1),
    ...op.i64Const(1),
    ...get(COUNT),
    ...get(j),
    ...c(3),
    ...op.i32Shl,
    ...op.i32Sub,
    ...tee(valid),
    ...op.i64ExtendI32U,
    ...op.i64Shl,
    ...op.i64Const(1),
    ...op.i64Sub,
    ...get(valid),
    ...c(64),
    ...op.i32GeS,
    ...op.select,
    ...set(vm),
    ...get(j),
    ...get(b),
    ...get(b),
    ...op.i64Const(1),
    ...op.i64Shl,
    ...get(prev),
    ...op.i64Const(63),
    ...op.i64ShrU,
    ...op.i64Or,
    ...op.i64Xor,
    ...op.i64Const(-1),
    ...op.i64Xor,
    ...get(vm),
    ...op.i64And,
    // Position 0 has no predecessor.
    ...op.i64Const(-2),
    ...op.i64Const(-1),
    ...get(j),
    ...op.i32Eqz,
    ...op.select,
    ...op.i64And,
    ...tee(s),
    ...op.i64Store(levelA),
    ...get(j),
    ...get(vm),
    ...op.i64Store(levelB),
    ...get(pa),
    ...get(s),
    ...op.i64Popcnt,
    ...op.i32WrapI64,
    ...op.i32Add,
    ...set(pa),
    ...get(b),
    ...set(prev),
  ]);

  // (X << d) at word j: (X[j - q] << r) | (X[j - q - 1] >>> (64 - r)), base = &X[j - q - 1].
  const shifted = (offset: number) => [
    ...get(base),
    ...op.i64Load(offset + 8),
    ...get(r),
    ...op.i64Shl,
    ...get(base),
    ...op.i64Load(offset),
    ...op.i64Const(1),
    ...op.i64ShrU,
    ...get(rr),
    ...op.i64ShrU,
    ...op.i64Or,
  ];
  const popAdd = (acc: number) => [...get(acc), ...op.i64Popcnt, ...op.i32WrapI64, ...op.i32Add];
  // One doubling level, words from the top down (in place: word j reads words <= j).
  const level = [
    ...c(0),
    ...set(pa),
    ...c(0),
    ...set(pb),
    ...get(d),
    ...c(63),
    ...op.i32And,
    ...op.i64ExtendI32U,
    ...tee(r),
    ...op.i64Const(63),
    ...get(r),
    ...op.i64Sub,
    ...set(rr),
    ...get(nqb),
    ...set(j),
    ...op.loop(),
    ...get(j),
    ...c(8),
    ...op.i32Sub,
    ...tee(j),
    ...get(d),
    ...c(6),
    ...op.i32ShrU,
    ...c(3),
    ...op.i32Shl,
    ...op.i32Sub,
    ...c(levelA - 8),
    ...op.i32Add,
    ...set(base),
    ...get(j),
    ...op.i64Load(levelA),
    ...set(a),
    // B <- A & (B << d)
    ...get(j),
    ...get(a),
    ...shifted(levelB - levelA),
    ...op.i64And,
    ...tee(s),
    ...op.i64Store(levelB),
    ...get(pb),
    ...popAdd(s),
    ...set(pb),
    // A <- A & (A << d)
    ...get(j),
    ...get(a),
    ...shifted(0),
    ...op.i64And,
    ...tee(s),
    ...op.i64Store(levelA),
    ...get(pa),
    ...popAdd(s),
    ...set(pa),
    ...get(j),
    ...op.brIf(0),
    ...op.end,
    ...get(logSum),
    ...get(pb),
    ...get(pa),
    ...op.i32Sub,
    ...op.i32Add,
    ...set(logSum),
  ];

  const body = [
    ...get(BELOW),
    ...op.i32x4Splat,
    ...set(bv),
    ...get(COUNT),
    ...c(63),
    ...op.i32Add,
    ...c(6),
    ...op.i32ShrU,
    ...tee(nqb),
    ...c(1),
    ...op.i32Shl,
    ...set(nw),
    ...get(nqb),
    ...c(3),
    ...op.i32Shl,
    ...set(nqb),
    ...bitmap,
    ...level1,
    ...get(COUNT),
    ...get(pa),
    ...op.i32Sub,
    ...set(runs),
    ...c(1),
    ...set(d),
    ...op.block(),
    ...op.loop(),
    // Stop when S_(2^k) is empty (then so is every later level); d <= 16384 whatever the input.
    ...get(pa),
    ...op.i32Eqz,
    ...get(d),
    ...c(MAX_NEURONS / 2),
    ...op.i32GtU,
    ...op.i32Or,
    ...op.brIf(1),
    ...level,
    ...get(d),
    ...c(1),
    ...op.i32Shl,
    ...set(d),
    ...op.br(0),
    ...op.end,
    ...op.end,
    ...c(1),
    ...get(runs),
    ...op.i32Add,
    ...get(logSum),
    ...c(1),
    ...op.i32Shl,
    ...op.i32Add,
  ];
  return { name: 'postFired', params: [I32, I32], results: [I32], locals: L.types, body };
}

function postActivate(): FunctionDef {
  const [COUNT, MEAN, SHIFT, BIAS, MUL, ADD, LO] = [0, 1, 2, 3, 4, 5, 6];
  const L = new Locals(7);
  const i = L.i32();
  const o = L.i32();
  const mean = L.v128();
  const bias = L.v128();
  const mul = L.v128();
  const add = L.v128();
  const lo = L.v128();
  const min8 = L.v128();
  const max8 = L.v128();
  const splat = (param: number, local: number) => [...get(param), ...op.i32x4Splat, ...set(local)];
  // Y of Z[o/4 + 4q .. + 4) as 4 int32 lanes.
  const four = (q: number) => [
    ...get(o),
    ...op.v128Load(Z + 16 * q),
    ...get(mean),
    ...op.i32x4Sub,
    ...get(SHIFT),
    ...op.i32x4ShrS,
    ...get(bias),
    ...op.i32x4Add,
    ...get(min8),
    ...op.i32x4MaxS,
    ...get(max8),
    ...op.i32x4MinS,
    ...get(mul),
    ...op.i32x4Mul,
    ...get(add),
    ...op.i32x4Add,
    ...get(lo),
    ...op.i32x4MaxS,
    ...get(max8),
    ...op.i32x4MinS,
  ];
  const body = [
    ...splat(MEAN, mean),
    ...splat(BIAS, bias),
    ...splat(MUL, mul),
    ...splat(ADD, add),
    ...splat(LO, lo),
    ...op.v128Const([-128, -128, -128, -128]),
    ...set(min8),
    ...op.v128Const([127, 127, 127, 127]),
    ...set(max8),
    // 16 neurons per iteration (the values lie in [-128, 127]: the narrowing is exact); the
    // bytes past count are written too, into the slack, and never read.
    ...forLoop(i, c(0), get(COUNT), 16, [
      ...get(i),
      ...c(2),
      ...op.i32Shl,
      ...set(o),
      ...get(i),
      ...four(0),
      ...four(1),
      ...op.i16x8NarrowI32x4S,
      ...four(2),
      ...four(3),
      ...op.i16x8NarrowI32x4S,
      ...op.i8x16NarrowI16x8S,
      ...op.v128Store(result),
    ]),
  ];
  return {
    name: 'postActivate',
    params: [I32, I32, I32, I32, I32, I32, I32],
    results: [],
    locals: L.types,
    body,
  };
}

export function postFunctions(): FunctionDef[] {
  return [postStats(), postFired(), postActivate()];
}
