import { hash } from 'node:crypto';
import type { Activation, MiningTask, Operation, WorkResult } from '@tensormine/protocol';
import {
  compressSha256,
  loadBlockWords,
  popcount32,
  SHA256_IV,
  Sha256Message,
} from '@tensormine/protocol/sha256-words';
import { MinerError } from '../errors.js';
import { type KernelChoice, type KernelName, resolveKernel } from './choice.js';
import { type NativeTensor, nativeKernels } from './native/library.js';
import { expandWords } from './sha256.generated.js';

import { type WasmKernels, wasmKernels, wasmSimdSupported } from './wasm.js';

/**
 * The v4.0 tensor kernel: one nonce iteration of the proof of tensor work, rule set 2
 * (docs/protocol.md 3.3), with every buffer allocated once per task, bit-identical to `computeWork` of
 * @tensormine/protocol (the tests compare every field on random tasks of every device type,
 * operation and activation). Like the hexchain kernel it imports nothing from the protocol
 * package at run time: it is an independent implementation checked against the reference.
 *
 * Where the time goes and what is done about it:
 * - SHA-256. The seed hash reuses the midstate of its first 64 bytes (challenge hash and most
 *   of the key); `expand` runs the generated compression that hoists the 8 rounds and the
 *   schedule words that depend only on the seed; short messages (the seed, a small fired
 *   bitmap) are hashed in JavaScript into preallocated words, long ones by node:crypto.
 * - Multiply-accumulates. int8 x int8 products summed over at most 64 terms stay within
 *   2^20 in magnitude, so two of them fit in one float64 at a distance of S = 2^22: with
 *   u = x + y * S (|x|, |y| <= 2^20) every partial sum is an integer below 2^43 in magnitude,
 *   exact in binary64, and `y = floor((u + S/2) / S)`, `x = u - y * S` recover both exactly
 *   (division by a power of two is exact). The matmul packs two rows of the input (fixed per
 *   task) and blocks 2 x 2, so each loaded value feeds two multiply-adds that each do two
 *   products; the convolution packs two filters and slides a 3 x 3 window along each row.
 * - With the `wasm` kernel (the default where WebAssembly SIMD runs) `expand` (4 counters per
 *   vector), the multiply-accumulates (int8 widened to int16, 8 products per
 *   i32x4.dot_i16x8_s) and the passes over the accumulators (the fold, sum, min and max; the
 *   fired bitmap and its MML length: wasm-gen/src/post-wasm.ts) run in the WebAssembly
 *   module (wasm.ts), and Z leaves it only for `work()`; the hashes, the normalisation's
 *   division and the thresholds are the same JavaScript for both kernels.
 * - With the `native` kernel (native/: C on SHA-NI and AVX2) the whole per-nonce search runs
 *   in the library, a batch of nonces per call; `work()` for a nonce it finds is computed here
 *   as with `wasm` (or `js`), and must agree with the library's MML score and path distance.
 * - Only what the thresholds need is computed per nonce: the accumulators, their fold and its
 *   hash (the bias and the path signature depend on it), the fired bitmap, its MML score and
 *   path distance. The activations Y, tensor_result_hash and
 *   computation_hash are computed only for a nonce that passes (and by `work()`).
 */

/** What the kernel needs from a challenge (a `MiningTask` has it all). */
export type TensorKernelTask = Pick<
  MiningTask,
  | 'challengeHash'
  | 'operation'
  | 'activation'
  | 'dim'
  | 'filters'
  | 'input'
  | 'pathTarget'
  | 'mmlThresholdQ16'
  | 'pathDistanceMax'
>;

export interface TensorSearchResult {
  /** The first nonce in the range that meets the thresholds, with its full work. */
  readonly found?: { readonly nonce: number; readonly work: WorkResult };
  /** Nonces tried, the found one included. */
  readonly iterations: number;
}

