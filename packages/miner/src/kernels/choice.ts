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
 * where the runtime supports WebAssembly SIMD, else `js`.
 */
export type KernelChoice = KernelName | 'auto';
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
 * The kernel a setting selects in this thread, now. The native kernels count only once they
 * are loaded and verified here (`selectKernel` does it, and a worker loads what the engine
 * verified): `native` before that is an error, `auto` then means `wasm` (or `js`).
 */
export function resolveKernel(choice: KernelChoice = 'auto'): KernelName {
  checkKernelChoice(choice);
  if (choice === 'js') return 'js';
  if (choice === 'native' || choice === 'auto') {
    if (nativeKernels() !== undefined) return 'native';
    if (choice === 'native') {
      throw new MinerError(
        'invalid_option',
        'kernel: native is not loaded in this thread (selectKernel builds, loads and verifies it; or use auto)',
      );
    }
  }
  if (wasmSimdSupported()) return 'wasm';
  if (choice === 'wasm') {
    throw new MinerError(
      'invalid_option',
      'kernel: wasm was requested but this runtime does not support WebAssembly SIMD (use --kernel js or auto)',
    );
  }
  return 'js';
}
