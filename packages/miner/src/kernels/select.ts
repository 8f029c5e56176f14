import { rmSync } from 'node:fs';
import { checkKernelChoice, type KernelChoice, type KernelName, resolveKernel } from './choice.js';
import { buildNativeLibrary, NativeBuildError } from './native/build.js';
import { maskedCpuFlags, missingCpuFlags } from './native/cpu.js';
import { NativeKernels, nativeKernels, useNativeKernels } from './native/library.js';
import { nativeSelfTest } from './native/self-test.js';
import { wasmSimdSupported } from './wasm.js';

/**
 * Choosing the kernel at run time (main thread; the engine does it when it starts):
 *   - `native` and `auto` try the native kernels: this CPU must have SHA-NI, AVX2, SSE4.1 and
 *     SSSE3 (/proc/cpuinfo, then CPUID in the library), the library must build (or be in the
 *     cache, see native/build.ts), load, and pass the self-test against the protocol vectors
 *     (native/self-test.ts). If any step fails, the kernel is `wasm` (`js` without WebAssembly
 *     SIMD) and `notice` says why, in one line, for the miner to print;
 *   - `wasm` and `js` are what they say (`wasm` without WebAssembly SIMD is an error).
 * The native preparation runs once per process and set of options; later calls reuse it.
 */

export interface KernelSelection {
  /** The kernel the miner runs. */
  readonly kernel: KernelName;
  /** What was asked for. */
  readonly requested: KernelChoice;
  /** Why the native kernels are not used, when they were asked for (`native` or `auto`). */
  readonly notice?: string;
  /** The native library (when `kernel` is `native`): the file workers load. */
  readonly nativeLibrary?: string;
  /** A few words on the native build: compiler, cached or fresh, self-test time. */
  readonly detail?: string;
}

export interface SelectKernelOptions {
  /** The environment: CC, PATH, XDG_CACHE_HOME, TENSORMINE_CPU_MASK (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The text of /proc/cpuinfo to judge the CPU by (default: the file). */
  readonly cpuinfo?: string;
  /** Where the built library is kept (default $XDG_CACHE_HOME/tensormine/native). */
  readonly cacheDir?: string;
  /** Lines to show while the native kernels are compiled on first use (see NativeBuildOptions). */
  readonly onProgress?: (line: string) => void;
}

type NativeOutcome =
  | { readonly ok: true; readonly kernels: NativeKernels; readonly detail: string }
  | { readonly ok: false; readonly reason: string };

const prepared = new Map<string, Promise<NativeOutcome>>();

async function prepareNative(options: SelectKernelOptions): Promise<NativeOutcome> {
  const env = options.env ?? process.env;
  if (process.arch !== 'x64')
    return { ok: false, reason: `the native kernels are x86-64 only (this is ${process.arch})` };
  const mask = maskedCpuFlags(env);
  const missing = missingCpuFlags({
    ...(options.cpuinfo === undefined ? {} : { cpuinfo: options.cpuinfo }),
    mask,
  });
  if (missing !== undefined && missing.length > 0) {
    return {
      ok: false,
      reason: `this CPU lacks ${missing.join(', ')}${mask.length > 0 ? ' (TENSORMINE_CPU_MASK)' : ''}`,
    };
  }
  // A cached library that does not load (a truncated file, say) is removed and built again, once.
  let build: Awaited<ReturnType<typeof buildNativeLibrary>> | undefined;
  let kernels: NativeKernels | undefined;
  for (let attempt = 0; kernels === undefined; attempt++) {
    try {
      build = await buildNativeLibrary({
        env,
        ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
        ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      });
    } catch (error) {
      if (error instanceof NativeBuildError) return { ok: false, reason: error.message };
      return { ok: false, reason: `the build failed: ${(error as Error).message}` };
    }
    try {
      kernels = new NativeKernels(build.path);
    } catch (error) {
      if (!build.cached || attempt > 0) {
        return { ok: false, reason: `cannot load ${build.path}: ${(error as Error).message.split('\n')[0]}` };
      }
      rmSync(build.path, { force: true });
    }
  }
  const lacking = kernels.missingFeatures();
  if (lacking.length > 0) return { ok: false, reason: `this CPU lacks ${lacking.join(', ')} (CPUID)` };
  const started = performance.now();
  const previous = nativeKernels();
  useNativeKernels(kernels);
  let failure: string | undefined;
  try {
    failure = nativeSelfTest(kernels);
  } catch (error) {
    failure = (error as Error).message;
  } finally {
    useNativeKernels(previous);
  }
  if (failure !== undefined) return { ok: false, reason: `the self-test failed: ${failure}` };
  const ms = performance.now() - started;
  return {
    ok: true,
    kernels,
    detail: `SHA-NI + AVX2, ${build!.compiler}, ${build!.cached ? 'cached' : 'built'}, vectors passed in ${ms.toFixed(0)} ms`,
  };
}

/** Selects the kernel for `choice` (see above); installs the native kernels in this thread when chosen. */
export async function selectKernel(
  choice: KernelChoice = 'auto',
  options: SelectKernelOptions = {},
): Promise<KernelSelection> {
  checkKernelChoice(choice);
  if (choice === 'js' || choice === 'wasm') return { kernel: resolveKernel(choice), requested: choice };
  const env = options.env ?? process.env;
  const key = JSON.stringify([
    options.cacheDir,
    options.cpuinfo,
    env.CC,
    env.PATH,
    env.XDG_CACHE_HOME,
    env.TENSORMINE_CPU_MASK,
  ]);
  let outcome = prepared.get(key);
  if (outcome === undefined) {
    outcome = prepareNative(options);
    prepared.set(key, outcome);
  }
  const result = await outcome;
  if (result.ok) {
    useNativeKernels(result.kernels);
    return { kernel: 'native', requested: choice, nativeLibrary: result.kernels.path, detail: result.detail };
  }
  const fallback: KernelName = wasmSimdSupported() ? 'wasm' : 'js';
  return {
    kernel: fallback,
    requested: choice,
    notice: `kernel: native unavailable: ${result.reason}; using ${fallback}`,
  };
}
