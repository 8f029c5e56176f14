/**
 * Choosing the kernel at run time: the native kernels where they can run, else WebAssembly
 * with one line saying why (no compiler, a compiler that fails, a CPU without the features:
 * hidden and masked here, as on a machine without them); and the JavaScript kernel's warm-up
 * before it takes work.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { benchJobs } from '../src/bench.js';
import { MiningEngine } from '../src/engine.js';
import { MinerError } from '../src/errors.js';
import { type KernelChoice, type KernelName, kernelFor } from '../src/kernels/choice.js';
import { findCompiler } from '../src/kernels/native/build.js';
import { cpuinfoFlags, maskedCpuFlags, missingCpuFlags } from '../src/kernels/native/cpu.js';
import { selectKernel } from '../src/kernels/select.js';
import { warmUpJsKernels } from '../src/kernels/warm-up.js';
import { firstFound } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tm-kernel-choice-'));
  await mkdir(join(dir, 'empty-bin'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CPUINFO = (flags: string) =>
  `processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: ${flags}\n\nprocessor\t: 1\n`;
const ALL = 'fpu sse2 ssse3 sse4_1 sse4_2 avx avx2 bmi2 sha_ni';

describe('the CPU features', () => {
  test('read from cpuinfo, with TENSORMINE_CPU_MASK counted as missing', () => {
    expect([...cpuinfoFlags(CPUINFO(ALL))!]).toContain('sha_ni');
    expect(missingCpuFlags({ cpuinfo: CPUINFO(ALL) })).toEqual([]);
    expect(missingCpuFlags({ cpuinfo: CPUINFO('fpu sse2 ssse3 sse4_1 avx avx2') })).toEqual(['sha_ni']);
    expect(missingCpuFlags({ cpuinfo: CPUINFO(ALL), mask: ['avx2', 'sha_ni'] })).toEqual(['sha_ni', 'avx2']);
    expect(maskedCpuFlags({ TENSORMINE_CPU_MASK: 'sha_ni, AVX2' })).toEqual(['sha_ni', 'avx2']);
    // No cpuinfo to read (another OS): unknown, the library's CPUID check decides.
    expect(missingCpuFlags({ cpuinfo: 'no flags here' })).toBeUndefined();
  });
});

describe('the compiler', () => {
  test('CC first (with its arguments), else cc, gcc or clang on PATH', async () => {
    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'gcc'), '#!/bin/sh\n', { mode: 0o755 });
    expect(findCompiler({ PATH: bin })).toEqual({ command: join(bin, 'gcc'), args: [] });
    expect(findCompiler({ PATH: bin, CC: 'gcc -m64' })).toEqual({
      command: join(bin, 'gcc'),
      args: ['-m64'],
    });
    expect(() => findCompiler({ PATH: join(dir, 'empty-bin') })).toThrow(
      'no C compiler: CC is unset and none of cc, gcc, clang is on PATH',
    );
    expect(() => findCompiler({ PATH: bin, CC: 'tcc' })).toThrow(
      'no C compiler: CC=tcc is not an executable on PATH',
    );
  });
});

describe("the rule: the kernel a choice selects is a function of the thread's support", () => {
  test('every choice against every support; the support is asked only where the choice depends on it', () => {
    const asked: string[] = [];
    const support = (native: boolean, simd: boolean) => ({
      nativeLoaded: () => {
        asked.push('native');
        return native;
      },
      wasmSimd: () => {
        asked.push('wasm');
        return simd;
      },
    });
    const NO_NATIVE = /^kernel: native is not loaded in this thread/;
    const NO_SIMD = /^kernel: wasm was requested but this runtime does not support WebAssembly SIMD/;
    // choice, native kernels loaded, WebAssembly SIMD: the kernel (or the error), what was asked
    const table: [KernelChoice, boolean, boolean, KernelName | RegExp, string[]][] = [
      ['auto', true, true, 'native', ['native']],
      ['auto', true, false, 'native', ['native']],
      ['auto', false, true, 'wasm', ['native', 'wasm']],
      ['auto', false, false, 'js', ['native', 'wasm']],
      ['native', true, true, 'native', ['native']],
      ['native', true, false, 'native', ['native']],
      ['native', false, true, NO_NATIVE, ['native']],
      ['native', false, false, NO_NATIVE, ['native']],
      ['wasm', true, true, 'wasm', ['wasm']],
      ['wasm', false, true, 'wasm', ['wasm']],
      ['wasm', true, false, NO_SIMD, ['wasm']],
      ['wasm', false, false, NO_SIMD, ['wasm']],
      ['js', true, true, 'js', []],
      ['js', false, false, 'js', []],
    ];
    for (const [choice, native, simd, want, wantAsked] of table) {
      asked.length = 0;
      const label = `${choice}, native kernels ${native ? 'loaded' : 'not loaded'}, SIMD ${simd ? 'yes' : 'no'}`;
      let got: KernelName | Error;
      try {
        got = kernelFor(choice, support(native, simd));
      } catch (error) {
        got = error as Error;
      }
      if (want instanceof RegExp) {
        expect(got, label).toBeInstanceOf(MinerError);
        expect((got as MinerError).code, label).toBe('invalid_option');
        expect((got as MinerError).message, label).toMatch(want);
      } else {
        expect(got, label).toBe(want);
      }
      expect(asked, label).toEqual(wantAsked);
    }
    expect(() => kernelFor('simd' as never, support(true, true))).toThrow(
      'kernel: expected one of auto, native, wasm, js, got simd',
    );
  });
});

describe('--kernel native where it cannot run: one line, then wasm', () => {
  const env = (): Record<string, string | undefined> => ({
    ...process.env,
    XDG_CACHE_HOME: join(dir, 'cache'),
  });

  test('no C compiler (PATH without one, CC unset)', async () => {
    const hidden: Record<string, string | undefined> = { ...env(), PATH: join(dir, 'empty-bin') };
    delete hidden.CC;
    const s = await selectKernel('native', { env: hidden });
    expect(s).toEqual({
      kernel: 'wasm',
      requested: 'native',
      notice:
        'kernel: native unavailable: no C compiler: CC is unset and none of cc, gcc, clang is on PATH; using wasm',
    });
  });

  test('a compiler that fails', async () => {
    const s = await selectKernel('native', { env: { ...env(), CC: 'false' } });
    expect(s.kernel).toBe('wasm');
    expect(s.notice).toMatch(/^kernel: native unavailable: \/\S+\/false failed \(exit 1\); using wasm$/);
  });

  test.each([
    [
      'SHA-NI masked (TENSORMINE_CPU_MASK)',
      { TENSORMINE_CPU_MASK: 'sha_ni' },
      undefined,
      'this CPU lacks sha_ni (TENSORMINE_CPU_MASK)',
    ],
    ['no AVX2 in cpuinfo', {}, CPUINFO('fpu sse2 ssse3 sse4_1 avx sha_ni'), 'this CPU lacks avx2'],
    ['an old CPU', {}, CPUINFO('fpu sse2'), 'this CPU lacks sha_ni, avx2, sse4_1, ssse3'],
  ])('%s', async (_, extra, cpuinfo, reason) => {
    const s = await selectKernel('native', {
      env: { ...env(), ...extra },
      ...(cpuinfo === undefined ? {} : { cpuinfo }),
    });
    expect(s.kernel).toBe('wasm');
    expect(s.notice).toBe(`kernel: native unavailable: ${reason}; using wasm`);
  });

  test('auto says the same and takes wasm', async () => {
    const s = await selectKernel('auto', { env: { ...env(), TENSORMINE_CPU_MASK: 'avx2' } });
    expect(s).toEqual({
      kernel: 'wasm',
      requested: 'auto',
      notice: 'kernel: native unavailable: this CPU lacks avx2 (TENSORMINE_CPU_MASK); using wasm',
    });
  });

  test('wasm and js are what they say, with nothing to build', async () => {
    expect(await selectKernel('wasm')).toEqual({ kernel: 'wasm', requested: 'wasm' });
    expect(await selectKernel('js')).toEqual({ kernel: 'js', requested: 'js' });
    await expect(selectKernel('simd' as never)).rejects.toThrow(/expected one of auto, native, wasm, js/);
  });

  test('an engine asked for native on such a machine mines with wasm, and says why', async () => {
    const engine = new MiningEngine({
      threads: 1,
      kernel: 'native',
      select: { env: { ...env(), TENSORMINE_CPU_MASK: 'sha_ni' } },
    });
    await engine.start();
    try {
      expect(engine.kernel).toBe('wasm');
      expect(engine.kernelSelection?.notice).toBe(
        'kernel: native unavailable: this CPU lacks sha_ni (TENSORMINE_CPU_MASK); using wasm',
      );
      const { job } = benchJobs(2 ** 20, 0)[0]!;
      expect((await firstFound(engine, job)).challengeId).toBe(job.challengeId);
      expect(engine.kernelErrors).toBe(0);
    } finally {
      await engine.stop();
    }
  });
});

describe('the JavaScript kernel warms up before it takes work', () => {
  test('in rounds of fixed work, until they are at least twice as fast as the first and settled (or maxMs)', () => {
    const r = warmUpJsKernels();
    expect(r.rounds).toBeGreaterThanOrEqual(r.settled ? 5 : 1);
    if (r.settled) expect(r.speedup).toBeGreaterThan(1);
    expect(warmUpJsKernels({ maxMs: 0 }).rounds).toBe(1);
  });

  test('every js worker reports its warm-up when it is ready; other kernels have none', async () => {
    const js = new MiningEngine({ threads: 2, kernel: 'js' });
    const wasm = new MiningEngine({ threads: 1, kernel: 'wasm' });
    await Promise.all([js.start(), wasm.start()]);
    try {
      expect(js.warmUps()).toHaveLength(2);
      for (const w of js.warmUps()) expect(w.rounds).toBeGreaterThanOrEqual(1);
      expect(wasm.warmUps()).toEqual([]);
    } finally {
      await Promise.all([js.stop(), wasm.stop()]);
    }
  });
});
