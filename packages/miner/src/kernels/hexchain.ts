import {
  bswap32,
  compressSha256,
  loadBlockWords,
  SHA256_IV,
  storeDigestWords,
} from '@tensormine/protocol/sha256-words';
import { MinerError } from '../errors.js';
import { type KernelChoice, type KernelName, resolveKernel } from './choice.js';
import { nativeKernels } from './native/library.js';
import { scanHexchain } from './sha256.generated.js';

import { wasmKernels } from './wasm.js';

/**
 * The v4.1 hexchain kernel: the nonce search over SHA-256 of the 88-byte block header
 * (docs/protocol.md 4.7). Bytes [0, 64) of the header do not depend on the nonce, so they are
 * compressed once per job (the midstate); each nonce then costs one compression of the second
 * block, generated in `sha256.generated.ts` with everything that does not depend on the nonce
 * hoisted out of the loop. The first digest word is compared with the first target word inside
 * the loop; only a hash that gets past it (1 in 2^32 at equal words) is compared in full.
 *
 * Three implementations of that loop, with one contract: the generated JavaScript one, the
 * WebAssembly SIMD one (wasm.ts, 4 nonces per vector) and the native one (native/: C on the
 * SHA extensions, several nonces interleaved, rounds 0..3 once per call). `prepareHexchain`
 * picks one: `auto` (the default) takes the native kernels where they are loaded in this
 * thread (choice.ts), else WebAssembly SIMD where the runtime supports it. Whichever it is,
 * a candidate's whole hash is computed here, in JavaScript, before it counts.
 *
 * The kernel imports nothing from @tensormine/protocol at run time: it is an independent
 * implementation, cross-checked against the reference `hexPowHash` / `solveBlock` in the tests.
 */

/** What the kernel needs from a job: the header template and the target. */
export interface HexchainKernelJob {
  /** The 88-byte header (`encodeHeader`); its nonce bytes [80, 88) are ignored. */
  readonly header: Uint8Array;
  /** The 256-bit target, 32 bytes big-endian. */
  readonly target: Uint8Array;
}

/** A job prepared for the search: the midstate, the fixed block words and the target words. */
export interface PreparedHexchain {
  readonly kind: 'prepared-hexchain';
  /** Scan parameters (see `scanHexchain`): midstate, block words 0..3, nonce high word. */
  readonly params: Int32Array;
  /** The target as 8 unsigned big-endian words. */
  readonly targetWords: Uint32Array;
  /** Scratch for the full hash of a candidate. */
  readonly state: Int32Array;
  readonly schedule: Int32Array;
  /** The kernel that runs the search. */
  readonly kernel: KernelName;
  /** The scan loop of that kernel (see `scanHexchain` in sha256.generated.ts). */
  readonly scan: (p: Int32Array, loStart: number, loEnd: number, t0: number) => number;
}

export interface BlockSearchResult {
  /** The first nonce in the range whose hash is <= the target, if any. */
  readonly found: number | undefined;
  /** Nonces hashed, the found one included. */
  readonly hashes: number;
}

const HEADER_BYTES = 88;
const TWO_32 = 0x1_0000_0000;
/** The largest nonce, 2^53 - 1 (exact as a JSON number). */
export const MAX_NONCE = Number.MAX_SAFE_INTEGER;

/** Computes the midstate and the fixed words of a job, for the kernel `kernel` selects. */
export function prepareHexchain(job: HexchainKernelJob, kernel: KernelChoice = 'auto'): PreparedHexchain {
  const name = resolveKernel(kernel);
  if (!(job.header instanceof Uint8Array) || job.header.length !== HEADER_BYTES) {
    throw new MinerError('invalid_job', `header: expected ${HEADER_BYTES} bytes, got ${job.header?.length}`);
  }
  if (!(job.target instanceof Uint8Array) || job.target.length !== 32) {
    throw new MinerError('invalid_job', `target: expected 32 bytes, got ${job.target?.length}`);
  }
  const schedule = new Int32Array(64);
  const midstate = Int32Array.from(SHA256_IV);
  loadBlockWords(job.header, 0, schedule);
  compressSha256(midstate, schedule);
  const params = new Int32Array(13);
  params.set(midstate, 0);
  for (let i = 0; i < 4; i++) {
    const o = 64 + 4 * i;
    const h = job.header;
    params[8 + i] = (h[o]! << 24) | (h[o + 1]! << 16) | (h[o + 2]! << 8) | h[o + 3]!;
  }
  const targetWords = new Uint32Array(8);
  for (let i = 0; i < 8; i++) {
    const t = job.target;
    targetWords[i] = ((t[4 * i]! << 24) | (t[4 * i + 1]! << 16) | (t[4 * i + 2]! << 8) | t[4 * i + 3]!) >>> 0;
  }
  let scan = scanHexchain;
  if (name === 'wasm') {
    const wasm = wasmKernels();
    scan = (p, loStart, loEnd, t0) => wasm.scanHexchain(p, loStart, loEnd, t0);
  } else if (name === 'native') {
    const native = nativeKernels()!;
    scan = (p, loStart, loEnd, t0) => native.scanHexchain(p, loStart, loEnd, t0);
  }
  return {
    kind: 'prepared-hexchain',
    params,
    targetWords,
    state: new Int32Array(8),
    schedule,
    kernel: name,
    scan,
  };
}

