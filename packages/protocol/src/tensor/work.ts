import { concatBytes, u8, u16le, u32le, u64le } from '../bytes.js';
import { taggedHash } from '../hash.js';
import type { Activation, Operation } from './devices.js';
import { clampInt8, normalize, relu, sigmoid, tanh } from './fixed-point.js';
import { type MacCore, referenceMac } from './mac.js';
import { mmlScoreQ16 } from './mml.js';

/**
 * One nonce iteration of the v4.0 proof of tensor work. Everything a miner computes for a
 * nonce, and everything the validator recomputes to check a proof, is this one function.
 *
 *   seed  = taggedHash("PTM4/work", challenge_hash || miner_pubkey || u64le(nonce))
 *   W     = int8(expand(seed, N*N))             (matmul: N x N weights)
 *         | int8(expand(seed, F*9))             (conv: F kernels of 3 x 3)
 *   Z     = X . W  |  conv3x3(X, W)             (int32 accumulators)
 *   bias  = int8(seed[31]) >> 1                 (in [-64, 63])
 *   A     = clamp(normalize(Z) + bias, -128, 127)
 *   Y     = activation(A)                        (relu | sigmoid | tanh, integer)
 *   path  = bit i set when A[i] > 0 (the neurons that fired), packed LSB first
 *   mml   = description length of that bitmap (see mml.ts)
 *
 * The nonce and the key enter through a hash that sets every weight, so no nonce can be
 * chosen without doing the tensor work for it, and a proof is bound to its key.
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
  readonly tensorResultHash: Uint8Array;
  readonly mmlScoreQ16: number;
  readonly pathSignature: Uint8Array;
  readonly pathDistance: number;
  readonly computationHash: Uint8Array;
}

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
  const bias = (((seed[31]! << 24) >> 24) >> 1) as number;
  const pre = normalize(z);
  const result = new Int8Array(pre.length);
  const fired = new Uint8Array(Math.ceil(pre.length / 8));
  const act = ACTIVATION_FUNCTIONS[task.activation];
  for (let i = 0; i < pre.length; i++) {
    const a = clampInt8(pre[i]! + bias);
    if (a > 0) fired[i >> 3]! |= 1 << (i & 7);
    result[i] = act(a);
  }
  const shape = resultShape(task);
  const tensorResultHash = resultHash(shape, result);
  const pathSignature = taggedHash('PTM4/path', fired).subarray(0, 8);
  const pathDistance = hammingDistance(pathSignature, task.pathTarget);
  const mml = mmlScoreQ16(fired, pre.length);
  const computationHash = taggedHash(
    'PTM4/computation',
    task.challengeHash,
    minerPublicKey,
    u64le(nonce),
    tensorResultHash,
    u32le(mml),
    pathSignature,
    u8(pathDistance),
  );
  return { shape, result, tensorResultHash, mmlScoreQ16: mml, pathSignature, pathDistance, computationHash };
}

const ACTIVATION_FUNCTIONS: Readonly<Record<Activation, (a: number) => number>> = { relu, sigmoid, tanh };

/** taggedHash("PTM4/result", u8(rank) || u16le(dim) for each dim || the int8 values as bytes). */
export function resultHash(shape: readonly number[], values: Int8Array): Uint8Array {
  return taggedHash(
    'PTM4/result',
    u8(shape.length),
    concatBytes(...shape.map((d) => u16le(d))),
    new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
  );
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
