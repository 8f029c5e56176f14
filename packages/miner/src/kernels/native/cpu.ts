import { readFileSync } from 'node:fs';

/**
 * The CPU features the native kernels need, as Linux's /proc/cpuinfo names them: SHA-NI
 * (SHA256RNDS2, SHA256MSG1/2), SSE4.1 and SSSE3 (the shuffles around them) and AVX2 (the
 * tensor multiply-accumulates; `avx` is implied by it and checked by the library through
 * XGETBV). The library checks the same through CPUID before it is used; /proc/cpuinfo is read
 * first so that a CPU without them costs no compile.
 */
export const NATIVE_CPU_FLAGS: readonly string[] = ['sha_ni', 'avx2', 'sse4_1', 'ssse3'];

/**
 * `TENSORMINE_CPU_MASK`: features to treat as missing (comma- or space-separated cpuinfo
 * flags, e.g. `sha_ni`), to try the fallback on a CPU that has them.
 */
export function maskedCpuFlags(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env.TENSORMINE_CPU_MASK ?? '')
    .split(/[\s,]+/)
    .map((f) => f.trim().toLowerCase())
    .filter((f) => f !== '');
}

/** The flags of the first processor in a /proc/cpuinfo text (x86: `flags`), or undefined. */
export function cpuinfoFlags(cpuinfo: string): Set<string> | undefined {
  const line = /^flags\s*:(.*)$/m.exec(cpuinfo);
  return line ? new Set(line[1]!.trim().split(/\s+/)) : undefined;
}

/**
 * The needed features that this CPU lacks according to /proc/cpuinfo (or the `cpuinfo` text
 * given), with the masked ones counted as lacking; undefined when there is no cpuinfo to read
 * (another OS: the library's CPUID check decides).
 */
export function missingCpuFlags(options: {
  readonly cpuinfo?: string;
  readonly mask?: readonly string[];
}): string[] | undefined {
  let text = options.cpuinfo;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      text = undefined;
    }
  }
  const mask = new Set(options.mask ?? []);
  const flags = text === undefined ? undefined : cpuinfoFlags(text);
  if (flags === undefined) {
    const masked = NATIVE_CPU_FLAGS.filter((f) => mask.has(f));
    return masked.length > 0 ? masked : undefined;
  }
  return NATIVE_CPU_FLAGS.filter((f) => !flags.has(f) || mask.has(f));
}
