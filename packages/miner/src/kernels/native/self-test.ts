import { hash } from 'node:crypto';
import { createRequire } from 'node:module';
import { bswap32 } from '@tensormine/protocol/sha256-words';
import { hexchainHash, prepareHexchain, searchBlock } from '../hexchain.js';

import { type TensorKernelTask, TensorSearch } from '../tensor.js';
import type { NativeKernels } from './library.js';

/**
 * The native kernels' self-test, run before they mine (selectKernel): the library's own
 * known-answer test (the C core's tm_self_test, SHA-NI against the portable compression), then
 * the protocol's normative vectors through the same calls the miner makes:
 *   - hexchain: every header's pow hash (nonces up to 2^53 - 1) and every solved block found at
 *     its nonce after the listed number of hashes;
 *   - v4.0: for every challenge (each device type, operation and activation) and listed nonce,
 *     the work seed, accumulator hash, path signature, path distance and MML score; the search
 *     from nonce 0 stops at the proof's nonce after the listed iterations, with its computation
 *     hash; and the odd-sized case (N = 5).
 * It takes milliseconds. Returns undefined when every check passes, else the first failure.
 */

interface WorkVector {
  readonly nonce: number;
  readonly work_seed?: string;
  readonly accumulator_hash: string;
  readonly mml_score_q16: number;
  readonly path_signature: string;
  readonly path_distance: number;
}

interface ChallengeVector {
  readonly input: { readonly deviceType: string };
  readonly challenge_hash: string;
  readonly operation: 'matmul' | 'conv';
  readonly activation: 'relu' | 'sigmoid' | 'tanh';
  readonly dim: number;
  readonly filters: number;
  readonly mml_threshold_q16: number;
  readonly path_distance_max: number;
  readonly input_tensor_hex: string;
  readonly path_target: string;
  readonly nonces: readonly WorkVector[];
  readonly solution: {
    readonly iterations: number;
    readonly proof: { readonly computation_nonce: number; readonly computation_hash: string };
  };
}

interface TensorVectors {
  readonly miner_public_key: string;
  readonly challenges: readonly ChallengeVector[];
  readonly odd_dim: Omit<ChallengeVector, 'input_tensor_hex' | 'path_target' | 'solution' | 'input'>;
}

interface HeaderVector {
  readonly nonce: number;
  readonly header: string;
  readonly pow_hash: string;
}

interface HexchainVectors {
  readonly headers: readonly HeaderVector[];
  readonly solved: readonly (HeaderVector & { readonly target: string; readonly start_nonce: number })[];
}

const TWO_32 = 0x1_0000_0000;
const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

function vectors(): { tensor: TensorVectors; hexchain: HexchainVectors } {
  const require = createRequire(import.meta.url);
  return {
    tensor: require('@tensormine/protocol/vectors/tensor.vectors.json') as TensorVectors,
    hexchain: require('@tensormine/protocol/vectors/hexchain.vectors.json') as HexchainVectors,
  };
}

const sha256 = (...parts: Uint8Array[]) => new Uint8Array(hash('sha256', Buffer.concat(parts), 'buffer'));
const tagged = (tag: string, data: Uint8Array) => sha256(Buffer.from(`${tag}\0`), data);

/** X and the path target of a challenge hash (docs/protocol.md 3.2), for the odd-sized vector. */
function derive(challengeHash: Uint8Array, dim: number): { input: Int8Array; pathTarget: Uint8Array } {
  const seed = tagged('PTM4/input', challengeHash);
  const out = new Uint8Array(Math.ceil((dim * dim) / 32) * 32);
  for (let i = 0; i * 32 < out.length; i++) {
    const counter = new Uint8Array(4);
    new DataView(counter.buffer).setUint32(0, i, true);
    out.set(sha256(seed, counter), 32 * i);
  }
  return {
    input: new Int8Array(out.buffer, 0, dim * dim),
    pathTarget: tagged('PTM4/path-target', challengeHash).slice(0, 8),
  };
}