/**
 * Searches nonces startNonce, startNonce + 1, ... (at most `count`) for the first whose
 * pow_hash is <= the target. Accepts a raw job (prepared on each call) or a prepared one
 * (prepare once per job: the worker does).
 */
export function searchBlock(
  job: PreparedHexchain | HexchainKernelJob,
  startNonce: number,
  count: number,
): BlockSearchResult {
  const p =
    'kind' in job && job.kind === 'prepared-hexchain' ? job : prepareHexchain(job as HexchainKernelJob);
  checkRange(startNonce, count);
  const end = startNonce + count;
  const t0 = p.targetWords[0]!;
  let nonce = startNonce;
  while (nonce < end) {
    const hi = Math.floor(nonce / TWO_32);
    let lo = nonce - hi * TWO_32;
    const loEnd = Math.min(TWO_32, lo + (end - nonce));
    p.params[12] = bswap32(hi);
    for (;;) {
      const hit = p.scan(p.params, lo, loEnd, t0);
      if (hit < 0) break;
      const candidate = hi * TWO_32 + hit;
      hashWords(p, candidate);
      if (wordsMeetTarget(p.state, p.targetWords)) {
        return { found: candidate, hashes: candidate - startNonce + 1 };
      }
      lo = hit + 1;
    }
    nonce = hi * TWO_32 + loEnd;
  }
  return { found: undefined, hashes: count };
}

/** pow_hash of the job's header with `nonce`, 32 bytes (the slow path: a full compression). */
export function hexchainHash(job: PreparedHexchain | HexchainKernelJob, nonce: number): Uint8Array {
  const p =
    'kind' in job && job.kind === 'prepared-hexchain' ? job : prepareHexchain(job as HexchainKernelJob);
  checkRange(nonce, 1);
  hashWords(p, nonce);
  return storeDigestWords(p.state, new Uint8Array(32));
}

function hashWords(p: PreparedHexchain, nonce: number): void {
  const hi = Math.floor(nonce / TWO_32);
  const w = p.schedule;
  w.fill(0);
  w.set(p.params.subarray(8, 12), 0);
  w[4] = bswap32(nonce - hi * TWO_32);
  w[5] = bswap32(hi);
  w[6] = 0x80000000 | 0;
  w[15] = HEADER_BYTES * 8;
  p.state.set(p.params.subarray(0, 8));
  compressSha256(p.state, w);
}

/** The hash words (big-endian) compared with the target words as a 256-bit number: <=. */
function wordsMeetTarget(hash: Int32Array, target: Uint32Array): boolean {
  for (let i = 0; i < 8; i++) {
    const h = hash[i]! >>> 0;
    const t = target[i]!;
    if (h !== t) return h < t;
  }
  return true;
}

function checkRange(startNonce: number, count: number): void {
  if (!Number.isSafeInteger(startNonce) || startNonce < 0) {
    throw new MinerError(
      'invalid_job',
      `startNonce: expected an integer in [0, 2^53 - 1], got ${startNonce}`,
    );
  }
  if (!Number.isSafeInteger(count) || count < 0 || startNonce + count > MAX_NONCE + 1) {
    throw new MinerError(
      'invalid_job',
      `count: expected an integer with startNonce + count <= 2^53, got ${count} from ${startNonce}`,
    );
  }
}
