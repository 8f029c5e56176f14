import { createRequire } from 'node:module';
import { MinerError } from '../../errors.js';

/**
 * The native kernels' shared library (firmware-sim/native/tm_native.h), called through koffi,
 * an FFI that ships its own prebuilt binaries inside the npm package (nothing is compiled for
 * Node; only the kernels are, by build.ts, with the system's C compiler). Calls are
 * synchronous, like the WebAssembly kernels', so a worker thread runs them in its batches as
 * it runs the others; each call scans many nonces, so the FFI's cost (well under a
 * microsecond) is paid once per batch.
 *
 * This module only binds a library that is already built. Whether the native kernels may run
 * here (CPU features, the build, the self-test against the vectors) is decided once, on the
 * main thread, by `selectKernel` (../select.ts); a worker then loads the same file.
 * Worker-safe: no import of @tensormine/protocol.
 */

/** The interface version the library must report (TM_NATIVE_ABI). */
export const NATIVE_ABI = 1;

/** tm_native_cpu_features bits, named as /proc/cpuinfo names them. */
export const NATIVE_FEATURES: readonly { readonly bit: number; readonly flag: string }[] = [
  { bit: 1, flag: 'ssse3' },
  { bit: 2, flag: 'sse4_1' },
  { bit: 4, flag: 'avx' },
  { bit: 8, flag: 'avx2' },
  { bit: 16, flag: 'sha_ni' },
];

const HEX_CHUNK = 0x4000_0000;
const PROBE_BYTES = 80;

type Fn<A extends unknown[], R> = (...args: A) => R;

/** The functions of the library, as koffi binds them. */
export interface NativeBindings {
  readonly abi: Fn<[], number>;
  readonly cpuFeatures: Fn<[], number>;
  readonly selfTest: Fn<[], number>;
  readonly hexScan: Fn<[Int32Array, number, number, number], number>;
  readonly hexHash: Fn<[Int32Array, number, Uint32Array], void>;
  readonly tensorBytes: Fn<[number, number, number], number>;
  readonly tensorInit: Fn<
    [Uint8Array, number, Uint8Array, Uint8Array, number, number, number, Int8Array, Uint8Array],
    number
  >;
  readonly tensorSearch: Fn<[Uint8Array, number, number, number, number, Float64Array], number>;
  readonly tensorProbe: Fn<[Uint8Array, number, Uint8Array], number>;
}

interface Koffi {
  load(path: string): { func(definition: string): unknown };
}

/** What one native search call reports (tm_native_tensor_search). */
export interface NativeTensorResult {
  readonly found?: { readonly nonce: number; readonly mmlScoreQ16: number; readonly pathDistance: number };
  readonly iterations: number;
}

/** The per-nonce fields of the native search (tm_native_tensor_probe). */
export interface NativeProbe {
  readonly workSeed: Uint8Array;
  readonly accumulatorHash: Uint8Array;
  readonly pathSignature: Uint8Array;
  readonly mmlScoreQ16: number;
  readonly pathDistance: number;
}

/** The shape of a task for the native tensor search. */
export interface NativeTensorTask {
  readonly challengeHash: Uint8Array;
  readonly operation: 'matmul' | 'conv';
  readonly dim: number;
  readonly filters: number;
  readonly input: ArrayLike<number>;
  readonly pathTarget: Uint8Array;
}

/** The library, bound (one per thread: koffi loads it once per process and counts the handles). */
export class NativeKernels {
  readonly path: string;
  private readonly fn: NativeBindings;

  constructor(path: string) {
    this.path = path;
    const koffi = createRequire(import.meta.url)('koffi') as Koffi;
    const lib = koffi.load(path);
    const bind = <A extends unknown[], R>(definition: string) => lib.func(definition) as Fn<A, R>;
    this.fn = {
      abi: bind('int32_t tm_native_abi(void)'),
      cpuFeatures: bind('uint32_t tm_native_cpu_features(void)'),
      selfTest: bind('int32_t tm_native_self_test(void)'),
      hexScan: bind(
        'int32_t tm_native_hex_scan(const int32_t *params, uint32_t lo, uint32_t count, uint32_t t0)',
      ),
      hexHash: bind('void tm_native_hex_hash(const int32_t *params, uint32_t lo, _Out_ uint32_t *out)'),
      tensorBytes: bind('uint32_t tm_native_tensor_bytes(uint32_t op, uint32_t dim, uint32_t filters)'),
      tensorInit: bind(
        'int32_t tm_native_tensor_init(uint8_t *state, uint32_t bytes, const uint8_t *challenge, const uint8_t *key, uint32_t op, uint32_t dim, uint32_t filters, const int8_t *input, const uint8_t *path_target)',
      ),
      tensorSearch: bind(
        'int32_t tm_native_tensor_search(uint8_t *state, uint64_t start, uint64_t count, uint32_t mml_max, int32_t distance_max, _Out_ double *out)',
      ),
      tensorProbe: bind('int32_t tm_native_tensor_probe(uint8_t *state, uint64_t nonce, _Out_ uint8_t *out)'),
    };
    const abi = this.fn.abi();
    if (abi !== NATIVE_ABI) {
      throw new MinerError(
        'invalid_option',
        `native kernels: ${path} has interface ${abi}, expected ${NATIVE_ABI}`,
      );
    }
  }

