import type { MinerKernelChoice } from '@tensormine/protocol';
import { MinerError } from '../errors.js';
import { nativeKernels } from './native/library.js';
import { wasmSimdSupported } from './wasm.js';

/**
 * Which kernel runs: `native` (C with SHA-NI and AVX2, compiled on this machine: native/),
 * `wasm` (WebAssembly SIMD) or `js` (generated JavaScript). Every kernel gives the same
 * results: the miner verifies each found nonce with the reference implementation anyway.
 */
export type KernelName = 'native' | 'wasm' | 'js';
/**
 * The setting: `auto` takes `native` where it is built and passed its self-test, else `wasm`
 * where the runtime supports WebAssembly SIMD, else `js`. The type is the control API's string
 * enum (the protocol's miner schemas: MINER_KERNEL_CHOICES); the list is written here again
 * because worker threads load this file and must not import the protocol package at run time
 * (a test checks that the two lists agree).
 */
export type KernelChoice = MinerKernelChoice;
export const KERNEL_CHOICES: readonly KernelChoice[] = ['auto', 'native', 'wasm', 'js'];

/** Throws `invalid_option` unless `choice` is one of KERNEL_CHOICES. */
export function checkKernelChoice(choice: unknown): asserts choice is KernelChoice {
  if (!KERNEL_CHOICES.includes(choice as KernelChoice)) {
    throw new MinerError(
      'invalid_option',
      `kernel: expected one of ${KERNEL_CHOICES.join(', ')}, got ${String(choice)}`,
    );
  }
}

/**
 * What a thread offers the kernel choice: whether its native kernels are loaded and verified,
 * whether its runtime runs WebAssembly SIMD. Asked only where the choice depends on them (a
 * `js` worker never decodes the WebAssembly module to validate it).
 */
export interface KernelSupport {
  readonly nativeLoaded: () => boolean;
  readonly wasmSimd: () => boolean;
}

/**
 * The kernel `choice` selects where `support` holds: the rule of `resolveKernel`, a function of
 * its inputs only. `native` without the native kernels is an error, `auto` then means `wasm`
 * (or `js` without WebAssembly SIMD), `wasm` without WebAssembly SIMD is an error.
 */
export function kernelFor(choice: KernelChoice, support: KernelSupport): KernelName {
  checkKernelChoice(choice);
  if (choice === 'js') return 'js';
  if (choice === 'native' || choice === 'auto') {
    if (support.nativeLoaded()) return 'native';
    if (choice === 'native') {
      throw new MinerError(
        'invalid_option',
        'kernel: native is not loaded in this thread (selectKernel builds, loads and verifies it; or use auto)',
      );
    }
  }
  if (support.wasmSimd()) return 'wasm';
  if (choice === 'wasm') {
    throw new MinerError(
      'invalid_option',
      'kernel: wasm was requested but this runtime does not support WebAssembly SIMD (use --kernel js or auto)',
    );
  }
  return 'js';
}

/** This thread's support: its native kernels (`selectKernel` installs them), its runtime. */
const THREAD_SUPPORT: KernelSupport = {
  nativeLoaded: () => nativeKernels() !== undefined,
  wasmSimd: wasmSimdSupported,
};

/**
 * The kernel a setting selects in this thread, now (`kernelFor` on this thread's support). The
 * native kernels count only once they are loaded and verified here (`selectKernel` does it, and
 * a worker loads what the engine verified): `native` before that is an error, `auto` then means
 * `wasm` (or `js`).
 */
export function resolveKernel(choice: KernelChoice = 'auto'): KernelName {
  return kernelFor(choice, THREAD_SUPPORT);
}
