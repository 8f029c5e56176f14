import { concatBytes, u8, u16le, u32le, u64le } from '../bytes.js';
import { taggedHash } from '../hash.js';
import type { Activation, Operation } from './devices.js';
import { ACTIVATION_AFFINE, clampInt, floorDiv, normalize, normalizeShift } from './fixed-point.js';
import { type AccumulatorPasses, type MacCore, referenceMac } from './mac.js';
import { mmlScoreFromBits, mmlScoreQ16 } from './mml.js';

/**
 * One nonce iteration of the v4.0 proof of tensor work, rule set 2 (docs/protocol.md 3.3).
 * Everything a miner computes for a nonce, and everything the validator recomputes to check a
 * proof, is this one function.
 *
 *   seed     = taggedHash("PTM4/work", challenge_hash || miner_pubkey || u64le(nonce))
 *   W        = int8(expand(seed, N*N))             (matmul: N x N weights)
 *            | int8(expand(seed, F*9))             (conv: F kernels of 3 x 3)
 *   Z        = X . W  |  conv3x3(X, W)             (int32 accumulators: the MAC core)
 *   acc_hash = taggedHash("PTM4r2/acc", u8(rank) || u16le(d)... || fold(Z))  (see accumulatorFold)
 *   bias     = int8(acc_hash[31]) >> 1             (in [-64, 63]; known only after the work)
 *   A        = clamp(normalize(Z) + bias, -128, 127)
 *   Y        = activation(A)                        (relu | sigmoid | tanh, integer)
 *   fired    = bit i set when A[i] > 0 (the neurons that fired), packed LSB first
 *   result   = taggedHash("PTM4r2/result", acc_hash || Y)
 *   path     = taggedHash("PTM4r2/path", acc_hash || fired)[0..8]
 *   mml      = description length of fired (see mml.ts)
 *
 * Every proof field is a function of acc_hash, a hash of every accumulator: none can be known
 * before every multiply-accumulate is done (rule set 1 took the bias from the seed, so a
 * nonce whose bias silenced every neuron had a proof predictable from one SHA-256).
 */

export interface TensorTask {
  readonly challengeHash: Uint8Array;
  readonly operation: Operation;
  readonly activation: Activation;
  /** Tensor side N. */
  readonly dim: number;
  /** Conv filters F (unused for matmul). */
  readonly filters: number;
  /** The N x N int8 input, row-major. */
  readonly input: Int8Array;
  /** First 8 bytes of taggedHash("PTM4/path-target", challenge_hash). */
  readonly pathTarget: Uint8Array;
}

export interface WorkResult {
  readonly shape: readonly number[];
  /** The activations Y. */
  readonly result: Int8Array;
  /** taggedHash("PTM4r2/acc", shape || fold(Z)): the commitment to every accumulator. */
  readonly accumulatorHash: Uint8Array;
  readonly tensorResultHash: Uint8Array;
  readonly mmlScoreQ16: number;
  readonly pathSignature: Uint8Array;
  readonly pathDistance: number;
  readonly computationHash: Uint8Array;
}

/**
 * What a proof carries of a work and what its thresholds are checked on (`proofFromWork`,
 * `meetsThresholds`): a WorkResult without the activations, so that a miner's worker can hand
 * the reference's work to another thread without copying the whole tensor.
 */
export type ProvedWork = Omit<WorkResult, 'shape' | 'result'>;

export function workSeed(challengeHash: Uint8Array, minerPublicKey: Uint8Array, nonce: number): Uint8Array {
  return taggedHash('PTM4/work', challengeHash, minerPublicKey, u64le(nonce));
}

export function resultShape(task: Pick<TensorTask, 'operation' | 'dim' | 'filters'>): number[] {
  return task.operation === 'conv' ? [task.filters, task.dim, task.dim] : [task.dim, task.dim];
}

/**
 * `mac` computes Z (default: the reference fixed-point code); `wasmMac()` is the same function
 * in WebAssembly SIMD, for a verifier that wants it faster.
 */
export function computeWork(
  task: TensorTask,
  minerPublicKey: Uint8Array,
  nonce: number,
  mac: MacCore = referenceMac,
): WorkResult {
  const seed = workSeed(task.challengeHash, minerPublicKey, nonce);
  const z = mac.accumulators(task, seed);
  const shape = resultShape(task);
  const { accHash, result, fired, mml } =
    mac.passes === undefined
      ? activations(task, shape, z)
      : activationsByPasses(task, shape, z.length, mac.passes);
  const tensorResultHash = resultHash(accHash, result);
  const pathSignature = pathSignatureOf(accHash, fired);
  const pathDistance = hammingDistance(pathSignature, task.pathTarget);
  const computationHash = taggedHash(
    'PTM4r2/computation',
    task.challengeHash,
    minerPublicKey,
    u64le(nonce),
    tensorResultHash,
    u32le(mml),
    pathSignature,
    u8(pathDistance),
  );
  return {
    shape,
    result,
    accumulatorHash: accHash,
    tensorResultHash,
    mmlScoreQ16: mml,
    pathSignature,
    pathDistance,
    computationHash,
  };
}

interface Activations {
  readonly accHash: Uint8Array;
  readonly result: Int8Array;
  readonly fired: Uint8Array;
  readonly mml: number;
}