  /** The CPU features the kernels need that this CPU lacks (CPUID), as /proc/cpuinfo flags. */
  missingFeatures(): string[] {
    const have = this.fn.cpuFeatures();
    return NATIVE_FEATURES.filter((f) => (have & f.bit) === 0).map((f) => f.flag);
  }

  /** The library's known-answer test (the core's tm_self_test, SHA-NI against the portable SHA-256): 0 is a pass. */
  selfTest(): number {
    return this.fn.selfTest();
  }

  /** The hexchain scan: the same contract as `WasmKernels.scanHexchain` (see hexchain.ts). */
  scanHexchain(p: Int32Array, loStart: number, loEnd: number, t0: number): number {
    for (let lo = loStart; lo < loEnd; ) {
      const count = Math.min(loEnd - lo, HEX_CHUNK);
      const hit = this.fn.hexScan(p, lo, count, t0 >>> 0);
      if (hit >= 0) return lo + hit;
      lo += count;
    }
    return -1;
  }

  /** The pow hash state words (big-endian digest words) of nonce hi * 2^32 + lo, hi from p[12]. */
  hashHexchain(p: Int32Array, lo: number, out: Uint32Array): void {
    this.fn.hexHash(p, lo, out);
  }

  /** A tensor task laid out for the native search (its memory is a buffer owned here). */
  tensor(task: NativeTensorTask, minerPublicKey: Uint8Array): NativeTensor {
    return new NativeTensor(this.fn, task, minerPublicKey);
  }
}

/** One task of the native tensor search: construct once per task and key, search many times. */
export class NativeTensor {
  private readonly fn: NativeBindings;
  private readonly state: Uint8Array;
  private readonly out = new Float64Array(4);
  private readonly probeOut = new Uint8Array(PROBE_BYTES);

  constructor(fn: NativeBindings, task: NativeTensorTask, key: Uint8Array) {
    this.fn = fn;
    const op = task.operation === 'conv' ? 1 : 0;
    const bytes = fn.tensorBytes(op, task.dim, task.filters);
    if (bytes === 0) {
      throw new MinerError(
        'invalid_job',
        `native tensor: no layout for ${task.operation} ${task.dim} x ${task.filters}`,
      );
    }
    this.state = new Uint8Array(bytes);
    const rc = fn.tensorInit(
      this.state,
      bytes,
      task.challengeHash,
      key,
      op,
      task.dim,
      task.filters,
      Int8Array.from(task.input),
      task.pathTarget,
    );
    if (rc !== 0) throw new MinerError('invalid_job', `native tensor: tm_native_tensor_init returned ${rc}`);
  }

  /**
   * Nonces start .. start + count - 1 (start + count <= 2^53): the first whose path distance is
   * <= distanceMax and MML score <= mmlMaxQ16.
   */
  search(start: number, count: number, mmlMaxQ16: number, distanceMax: number): NativeTensorResult {
    const out = this.out;
    const rc = this.fn.tensorSearch(this.state, start, count, mmlMaxQ16, distanceMax, out);
    if (rc === 1) {
      return {
        found: { nonce: out[0]!, mmlScoreQ16: out[2]!, pathDistance: out[3]! },
        iterations: out[1]!,
      };
    }
    if (rc !== 0)
      throw new MinerError('invalid_job', `native tensor: tm_native_tensor_search returned ${rc}`);
    return { iterations: out[1]! };
  }

  /** One nonce's search fields, for the self-test. */
  probe(nonce: number): NativeProbe {
    const rc = this.fn.tensorProbe(this.state, nonce, this.probeOut);
    if (rc !== 0) throw new MinerError('invalid_job', `native tensor: tm_native_tensor_probe returned ${rc}`);
    const o = this.probeOut;
    const view = new DataView(o.buffer, o.byteOffset, o.byteLength);
    return {
      workSeed: o.slice(0, 32),
      accumulatorHash: o.slice(32, 64),
      pathSignature: o.slice(64, 72),
      mmlScoreQ16: view.getUint32(72, true),
      pathDistance: view.getUint32(76, true),
    };
  }
}

let installed: NativeKernels | undefined;

/** This thread's verified native kernels, if any (see `useNativeKernels`). */
export function nativeKernels(): NativeKernels | undefined {
  return installed;
}

/**
 * Makes `kernels` this thread's native kernels (what `native` and `auto` resolve to), or none.
 * Only for a library that passed `selectKernel`'s checks: that is the caller's promise.
 */
export function useNativeKernels(kernels: NativeKernels | undefined): void {
  installed = kernels;
}