const S = 4194304; // 2^22, the lane distance of the packed products
const HALF_S = 2097152;
const INV_S = 1 / S; // exact: a power of two
const TWO_32 = 0x1_0000_0000;
const MML_ONE_Q16 = 65536;
const OPERATIONS: readonly Operation[] = ['matmul', 'conv'];
const ACTIVATIONS: readonly Activation[] = ['relu', 'sigmoid', 'tanh'];
/** Above this many blocks node:crypto hashes faster than the JavaScript compression. */
const JS_HASH_MAX_BLOCKS = 2;

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);
/** The multiplier of the accumulator fold (odd: a bijection mod 2^32), as an int32 for Math.imul. */
const FOLD_MULTIPLIER = 0x9e3779b1 | 0;

/** The kernel for one task and one key: construct once, call `search` many times. */
export class TensorSearch {
  readonly task: TensorKernelTask;
  readonly minerPublicKey: Uint8Array;
  /** Neurons per iteration: N * N (matmul) or F * N * N (conv). */
  readonly neurons: number;
  /** The kernel of the search. */
  readonly kernel: KernelName;
  /** The multiply-accumulates of `work()` (and of the search with `wasm`). */
  private readonly wasm: WasmKernels | undefined;
  private readonly native: NativeTensor | undefined;
  private readonly input: Int8Array;
  private readonly n: number;
  private readonly conv: boolean;
  private readonly filters: number;

  // SHA-256 state
  private readonly seedMessage: Sha256Message;
  private readonly seedMidstate = new Int32Array(8);
  private readonly seedWords = new Int32Array(8);
  private readonly expanded: Int32Array;
  private readonly expandBlocks: number;
  private readonly pathMessage: Sha256Message;
  /** "PTM4r2/acc" || 0x00 || u8(rank) || u16le(d)... || the 8 fold lanes (u32le). */
  private readonly accMessage: Uint8Array;
  private readonly accHeaderLength: number;
  private readonly foldLanes = new Int32Array(8);
  /** sum, min and max of Z (the last iteration). */
  private readonly stats = new Float64Array(3);
  /** acc_hash = taggedHash("PTM4r2/acc", shape || Z as i32le) of the last iteration. */
  private readonly accHash: Uint8Array;
  private readonly pathWords = new Int32Array(8);
  private readonly pathTarget0: number;
  private readonly pathTarget1: number;

  // Tensors
  private readonly z: Int32Array;
  /** matmul: stride of z (the padded column count). */
  private readonly zStride: number;
  private readonly packedRows: number;
  private readonly paddedCols: number;
  /** matmul: the input with rows 2r and 2r + 1 packed into one float64 row. */
  private readonly xPacked: Float64Array;
  /** matmul: the weights transposed, W^T[j][k] = W[k][j]. */
  private readonly weightsT: Float64Array;
  /** conv: the input with a zero border, (N + 2) x (N + 2). */
  private readonly xBordered: Float64Array;
  private readonly fired: Uint8Array;
  private readonly firedWords: Int32Array;

  // The last iteration (read by work())
  private mean = 0;
  private shift = 0;
  private bias = 0;
  private mml = 0;
  private distance = 0;

