/**
 * Generates src/kernels/wasm.generated.ts: the WebAssembly SIMD (128-bit) kernels as a base64
 * module, written by this script from scratch (scripts/wasm-emit.ts writes the bytes; no
 * toolchain). The module exports `memory` and:
 *
 * - `scanHexchain(loStart, count, t0) -> i32`: the hexchain nonce search, LANES nonces per
 *   iteration (GROUPS interleaved groups of 4 lanes), with the same contract as the
 *   JavaScript `scanHexchain` of sha256.generated.ts (see HEXCHAIN_* below for the layout).
 *   The compression is written once, symbolically: every value is a literal (folded here), a
 *   value fixed for the call (scalar i32 code before the loop: the rounds before the nonce
 *   word enters, the schedule words and the partial sums that do not depend on it), or a
 *   per-nonce vector (the loop body). The first digest word is compared with t0 in the loop.
 * - `macMatmul(n, swap)` and `macConv(n, filters, swap)`: the v4.0 multiply-accumulate
 *   cores, the same functions as the protocol package's verifier core (one generator:
 *   protocol/scripts/mac-wasm.ts; the hexchain parameters sit below its buffers).
 *
 *   npx tsx packages/miner/scripts/generate-wasm.ts          (writes the file)
 *   npx tsx packages/miner/scripts/generate-wasm.ts --check  (fails when it is out of date)
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAC_LAYOUT, MAC_PAGES, macFunctions } from '../../protocol/scripts/mac-wasm.js';
import {
  type FunctionDef,
  I32,
  moduleBytes,
  op,
  V128,
  type ValType,
  writeGenerated,
} from '../../protocol/scripts/wasm-emit.js';
import { K256 } from '../src/kernels/sha256.js';

/** Interleaved groups of 4 lanes in the hexchain loop. */
const GROUPS = 1;
const LANES = 4 * GROUPS;

// ---------------------------------------------------------------------------------------------
// The symbolic builder.

type Val =
  | { readonly k: 'lit'; readonly v: number }
  | { readonly k: 'fix'; readonly l: number }
  | { readonly k: 'vec'; readonly l: readonly number[] };

type Bin = 'add' | 'xor' | 'and' | 'or';
const SCALAR: Record<Bin, readonly number[]> = {
  add: op.i32Add,
  xor: op.i32Xor,
  and: op.i32And,
  or: op.i32Or,
};
const VECTOR: Record<Bin, readonly number[]> = {
  add: op.i32x4Add,
  xor: op.v128Xor,
  and: op.v128And,
  or: op.v128Or,
};
const FOLD: Record<Bin, (a: number, b: number) => number> = {
  add: (a, b) => (a + b) | 0,
  xor: (a, b) => a ^ b,
  and: (a, b) => a & b,
  or: (a, b) => a | b,
};

const lit = (v: number): Val => ({ k: 'lit', v: v | 0 });

class Builder {
  readonly locals: ValType[] = [];
  /** Code before the loop (values fixed for the call). */
  readonly pre: number[] = [];
  /** The loop body (per-nonce vectors). */
  readonly body: number[] = [];
  private readonly splats = new Map<string, number>();

  constructor(
    private readonly params: number,
    readonly groups: number,
  ) {}

  local(type: ValType): number {
    this.locals.push(type);
    return this.params + this.locals.length - 1;
  }

  /** Pushes a scalar (literal or fixed) onto the stack, in `pre`. */
  private scalar(v: Val): number[] {
    if (v.k === 'lit') return op.i32Const(v.v);
    if (v.k === 'fix') return op.localGet(v.l);
    throw new Error('vector where a scalar is expected');
  }

  /** Pushes lane group g of a value as a vector (literals and fixed values are splatted once). */
  private vector(v: Val, g: number): number[] {
    if (v.k === 'vec') return op.localGet(v.l[g]!);
    const key = v.k === 'lit' ? `c${v.v}` : `f${v.l}`;
    let l = this.splats.get(key);
    if (l === undefined) {
      l = this.local(V128);
      this.splats.set(key, l);
      this.pre.push(...this.scalar(v), ...op.i32x4Splat, ...op.localSet(l));
    }
    return op.localGet(l);
  }

  /** A fixed value computed before the loop by `code` (which leaves one i32). */
  fixed(code: readonly number[]): Val {
    const l = this.local(I32);
    this.pre.push(...code, ...op.localSet(l));
    return { k: 'fix', l };
  }

  /** A per-nonce vector computed in the loop: `code(g)` leaves group g's v128. */
  perNonce(code: (g: number) => readonly number[]): Val {
    const l = Array.from({ length: this.groups }, (_, g) => {
      const local = this.local(V128);
      this.body.push(...code(g), ...op.localSet(local));
      return local;
    });
    return { k: 'vec', l };
  }

