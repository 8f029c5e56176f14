/**
 * SHA-256 compressions as WebAssembly SIMD code, written once symbolically (for the kernel
 * generators: the miner's hexchain scan, the protocol's weight expansion). Every value is a
 * literal (folded here), a value fixed for the call (scalar i32 code emitted before the loop:
 * `pre`) or a per-lane vector (the loop body: `body`, one nonce or counter per i32x4 lane,
 * `groups` interleaved vectors). A round whose inputs are all fixed is computed once, before the
 * loop; a sum keeps its fixed terms out of the loop.
 */
import { I32, op, V128, type ValType } from './wasm-emit.js';

/** The SHA-256 round constants (FIPS 180-4 4.2.2). */
const K256 = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
].map((k) => k | 0);

/** The SHA-256 initial hash value H(0). */
export const IV256 = [
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
].map((v) => v | 0);

/** i8x16.shuffle lanes that byte-swap each 32-bit lane (a big-endian word from 4 bytes). */
export const BSWAP32_LANES = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12];

// ---------------------------------------------------------------------------------------------
// The symbolic builder.

export type Val =
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

export const lit = (v: number): Val => ({ k: 'lit', v: v | 0 });

export class Builder {
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

export function compressSymbolic(bld: Builder, state: readonly Val[], message: readonly Val[]): Val[] {
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