function hexchainChecks(kernels: NativeKernels, v: HexchainVectors): string | undefined {
  const state = new Uint32Array(8);
  for (const h of v.headers) {
    const job = prepareHexchain({ header: bytes(h.header), target: new Uint8Array(32) }, 'native');
    const hi = Math.floor(h.nonce / TWO_32);
    job.params[12] = bswap32(hi);
    kernels.hashHexchain(job.params, h.nonce - hi * TWO_32, state);
    const got = Buffer.alloc(32);
    state.forEach((w, i) => {
      got.writeUInt32BE(w, 4 * i);
    });
    if (got.toString('hex') !== h.pow_hash)
      return `hexchain: the pow hash of nonce ${h.nonce} differs from the vector`;
  }
  for (const s of v.solved) {
    const job = prepareHexchain({ header: bytes(s.header), target: bytes(s.target) }, 'native');
    const r = searchBlock(job, s.start_nonce, 100_000);
    if (r.found !== s.nonce || r.hashes !== s.nonce - s.start_nonce + 1) {
      return `hexchain: the search found ${r.found} after ${r.hashes} hashes, the vector ${s.nonce}`;
    }
    if (hex(hexchainHash(job, s.nonce)) !== s.pow_hash)
      return `hexchain: solved block ${s.nonce}: pow hash differs`;
  }
  return undefined;
}

function probeChecks(
  kernels: NativeKernels,
  name: string,
  task: TensorKernelTask,
  key: Uint8Array,
  nonces: readonly WorkVector[],
): string | undefined {
  const native = kernels.tensor(task, key);
  for (const n of nonces) {
    const p = native.probe(n.nonce);
    const fields: [string, string | number, string | number | undefined][] = [
      ['work seed', hex(p.workSeed), n.work_seed],
      ['accumulator hash', hex(p.accumulatorHash), n.accumulator_hash],
      ['path signature', hex(p.pathSignature), n.path_signature],
      ['path distance', p.pathDistance, n.path_distance],
      ['MML score', p.mmlScoreQ16, n.mml_score_q16],
    ];
    for (const [field, got, expected] of fields) {
      if (expected !== undefined && got !== expected)
        return `${name} nonce ${n.nonce}: ${field} differs from the vector`;
    }
  }
  return undefined;
}

function tensorChecks(v: TensorVectors, kernels: NativeKernels): string | undefined {
  const key = bytes(v.miner_public_key);
  for (const c of v.challenges) {
    const name = `${c.input.deviceType} ${c.operation} ${c.activation}`;
    const task: TensorKernelTask = {
      challengeHash: bytes(c.challenge_hash),
      operation: c.operation,
      activation: c.activation,
      dim: c.dim,
      filters: c.filters,
      input: new Int8Array(bytes(c.input_tensor_hex).buffer),
      pathTarget: bytes(c.path_target),
      mmlThresholdQ16: c.mml_threshold_q16,
      pathDistanceMax: c.path_distance_max,
    };
    const failed = probeChecks(kernels, name, task, key, c.nonces);
    if (failed !== undefined) return failed;
    const r = new TensorSearch(task, key, 'native').search(0, 1000);
    const proof = c.solution.proof;
    if (r.found?.nonce !== proof.computation_nonce || r.iterations !== c.solution.iterations) {
      return `${name}: the search found ${r.found?.nonce} after ${r.iterations} iterations, the vector ${proof.computation_nonce}`;
    }
    if (hex(r.found.work.computationHash) !== proof.computation_hash)
      return `${name}: computation hash differs`;
  }
  const odd = v.odd_dim;
  const derived = derive(bytes(odd.challenge_hash), odd.dim);
  const task: TensorKernelTask = {
    challengeHash: bytes(odd.challenge_hash),
    operation: odd.operation,
    activation: odd.activation,
    dim: odd.dim,
    filters: odd.filters,
    input: derived.input,
    pathTarget: derived.pathTarget,
    mmlThresholdQ16: 65536,
    pathDistanceMax: 64,
  };
  return probeChecks(kernels, `N = ${odd.dim}`, task, key, odd.nonces);
}

/** Runs the self-test with `kernels` installed as this thread's native kernels (the caller does). */
export function nativeSelfTest(kernels: NativeKernels): string | undefined {
  const rc = kernels.selfTest();
  if (rc !== 0) return `the library's known-answer test failed (check ${rc})`;
  const v = vectors();
  return hexchainChecks(kernels, v.hexchain) ?? tensorChecks(v.tensor, kernels);
}