  bin(kind: Bin, a: Val, b: Val): Val {
    if (a.k === 'lit' && b.k === 'lit') return lit(FOLD[kind](a.v, b.v));
    if (kind === 'add' && a.k === 'lit' && a.v === 0) return b;
    if (kind === 'add' && b.k === 'lit' && b.v === 0) return a;
    if (a.k !== 'vec' && b.k !== 'vec')
      return this.fixed([...this.scalar(a), ...this.scalar(b), ...SCALAR[kind]]);
    return this.perNonce((g) => [...this.vector(a, g), ...this.vector(b, g), ...VECTOR[kind]]);
  }

  /** A sum: literals folded, fixed terms summed before the loop, then the vectors. */
  sum(...terms: Val[]): Val {
    let constant = 0;
    let fixedPart: Val = lit(0);
    const vectors: Val[] = [];
    for (const t of terms) {
      if (t.k === 'lit') constant = (constant + t.v) | 0;
      else if (t.k === 'fix') fixedPart = fixedPart.k === 'lit' ? t : this.bin('add', fixedPart, t);
      else vectors.push(t);
    }
    fixedPart = this.bin('add', fixedPart, lit(constant));
    let acc: Val | undefined;
    for (const v of vectors) acc = acc === undefined ? v : this.bin('add', acc, v);
    return acc === undefined ? fixedPart : this.bin('add', acc, fixedPart);
  }

  xor(...terms: Val[]): Val {
    return terms.reduce((a, b) => this.bin('xor', a, b));
  }

  shr(x: Val, n: number): Val {
    if (x.k === 'lit') return lit(x.v >>> n);
    if (x.k === 'fix') return this.fixed([...this.scalar(x), ...op.i32Const(n), ...op.i32ShrU]);
    return this.perNonce((g) => [...this.vector(x, g), ...op.i32Const(n), ...op.i32x4ShrU]);
  }

  rotr(x: Val, n: number): Val {
    if (x.k === 'lit') return lit((x.v >>> n) | (x.v << (32 - n)));
    if (x.k === 'fix') return this.fixed([...this.scalar(x), ...op.i32Const(n), ...op.i32Rotr]);
    return this.perNonce((g) => [
      ...this.vector(x, g),
      ...op.i32Const(n),
      ...op.i32x4ShrU,
      ...this.vector(x, g),
      ...op.i32Const(32 - n),
      ...op.i32x4Shl,
      ...op.v128Or,
    ]);
  }

  /** Pushes group g of a vector value (for code written by hand around the builder). */
  get(v: Val, g: number): number[] {
    return this.vector(v, g);
  }
}

// ---------------------------------------------------------------------------------------------
// SHA-256 on symbolic words.

function compressSymbolic(bld: Builder, state: readonly Val[], message: readonly Val[]): Val[] {
  const s0 = (x: Val) => bld.xor(bld.rotr(x, 7), bld.rotr(x, 18), bld.shr(x, 3));
  const s1 = (x: Val) => bld.xor(bld.rotr(x, 17), bld.rotr(x, 19), bld.shr(x, 10));
  const S0 = (x: Val) => bld.xor(bld.rotr(x, 2), bld.rotr(x, 13), bld.rotr(x, 22));
  const S1 = (x: Val) => bld.xor(bld.rotr(x, 6), bld.rotr(x, 11), bld.rotr(x, 25));
  const w = [...message];
  let [a, b, c, d, e, f, g, h] = state as [Val, Val, Val, Val, Val, Val, Val, Val];
  // maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)): b ^ c is the previous round's a ^ b.
  let bc = bld.xor(b, c);
  for (let i = 0; i < 64; i++) {
    if (i >= 16) w[i] = bld.sum(w[i - 16]!, s0(w[i - 15]!), w[i - 7]!, s1(w[i - 2]!));
    // ch(e, f, g) = g ^ (e & (f ^ g)): f where e, else g (as fast as v128.bitselect here).
    const t1 = bld.sum(h, S1(e), bld.xor(g, bld.bin('and', e, bld.xor(f, g))), lit(K256[i]!), w[i]!);
    const ab = bld.xor(a, b);
    const t2 = bld.sum(S0(a), bld.xor(b, bld.bin('and', ab, bc)));
    bc = ab;
    h = g;
    g = f;
    f = e;
    e = bld.sum(d, t1);
    d = c;
    c = b;
    b = a;
    a = bld.sum(t1, t2);
  }
  return [a, b, c, d, e, f, g, h];
}

// ---------------------------------------------------------------------------------------------
// scanHexchain(loStart, count, t0): the first i in [0, count) whose nonce low word loStart + i
// gives a first digest word <= t0 (unsigned), or -1. count in [0, 2^31).

/** Byte offsets of the hexchain parameters in memory (13 words, as in the JavaScript kernel). */
export const HEXCHAIN_PARAMS = 0;