  constructor(task: TensorKernelTask, minerPublicKey: Uint8Array, kernel: KernelChoice = 'auto') {
    checkTask(task, minerPublicKey);
    this.task = task;
    this.minerPublicKey = minerPublicKey;
    this.kernel = resolveKernel(kernel);
    this.native = this.kernel === 'native' ? nativeKernels()!.tensor(task, minerPublicKey) : undefined;
    this.wasm =
      this.kernel === 'wasm' || (this.kernel === 'native' && wasmSimdSupported()) ? wasmKernels() : undefined;
    this.input = Int8Array.from(task.input);
    const n = task.dim;
    this.n = n;
    this.conv = task.operation === 'conv';
    this.filters = this.conv ? task.filters : 0;
    this.neurons = this.conv ? this.filters * n * n : n * n;

    // seed = taggedHash("PTM4/work", challenge_hash || key || u64le(nonce)): 82 bytes, the
    // nonce at [74, 82); the first block holds the tag, the challenge hash and 22 key bytes.
    this.seedMessage = new Sha256Message(82);
    this.seedMessage.bytes.set(ascii('PTM4/work\0'), 0);
    this.seedMessage.bytes.set(task.challengeHash, 10);
    this.seedMessage.bytes.set(minerPublicKey, 42);
    const w = new Int32Array(64);
    this.seedMidstate.set(SHA256_IV);
    loadBlockWords(this.seedMessage.bytes, 0, w);
    compressSha256(this.seedMidstate, w);

    const weightBytes = this.conv ? this.filters * 9 : n * n;
    this.expandBlocks = Math.ceil(weightBytes / 32);
    this.expanded = new Int32Array(this.expandBlocks * 8);

    // path_signature = taggedHash("PTM4r2/path", acc_hash || fired)[0..8]; acc_hash and
    // fired are written in place.
    const firedBytes = Math.ceil(this.neurons / 8);
    this.pathMessage = new Sha256Message(12 + 32 + firedBytes);
    this.pathMessage.bytes.set(ascii('PTM4r2/path\0'), 0);
    this.accHash = this.pathMessage.bytes.subarray(12, 44);
    this.fired = this.pathMessage.bytes.subarray(44);
    const shape = this.conv ? [this.filters, n, n] : [n, n];
    this.accHeaderLength = 11 + 1 + 2 * shape.length;
    this.accMessage = new Uint8Array(this.accHeaderLength + 32);
    this.accMessage.set(ascii('PTM4r2/acc\0'), 0);
    this.accMessage[11] = shape.length;
    shape.forEach((d, i) => {
      this.accMessage[12 + 2 * i] = d & 0xff;
      this.accMessage[13 + 2 * i] = d >>> 8;
    });
    this.firedWords = new Int32Array(Math.ceil(this.neurons / 32));
    const t = task.pathTarget;
    this.pathTarget0 = (t[0]! << 24) | (t[1]! << 16) | (t[2]! << 8) | t[3]!;
    this.pathTarget1 = (t[4]! << 24) | (t[5]! << 16) | (t[6]! << 8) | t[7]!;

    if (this.conv) {
      const m = n + 2;
      this.xBordered = new Float64Array(m * m);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) this.xBordered[(i + 1) * m + j + 1] = task.input[i * n + j]!;
      }
      // One spare filter when F is odd: the packed pairs then have a zero upper lane.
      this.z = new Int32Array((this.filters + (this.filters & 1)) * n * n);
      this.zStride = n;
      this.packedRows = 0;
      this.paddedCols = 0;
      this.xPacked = new Float64Array(0);
      this.weightsT = new Float64Array(0);
    } else {
      // Pairs of rows, in pairs (2 x 2 blocking): round N / 2 up to even; columns to even.
      this.packedRows = 2 * Math.ceil(Math.ceil(n / 2) / 2);
      this.paddedCols = n + (n & 1);
      this.xPacked = new Float64Array(this.packedRows * n);
      for (let r = 0; r < this.packedRows; r++) {
        for (let k = 0; k < n; k++) {
          const lo = 2 * r < n ? task.input[2 * r * n + k]! : 0;
          const hi = 2 * r + 1 < n ? task.input[(2 * r + 1) * n + k]! : 0;
          this.xPacked[r * n + k] = lo + hi * S;
        }
      }
      this.weightsT = new Float64Array(this.paddedCols * n);
      this.zStride = this.paddedCols;
      this.z = new Int32Array(2 * this.packedRows * this.paddedCols);
      this.xBordered = new Float64Array(0);
    }
  }

  /**
   * Tries nonces startNonce, startNonce + 1, ... (at most `count`) and returns the first that
   * meets the thresholds, with its full work.
   */
  search(startNonce: number, count: number): TensorSearchResult {
    checkRange(startNonce, count);
    if (this.native !== undefined) return this.searchNative(startNonce, count);
    for (let i = 0; i < count; i++) {
      const nonce = startNonce + i;
      if (this.tryNonce(nonce)) return { found: { nonce, work: this.work(nonce) }, iterations: i + 1 };
    }
    return { iterations: count };
  }

  /**
   * One iteration up to the thresholds: true when the nonce's MML score and path distance meet
   * them. Leaves the pre-activation parameters in place for `work()`.
   */
  tryNonce(nonce: number): boolean {
    if (this.native !== undefined) {
      return (
        this.native.search(nonce, 1, this.task.mmlThresholdQ16, this.task.pathDistanceMax).found !== undefined
      );
    }
    this.preActivations(nonce);
    this.firedAndScore();
    if (this.mml > this.task.mmlThresholdQ16) return false;
    this.pathDistance();
    return this.distance <= this.task.pathDistanceMax;
  }

  private searchNative(startNonce: number, count: number): TensorSearchResult {
    const r = this.native!.search(startNonce, count, this.task.mmlThresholdQ16, this.task.pathDistanceMax);
    if (r.found === undefined) return { iterations: r.iterations };
    const { nonce, mmlScoreQ16, pathDistance } = r.found;
    const work = this.work(nonce);
    if (work.mmlScoreQ16 !== mmlScoreQ16 || work.pathDistance !== pathDistance) {
      throw new MinerError(
        'kernel_mismatch',
        `native tensor kernel: nonce ${nonce} has MML ${mmlScoreQ16} and distance ${pathDistance} in the library, ${work.mmlScoreQ16} and ${work.pathDistance} in its work`,
      );
    }
    return { found: { nonce, work }, iterations: r.iterations };
  }

  /** The complete result of one iteration, field for field what `computeWork` returns. */
  work(nonce: number): WorkResult {
    checkRange(nonce, 1);
    this.preActivations(nonce);
    this.firedAndScore();
    this.pathDistance();
    this.wasm?.readZ(this.z, this.neurons);
    const n = this.n;
    const result = new Int8Array(this.neurons);
    const act = this.task.activation;
    for (let i = 0; i < this.neurons; i++) {
      const a = Math.max(-128, Math.min(127, ((this.z[i]! - this.mean) >> this.shift) + this.bias));
      result[i] = act === 'relu' ? Math.max(a, 0) : act === 'sigmoid' ? sigmoid(a) : tanh(a);
    }
    const shape = this.conv ? [this.filters, n, n] : [n, n];
    const accumulatorHash = this.accHash.slice();
    const tensorResultHash = sha256(
      concat(
        ascii('PTM4r2/result\0'),
        accumulatorHash,
        new Uint8Array(result.buffer, result.byteOffset, result.byteLength),
      ),
    );
    const pathSignature = new Uint8Array(8);
    for (let i = 0; i < 4; i++) {
      pathSignature[i] = this.pathWords[0]! >>> (24 - 8 * i);
      pathSignature[4 + i] = this.pathWords[1]! >>> (24 - 8 * i);
    }
    const tail = new Uint8Array(4 + 8 + 1);
    tail[0] = this.mml & 0xff;
    tail[1] = (this.mml >>> 8) & 0xff;
    tail[2] = (this.mml >>> 16) & 0xff;
    tail[3] = this.mml >>> 24;
    tail.set(pathSignature, 4);
    tail[12] = this.distance;
    const computationHash = sha256(
      concat(
        ascii('PTM4r2/computation\0'),
        this.task.challengeHash,
        this.minerPublicKey,
        u64le(nonce),
        tensorResultHash,
        tail,
      ),
    );
    return {
      shape,
      result,
      accumulatorHash,
      tensorResultHash,
      mmlScoreQ16: this.mml,
      pathSignature,
      pathDistance: this.distance,
      computationHash,
    };
  }

  /** The seed, the weights, Z and its hash, the bias, and the normalisation parameters (mean, shift). */
  private preActivations(nonce: number): void {
    const msg = this.seedMessage.bytes;
    const hi = Math.floor(nonce / TWO_32);
    const lo = nonce - hi * TWO_32;
    msg[74] = lo & 0xff;
    msg[75] = (lo >>> 8) & 0xff;
    msg[76] = (lo >>> 16) & 0xff;
    msg[77] = lo >>> 24;
    msg[78] = hi & 0xff;
    msg[79] = (hi >>> 8) & 0xff;
    msg[80] = (hi >>> 16) & 0xff;
    msg[81] = hi >>> 24;
    this.seedMessage.digestInto(this.seedWords, this.seedMidstate, 1);
    const wasm = this.wasm;
    if (wasm !== undefined) {
      // Z stays in the module's memory; the fold, sum, min and max are computed there.
      wasm.accumulate(this.input, this.n, this.conv, this.filters, this.seedWords);
      wasm.postStats(this.neurons, this.foldLanes, this.stats);
    } else {
      expandWords(this.seedWords, this.expanded, this.expandBlocks);
      if (this.conv) this.convolve();
      else this.matmul();
      this.foldAndStats();
    }
    this.hashAccumulators();
    // bias = int8(acc_hash[31]) >> 1: known only once every accumulator is.
    this.bias = ((this.accHash[31]! << 24) >> 24) >> 1;
    this.normalisation(this.stats[0]!, this.stats[1]!, this.stats[2]!);
  }

  /**
   * The JavaScript path: the accumulator fold (docs/protocol.md 3.3: 8 lanes of 32 bits, lane
   * l from l; Z[i] goes into lane i mod 8 as s = rotl32(s ^ Z[i], 13) * 0x9E3779B1 mod 2^32)
   * into `foldLanes`, then sum, min and max into `stats`. The wasm path computes the same in
   * the module, in one pass (wasm-gen/src/post-wasm.ts `postStats`).
   */
  private foldAndStats(): void {
    const z = this.z;
    const count = this.neurons;
    let s0 = 0;
    let s1 = 1;
    let s2 = 2;
    let s3 = 3;
    let s4 = 4;
    let s5 = 5;
    let s6 = 6;
    let s7 = 7;
    let i = 0;
    for (; i + 8 <= count; i += 8) {
      let x = s0 ^ z[i]!;
      s0 = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
      x = s1 ^ z[i + 1]!;
      s1 = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
      x = s2 ^ z[i + 2]!;
      s2 = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
      x = s3 ^ z[i + 3]!;
      s3 = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
      x = s4 ^ z[i + 4]!;
      s4 = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
      x = s5 ^ z[i + 5]!;
      s5 = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
      x = s6 ^ z[i + 6]!;
      s6 = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
      x = s7 ^ z[i + 7]!;
      s7 = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
    }
    const lanes = this.foldLanes;
    lanes[0] = s0;
    lanes[1] = s1;
    lanes[2] = s2;
    lanes[3] = s3;
    lanes[4] = s4;
    lanes[5] = s5;
    lanes[6] = s6;
    lanes[7] = s7;
    for (; i < count; i++) {
      const x = lanes[i & 7]! ^ z[i]!;
      lanes[i & 7] = Math.imul((x << 13) | (x >>> 19), FOLD_MULTIPLIER);
    }
    let sum = 0;
    let min = z[0]!;
    let max = min;
    for (i = 0; i < count; i++) {
      const v = z[i]!;
      sum += v;
      if (v < min) min = v;
      else if (v > max) max = v;
    }
    this.stats[0] = sum;
    this.stats[1] = min;
    this.stats[2] = max;
  }

  /** acc_hash = taggedHash("PTM4r2/acc", shape || the 8 fold lanes as u32le), into the path message. */
  private hashAccumulators(): void {
    const lanes = this.foldLanes;
    // The lanes are u32le on the wire: write them little-endian whatever the platform.
    const msg = this.accMessage;
    const at = this.accHeaderLength;
    for (let l = 0; l < 8; l++) {
      const v = lanes[l]!;
      msg[at + 4 * l] = v & 0xff;
      msg[at + 4 * l + 1] = (v >>> 8) & 0xff;
      msg[at + 4 * l + 2] = (v >>> 16) & 0xff;
      msg[at + 4 * l + 3] = v >>> 24;
    }
    this.accHash.set(hash('sha256', msg, 'buffer'));
  }

  private matmul(): void {
    const n = this.n;
    const out = this.expanded;
    const wt = this.weightsT;
    // Weight byte t = W[k][j] with k = t / N, j = t % N; int8 of byte t of the big-endian
    // word t >> 2 is (word << 8 * (t & 3)) >> 24.
    for (let k = 0, t = 0; k < n; k++) {
      for (let j = 0; j < n; j++, t++) wt[j * n + k] = (out[t >> 2]! << ((t & 3) << 3)) >> 24;
    }
    const xp = this.xPacked;
    const z = this.z;
    const stride = this.zStride;
    const cols = this.paddedCols;
    for (let r = 0; r < this.packedRows; r += 2) {
      const xa = r * n;
      const xb = xa + n;
      // Packed row r holds input rows 2r (lower lane) and 2r + 1 (upper lane).
      const z0 = 2 * r * stride;
      const z1 = z0 + stride;
      const z2 = z1 + stride;
      const z3 = z2 + stride;
      for (let j = 0; j < cols; j += 2) {
        const wa = j * n;
        const wb = wa + n;
        let v00 = 0;
        let v01 = 0;
        let v10 = 0;
        let v11 = 0;
        for (let k = 0; k < n; k++) {
          const a = xp[xa + k]!;
          const b = xp[xb + k]!;
          const p = wt[wa + k]!;
          const q = wt[wb + k]!;
          v00 += a * p;
          v01 += a * q;
          v10 += b * p;
          v11 += b * q;
        }
        let h = Math.floor((v00 + HALF_S) * INV_S);
        z[z0 + j] = v00 - h * S;
        z[z1 + j] = h;
        h = Math.floor((v01 + HALF_S) * INV_S);
        z[z0 + j + 1] = v01 - h * S;
        z[z1 + j + 1] = h;
        h = Math.floor((v10 + HALF_S) * INV_S);
        z[z2 + j] = v10 - h * S;
        z[z3 + j] = h;
        h = Math.floor((v11 + HALF_S) * INV_S);
        z[z2 + j + 1] = v11 - h * S;
        z[z3 + j + 1] = h;
      }
    }
    // An odd N leaves padding columns: move the rows together (forward, so nothing is
    // overwritten before it is read) so that z holds the N x N values contiguously.
    if (stride !== n) {
      for (let i = 1; i < n; i++) z.copyWithin(i * n, i * stride, i * stride + n);
    }
  }

  private convolve(): void {
    const n = this.n;
    const m = n + 2;
    const out = this.expanded;
    const x = this.xBordered;
    const z = this.z;
    const filters = this.filters;
    const plane = n * n;
    // Kernel byte t = K[f][a][b] at t = f * 9 + a * 3 + b; a missing filter (F odd) is zero
    // and fills the spare plane of z, which nothing reads.
    const kernel = (t: number): number => (t < filters * 9 ? (out[t >> 2]! << ((t & 3) << 3)) >> 24 : 0);
    for (let f = 0; f < filters; f += 2) {
      const k0 = f * 9;
      const k1 = k0 + 9;
      const q00 = kernel(k0) + kernel(k1) * S;
      const q01 = kernel(k0 + 1) + kernel(k1 + 1) * S;
      const q02 = kernel(k0 + 2) + kernel(k1 + 2) * S;
      const q10 = kernel(k0 + 3) + kernel(k1 + 3) * S;
      const q11 = kernel(k0 + 4) + kernel(k1 + 4) * S;
      const q12 = kernel(k0 + 5) + kernel(k1 + 5) * S;
      const q20 = kernel(k0 + 6) + kernel(k1 + 6) * S;
      const q21 = kernel(k0 + 7) + kernel(k1 + 7) * S;
      const q22 = kernel(k0 + 8) + kernel(k1 + 8) * S;
      const o0 = f * plane;
      const o1 = o0 + plane;
      for (let i = 0; i < n; i++) {
        const r0 = i * m;
        const r1 = r0 + m;
        const r2 = r1 + m;
        // The window's columns j - 1 (a), j (b), j + 1 (c) of rows i - 1, i, i + 1.
        let a0 = x[r0]!;
        let a1 = x[r1]!;
        let a2 = x[r2]!;
        let b0 = x[r0 + 1]!;
        let b1 = x[r1 + 1]!;
        let b2 = x[r2 + 1]!;
        const zi = i * n;
        for (let j = 0; j < n; j++) {
          const c0 = x[r0 + j + 2]!;
          const c1 = x[r1 + j + 2]!;
          const c2 = x[r2 + j + 2]!;
          const v =
            a0 * q00 + b0 * q01 + c0 * q02 + a1 * q10 + b1 * q11 + c1 * q12 + a2 * q20 + b2 * q21 + c2 * q22;
          const hi = Math.floor((v + HALF_S) * INV_S);
          z[o0 + zi + j] = v - hi * S;
          z[o1 + zi + j] = hi;
          a0 = b0;
          a1 = b1;
          a2 = b2;
          b0 = c0;
          b1 = c1;
          b2 = c2;
        }
      }
    }
  }

  /**
   * normalize: m = floor(sum / count), exactly. |sum| < 2^36 and count < 2^15 are integers,
   * so sum / count in binary64 is the correctly rounded quotient, at most half an ulp (2^-17
   * at this magnitude) from the true one, and Math.floor can be off only if the true quotient
   * is within that distance of an integer; the two exact comparisons below (the products are
   * integers below 2^53, so exact) move q by one step in that case, whatever the rounding.
   * Then s is the smallest s >= 0 with max|Z - m| >> s <= 127, and max|Z - m| is
   * max(max - m, m - min). Sum, min and max come from the pass over Z (`foldAndStats` or the
   * module's `postStats`).
   */
  private normalisation(sum: number, min: number, max: number): void {
    const count = this.neurons;
    let q = Math.floor(sum / count);
    if (q * count > sum) q -= 1;
    else if ((q + 1) * count <= sum) q += 1;
    this.mean = q;
    const maxAbs = Math.max(max - q, q - min);
    let s = 0;
    while (maxAbs >> s > 127) s++;
    this.shift = s;
  }

  /**
   * The fired bitmap, bit i set when A[i] = clamp(P[i] + bias, -128, 127) > 0, and its MML
   * score. A > 0 iff P + bias > 0 (the clamp keeps the sign) iff (Z - m) >> s >= 1 - bias iff
   * Z >= m + (1 - bias) * 2^s (x >> s >= c iff x >= c * 2^s for integers), one comparison per
   * neuron, branch-free, 32 neurons to a word. The bitmap is written in place into the path
   * message (byte i >> 3, bit i & 7: the little-endian bytes of the words).
   *
   * MML: bits = 1 + sum over maximal runs of (2 * floor(log2(L)) + 1). A run ends at i when
   * bit i differs from bit i + 1; the words' transition masks (w ^ (w >>> 1 | next << 31))
   * give those positions, and consecutive ends give the run lengths. The wasm kernel counts
   * the same length from windows of equal bits instead (wasm-gen/src/post-wasm.ts).
   */
  private firedAndScore(): void {
    const below = this.mean + (1 - this.bias) * 2 ** this.shift - 1; // bit = z > below
    const bits =
      this.wasm !== undefined ? this.wasm.postFired(this.neurons, below, this.fired) : this.firedBits(below);
    const count = this.neurons;
    const scaled = bits * MML_ONE_Q16;
    this.mml = Math.min((scaled - (scaled % count)) / count, MML_ONE_Q16);
  }

  /** The JavaScript path of `firedAndScore`: writes the bitmap, returns the MML bits. */
  private firedBits(below: number): number {
    const z = this.z;
    const count = this.neurons;
    const words = this.firedWords;
    const fired = this.fired;
    const nw = words.length;
    for (let k = 0; k < nw; k++) {
      const o = k << 5;
      const end = Math.min(32, count - o);
      let w = 0;
      for (let b = 0; b < end; b++) w |= ((below - z[o + b]!) >>> 31) << b;
      words[k] = w;
      const at = k << 2;
      fired[at] = w;
      if (at + 1 < fired.length) fired[at + 1] = w >>> 8;
      if (at + 2 < fired.length) fired[at + 2] = w >>> 16;
      if (at + 3 < fired.length) fired[at + 3] = w >>> 24;
    }
    let bits = 1;
    let last = -1;
    for (let k = 0; k < nw; k++) {
      const w = words[k]!;
      const next = k + 1 < nw ? words[k + 1]! & 1 : 0;
      let t = w ^ ((w >>> 1) | (next << 31));
      const valid = count - 1 - (k << 5); // transitions at positions <= count - 2 only
      if (valid < 32) t &= valid <= 0 ? 0 : (1 << valid) - 1;
      while (t !== 0) {
        const low = t & -t;
        const end = (k << 5) + 31 - Math.clz32(low);
        bits += 2 * (31 - Math.clz32(end - last)) + 1;
        last = end;
        t ^= low;
      }
    }
    bits += 2 * (31 - Math.clz32(count - 1 - last)) + 1;
    return bits;
  }

  /** path_signature (the first two digest words) and its distance to the path target. */
  private pathDistance(): void {
    const words = this.pathWords;
    if (this.pathMessage.blocks <= JS_HASH_MAX_BLOCKS) {
      this.pathMessage.digestInto(words);
    } else {
      const d = hash('sha256', this.pathMessage.bytes, 'buffer');
      words[0] = d.readInt32BE(0);
      words[1] = d.readInt32BE(4);
    }
    this.distance = popcount32(words[0]! ^ this.pathTarget0) + popcount32(words[1]! ^ this.pathTarget1);
  }
}

