/**
 * SHA-256 (FIPS 180-4) of a message that fits one block (at most 55 bytes), in JavaScript, for
 * `expand` (hash.ts): it hashes a 36-byte message once per 32 output bytes (128 times for the
 * weights of a 64 x 64 matmul), where each call into node:crypto costs more than the
 * compression itself. hash.test.ts compares it with node:crypto on every length.
 */

const K = Int32Array.of(
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
);

const IV = Int32Array.of(
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
);

/** The longest message that fits one block: 64 bytes less the 0x80 byte and the 8-byte length. */
export const ONE_BLOCK_MAX = 55;

/**
 * A reusable one-block hasher: write the message into `message` (its first `length` bytes;
 * the padding after them is laid out once here), then `digest(out, at, take)` writes the first
 * `take` bytes of its SHA-256 into `out` at `at`. Nothing is allocated per hash.
 */
export class OneBlockSha256 {
  /** The block: the message, then 0x80, zeros, and the bit length (big-endian). */
  readonly block = new Uint8Array(64);
  /** The message's bytes in the block. */
  readonly message: Uint8Array;
  private readonly w = new Int32Array(64);
  private readonly h = new Int32Array(8);

  constructor(readonly length: number) {
    if (!Number.isInteger(length) || length < 0 || length > ONE_BLOCK_MAX) {
      throw new RangeError(`one-block SHA-256: expected a length in [0, ${ONE_BLOCK_MAX}], got ${length}`);
    }
    this.message = this.block.subarray(0, length);
    this.block[length] = 0x80;
    this.block[62] = (length * 8) >>> 8;
    this.block[63] = (length * 8) & 0xff;
  }

  digest(out: Uint8Array, at: number, take: number): void {
    const w = this.w;
    const b = this.block;
    for (let t = 0; t < 16; t++) {
      w[t] = (b[4 * t]! << 24) | (b[4 * t + 1]! << 16) | (b[4 * t + 2]! << 8) | b[4 * t + 3]!;
    }
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15]!;
      const y = w[t - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) | 0;
    }
    let a = IV[0]!;
    let bb = IV[1]!;
    let c = IV[2]!;
    let d = IV[3]!;
    let e = IV[4]!;
    let f = IV[5]!;
    let g = IV[6]!;
    let h = IV[7]!;
    for (let t = 0; t < 64; t++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + s1 + ch + K[t]! + w[t]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & bb) ^ (a & c) ^ (bb & c);
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + s0 + maj) | 0;
    }
    const s = this.h;
    s[0] = IV[0]! + a;
    s[1] = IV[1]! + bb;
    s[2] = IV[2]! + c;
    s[3] = IV[3]! + d;
    s[4] = IV[4]! + e;
    s[5] = IV[5]! + f;
    s[6] = IV[6]! + g;
    s[7] = IV[7]! + h;
    for (let i = 0; i < take; i++) out[at + i] = s[i >> 2]! >>> (24 - 8 * (i & 3));
  }
}