function hexchainFunction(): FunctionDef {
  const LO = 0;
  const COUNT = 1;
  const T0 = 2;
  const bld = new Builder(3, GROUPS);
  const load = (word: number) => bld.fixed([...op.i32Const(0), ...op.i32Load(HEXCHAIN_PARAMS + 4 * word)]);
  const mid = Array.from({ length: 8 }, (_, i) => load(i));
  const c = Array.from({ length: 4 }, (_, i) => load(8 + i));
  const w5 = load(12);
  // The nonce vector of the iteration: loStart + i + [0, 1, 2, 3] (+ 4g), and the offset i.
  const base = bld.local(V128);
  const i = bld.local(I32);
  bld.pre.push(
    ...op.localGet(LO),
    ...op.i32x4Splat,
    ...op.v128Const([0, 1, 2, 3]),
    ...op.i32x4Add,
    ...op.localSet(base),
    ...op.i32Const(0),
    ...op.localSet(i),
  );
  // Block word 4: the byte-swapped low nonce word.
  const bswap = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12];
  const w4 = bld.perNonce((g) => [
    ...op.localGet(base),
    ...(g === 0 ? [] : [...op.v128Const([4 * g, 4 * g, 4 * g, 4 * g]), ...op.i32x4Add]),
    ...op.localGet(base),
    ...op.i8x16Shuffle(bswap),
    // Shuffle takes two operands; the second is unused by these lane indices.
  ]);
  const message: Val[] = [
    ...c,
    w4,
    w5,
    lit(0x80000000),
    ...Array.from({ length: 8 }, () => lit(0)),
    lit(88 * 8),
  ];
  const [a] = compressSymbolic(bld, mid, message);
  const digest0 = bld.sum(mid[0]!, a!);
  const t0 = bld.fixed(op.localGet(T0));
  const hit = bld.perNonce((g) => [...bld.get(digest0, g), ...bld.get(t0, g), ...op.i32x4LeU]);
  // Any lane at or below t0: the lowest such lane, if it is inside the range.
  const mask = bld.local(I32);
  const idx = bld.local(I32);
  const bitmask: number[] = [];
  for (let g = 0; g < GROUPS; g++) {
    bitmask.push(...bld.get(hit, g), ...op.i32x4Bitmask);
    if (g > 0) bitmask.push(...op.i32Const(4 * g), ...op.i32Shl, ...op.i32Or);
  }
  const anyHit: number[] = [];
  for (let g = 0; g < GROUPS; g++) {
    anyHit.push(...bld.get(hit, g));
    if (g > 0) anyHit.push(...op.v128Or);
  }
  const body = [
    ...op.loop(),
    ...bld.body,
    ...anyHit,
    ...op.v128AnyTrue,
    ...op.if(),
    ...bitmask,
    ...op.localSet(mask),
    ...op.localGet(i),
    ...op.localGet(mask),
    ...op.i32Ctz,
    ...op.i32Add,
    ...op.localTee(idx),
    ...op.i32Const(-1),
    ...op.localGet(idx),
    ...op.localGet(COUNT),
    ...op.i32LtU,
    ...op.select,
    ...op.return,
    ...op.end,
    ...op.localGet(base),
    ...op.v128Const([LANES, LANES, LANES, LANES]),
    ...op.i32x4Add,
    ...op.localSet(base),
    ...op.localGet(i),
    ...op.i32Const(LANES),
    ...op.i32Add,
    ...op.localTee(i),
    ...op.localGet(COUNT),
    ...op.i32LtU,
    ...op.brIf(0),
    ...op.end,
    ...op.i32Const(-1),
  ];
  return {
    name: 'scanHexchain',
    params: [I32, I32, I32],
    results: [I32],
    locals: bld.locals,
    body: [
      // count == 0: nothing to hash.
      ...op.localGet(COUNT),
      ...op.i32Eqz,
      ...op.if(),
      ...op.i32Const(-1),
      ...op.return,
      ...op.end,
      ...bld.pre,
      ...body,
    ],
  };
}

// ---------------------------------------------------------------------------------------------

const bytes = moduleBytes([hexchainFunction(), ...macFunctions()], MAC_PAGES + 1);
writeGenerated(
  join(dirname(fileURLToPath(import.meta.url)), '../src/kernels/wasm.generated.ts'),
  `// GENERATED by scripts/generate-wasm.ts (npm run generate -w @tensormine/miner). Do not edit.
// The WebAssembly SIMD kernels; wasm.ts instantiates them and wasm.test.ts checks them.
`,
  `/** Nonces per iteration of scanHexchain (interleaved groups of 4 lanes). */
export const HEXCHAIN_LANES = ${LANES};
/** Byte offset of the 13 hexchain parameter words in the module's memory. */
export const HEXCHAIN_PARAMS = ${HEXCHAIN_PARAMS};
/** Byte offsets of the multiply-accumulate buffers (protocol/scripts/mac-wasm.ts). */
export const MAC_LAYOUT = ${JSON.stringify(MAC_LAYOUT)} as const;
`,
  bytes,
);