let cached: TensorSearch | undefined;

/**
 * Tries nonces startNonce .. startNonce + count - 1 of `task` for `minerPublicKey` and returns
 * the first that meets the thresholds with its work. Keeps the buffers of the last task and
 * key; construct a `TensorSearch` to hold them explicitly.
 */
export function searchTensor(
  task: TensorKernelTask,
  minerPublicKey: Uint8Array,
  startNonce: number,
  count: number,
): TensorSearchResult {
  if (cached === undefined || cached.task !== task || cached.minerPublicKey !== minerPublicKey) {
    cached = new TensorSearch(task, minerPublicKey);
  }
  return cached.search(startNonce, count);
}

/** Hard sigmoid: input Q5, output Q7, clamp(a + 64, 0, 127). */
function sigmoid(a: number): number {
  return Math.max(0, Math.min(127, a + 64));
}

/** Hard tanh: input Q5, output Q7, clamp(4a, -128, 127). */
function tanh(a: number): number {
  return Math.max(-128, Math.min(127, 4 * a));
}

function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(hash('sha256', data, 'buffer'));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function u64le(value: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value), true);
  return out;
}

function checkTask(task: TensorKernelTask, key: Uint8Array): void {
  const fail = (message: string): never => {
    throw new MinerError('invalid_job', `tensor task: ${message}`);
  };
  if (!OPERATIONS.includes(task.operation)) fail(`unknown operation ${String(task.operation)}`);
  if (!ACTIVATIONS.includes(task.activation)) fail(`unknown activation ${String(task.activation)}`);
  if (!Number.isInteger(task.dim) || task.dim < 4 || task.dim > 64) {
    fail(`dim: expected an integer in [4, 64], got ${task.dim}`);
  }
  if (
    task.operation === 'conv' &&
    (!Number.isInteger(task.filters) || task.filters < 1 || task.filters > 8)
  ) {
    fail(`filters: expected an integer in [1, 8], got ${task.filters}`);
  }
  if (task.input?.length !== task.dim * task.dim) {
    fail(`input: expected ${task.dim * task.dim} values, got ${task.input?.length}`);
  }
  if (task.challengeHash?.length !== 32)
    fail(`challengeHash: expected 32 bytes, got ${task.challengeHash?.length}`);
  if (task.pathTarget?.length !== 8) fail(`pathTarget: expected 8 bytes, got ${task.pathTarget?.length}`);
  if (key?.length !== 32) fail(`miner public key: expected 32 bytes, got ${key?.length}`);
}

function checkRange(startNonce: number, count: number): void {
  if (!Number.isSafeInteger(startNonce) || startNonce < 0) {
    throw new MinerError(
      'invalid_job',
      `startNonce: expected an integer in [0, 2^53 - 1], got ${startNonce}`,
    );
  }
  if (!Number.isSafeInteger(count) || count < 0 || startNonce + count > Number.MAX_SAFE_INTEGER + 1) {
    throw new MinerError(
      'invalid_job',
      `count: expected an integer with startNonce + count <= 2^53, got ${count} from ${startNonce}`,
    );
  }
}