/** acc_hash, then A, Y, the fired bitmap and its MML score from Z: the reference. */
function activations(task: TensorTask, shape: readonly number[], z: Int32Array): Activations {
  const accHash = accumulatorHash(shape, z);
  const bias = biasOf(accHash);
  const pre = normalize(z);
  const result = new Int8Array(pre.length);
  const fired = new Uint8Array(Math.ceil(pre.length / 8));
  // A = clamp(pre + bias, -128, 127) and Y = activation(A) = clamp(A * mul + add, lo, 127)
  // (fixed-point.ts), without a branch on the data; the fired bits of each byte are gathered in
  // `bits` ((0 - A) >>> 31 is 1 when A > 0).
  const [mul, add, lo] = ACTIVATION_AFFINE[task.activation];
  let bits = 0;
  for (let i = 0; i < pre.length; i++) {
    const a = clampInt(pre[i]! + bias, -128, 127);
    bits |= ((0 - a) >>> 31) << (i & 7);
    result[i] = clampInt(a * mul + add, lo, 127);
    if ((i & 7) === 7) {
      fired[i >> 3] = bits;
      bits = 0;
    }
  }
  if ((pre.length & 7) !== 0) fired[pre.length >> 3] = bits;
  return { accHash, result, fired, mml: mmlScoreQ16(fired, pre.length) };
}

/**
 * The same from a core's passes over Z (the WebAssembly core: wasm-gen/src/post-wasm.ts): the fold
 * and sum, min, max in one pass; normalize's m and s from them (max |Z - m| is
 * max(max - m, m - min)); A > 0 iff ((Z - m) >> s) + bias > 0 (the clamp keeps the sign) iff
 * Z > m + (1 - bias) * 2^s - 1 (for integers, x >> s >= c iff x >= c * 2^s).
 */
function activationsByPasses(
  task: TensorTask,
  shape: readonly number[],
  count: number,
  passes: AccumulatorPasses,
): Activations {
  const stats = passes.stats(count);
  const accHash = accumulatorHashOfFold(shape, stats.fold);
  const bias = biasOf(accHash);
  const mean = floorDiv(stats.sum, count);
  const shift = normalizeShift(Math.max(stats.max - mean, mean - stats.min));
  const below = mean + (1 - bias) * 2 ** shift - 1;
  const a = passes.activate(count, below, mean, shift, bias, task.activation);
  return { accHash, result: a.result, fired: a.fired, mml: mmlScoreFromBits(a.mmlBits, count) };
}

/** bias = int8(acc_hash[31]) >> 1. */
function biasOf(accHash: Uint8Array): number {
  return ((accHash[31]! << 24) >> 24) >> 1;
}

/** The multiplier of the accumulator fold: odd, so multiplying by it is a bijection mod 2^32. */
export const ACC_FOLD_MULTIPLIER = 0x9e3779b1;

/**
 * The accumulator fold: 8 lanes of 32 bits, lane l starting at l; accumulator i goes into
 * lane i mod 8 as  s = rotl32(s XOR u32(Z[i]), 13) * 0x9E3779B1  (mod 2^32), in output order.
 * Each step is a bijection of Z[i] (XOR, rotation and an odd multiplier are), so every
 * accumulator changes the result; XOR, rotation and multiplication mod 2^32 mix three
 * algebras, so no linear shortcut (computing a combination of Z from fewer
 * multiply-accumulates, as Freivalds' check does) gives it. It costs three integer operations
 * per accumulator, against 9 (conv) to 64 (matmul) multiply-accumulates to compute one.
 */
export function accumulatorFold(z: Int32Array, count: number = z.length): Uint32Array {
  const s = Uint32Array.of(0, 1, 2, 3, 4, 5, 6, 7);
  for (let i = 0; i < count; i++) {
    const x = s[i & 7]! ^ z[i]!;
    s[i & 7] = Math.imul((x << 13) | (x >>> 19), ACC_FOLD_MULTIPLIER);
  }
  return s;
}

/**
 * acc_hash = taggedHash("PTM4r2/acc", u8(rank) || u16le(dim) for each dim || u32le(fold[l]) for
 * l = 0..7), the fold of every accumulator in output order (row-major; conv: filter-major).
 */
export function accumulatorHash(shape: readonly number[], z: Int32Array): Uint8Array {
  return accumulatorHashOfFold(shape, accumulatorFold(z));
}

function accumulatorHashOfFold(shape: readonly number[], fold: Uint32Array): Uint8Array {
  const lanes = new Uint8Array(32);
  const view = new DataView(lanes.buffer);
  for (let l = 0; l < 8; l++) view.setUint32(4 * l, fold[l]!, true);
  return taggedHash('PTM4r2/acc', u8(shape.length), concatBytes(...shape.map((d) => u16le(d))), lanes);
}

/** taggedHash("PTM4r2/result", acc_hash || the int8 activations as bytes). */
export function resultHash(accHash: Uint8Array, values: Int8Array): Uint8Array {
  return taggedHash(
    'PTM4r2/result',
    accHash,
    new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
  );
}

/** taggedHash("PTM4r2/path", acc_hash || fired)[0..8]. */
export function pathSignatureOf(accHash: Uint8Array, fired: Uint8Array): Uint8Array {
  return taggedHash('PTM4r2/path', accHash, fired).subarray(0, 8);
}

export function hammingDistance(a: Uint8Array, b: Uint8Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    let x = a[i]! ^ b[i]!;
    while (x) {
      d += x & 1;
      x >>= 1;
    }
  }
  return d;
}
