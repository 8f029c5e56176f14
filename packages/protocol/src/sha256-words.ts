/**
 * SHA-256 (FIPS 180-4) on 32-bit words, in JavaScript, where a call into node:crypto per short
 * message costs more than the compression itself: `expand` (hash.ts) and the miner's kernels'
 * hot loops. Words are JavaScript int32 values (`| 0`); a digest word is the big-endian reading
 * of 4 digest bytes. Nothing here allocates per call: callers own the state and schedule arrays.
 *
 * This is the plain, loop-based compression. The miner's specialised, unrolled variants that
 * skip the work that does not change between calls are generated from these constants into
 * `packages/miner/src/kernels/sha256.generated.ts`; the tests check both against node:crypto.
 */

/** The round constants. */
export const SHA256_K: Int32Array = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** The initial hash value H(0). */
export const SHA256_IV: Int32Array = Int32Array.from([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

/**
 * One compression: `state += rounds(state, w)`. `w` holds the 16 message words in w[0..16) and
 * must have room for 64: the message schedule is written into w[16..64).
 */
export function compressSha256(state: Int32Array, w: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!;
    const y = w[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + (g ^ (e & (f ^ g))) + SHA256_K[i]! + w[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) | (c & (a | b)))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}

/** Reads 16 big-endian words of `bytes` starting at `offset` into w[0..16). */
export function loadBlockWords(bytes: Uint8Array, offset: number, w: Int32Array): void {
  for (let i = 0; i < 16; i++) {
    const o = offset + 4 * i;
    w[i] = (bytes[o]! << 24) | (bytes[o + 1]! << 16) | (bytes[o + 2]! << 8) | bytes[o + 3]!;
  }
}

/** Writes 8 state words as 32 big-endian bytes (a digest) into `out` at `offset`. */
export function storeDigestWords(words: Int32Array, out: Uint8Array, offset = 0): Uint8Array {
  for (let i = 0; i < 8; i++) {
    const v = words[i]!;
    const o = offset + 4 * i;
    out[o] = v >>> 24;
    out[o + 1] = v >>> 16;
    out[o + 2] = v >>> 8;
    out[o + 3] = v;
  }
  return out;
}

/** Byte-swaps a 32-bit word: the big-endian message word of 4 little-endian bytes. */
export function bswap32(x: number): number {
  return ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24);
}

/** Number of set bits of a 32-bit word. */
export function popcount32(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/**
 * A message of fixed length whose bytes are rewritten in place between hashes: the buffer holds
 * the message, its padding and its length, so a digest needs no copy and no allocation.
 * `bytes` is the message (write into it); `digestInto` hashes it with the compression above.
 */
export class Sha256Message {
  /** The message bytes, a view of the padded buffer. */
  readonly bytes: Uint8Array;
  readonly length: number;
  readonly blocks: number;
  private readonly padded: Uint8Array;
  private readonly w = new Int32Array(64);

  constructor(length: number) {
    this.length = length;
    this.blocks = Math.floor((length + 8) / 64) + 1;
    this.padded = new Uint8Array(this.blocks * 64);
    this.bytes = this.padded.subarray(0, length);
    this.padded[length] = 0x80;
    const bits = length * 8;
    const end = this.blocks * 64;
    // 64-bit big-endian length; messages here are far below 2^32 bits.
    this.padded[end - 4] = bits >>> 24;
    this.padded[end - 3] = bits >>> 16;
    this.padded[end - 2] = bits >>> 8;
    this.padded[end - 1] = bits;
  }

  /** Writes the digest words into `out` (8 words), starting from `initial` (the initial hash value by default). */
  digestInto(out: Int32Array, initial: Int32Array = SHA256_IV, fromBlock = 0): Int32Array {
    out.set(initial);
    for (let b = fromBlock; b < this.blocks; b++) {
      loadBlockWords(this.padded, b * 64, this.w);
      compressSha256(out, this.w);
    }
    return out;
  }
}
