/**
 * `--kernel native` where the native kernels cannot run, as users run the miner (bin/miner.js
 * in a process of its own): on a machine without a C compiler (PATH without one, CC unset)
 * and on a CPU without SHA-NI (TENSORMINE_CPU_MASK), `miner bench` says why in one line and
 * mines with WebAssembly, with the checksum every kernel gives. Where they can run, the first
 * use compiles them into the user's cache and says so on stderr while the compiler runs.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { PROCESS_START_TIMEOUT_MS, SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { tempHome } from './helpers.js';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'miner.js');
const ARGS = ['bench', '--kernel', 'native', '--amount', '64k', '--tensor-iterations', '0', '--threads', '1'];

function runBin(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...ARGS],
      { env, timeout: PROCESS_START_TIMEOUT_MS },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The lines of a bench run: the notice, the case, the checksum and the kernel. */
function expectFallback(out: { code: number; stdout: string; stderr: string }, reason: string): void {
  expect(out.code, out.stderr).toBe(0);
  const lines = out.stdout.trimEnd().split('\n');
  expect(lines[0]).toBe('bench: 1 thread, 64000 hexchain hashes, 0 iterations per tensor case');
  expect(lines[1]).toBe(`kernel: native unavailable: ${reason}; using wasm`);
  expect(lines.filter((l) => l.includes('native unavailable'))).toHaveLength(1);
  expect(lines.at(-1)).toBe('kernel wasm');
}

describe('miner bench --kernel native where it cannot run', () => {
  test(
    'no C compiler: one line, then WebAssembly',
    async () => {
      const { dir, env } = await tempHome();
      // PATH holds Node and nothing else; CC is unset.
      const bare = join(dir, 'bin-without-cc');
      await mkdir(bare);
      await symlink(process.execPath, join(bare, 'node'));
      const out = await runBin({ ...env, PATH: bare, XDG_CACHE_HOME: join(dir, 'cache') });
      expectFallback(out, 'no C compiler: CC is unset and none of cc, gcc, clang is on PATH');
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  test(
    'a CPU without SHA-NI: one line, then WebAssembly, and the same checksum',
    async () => {
      const { dir, env } = await tempHome();
      const out = await runBin({
        ...env,
        PATH: process.env.PATH ?? '',
        XDG_CACHE_HOME: join(dir, 'cache'),
        TENSORMINE_CPU_MASK: 'sha_ni',
      });
      expectFallback(out, 'this CPU lacks sha_ni (TENSORMINE_CPU_MASK)');
      expect(out.stdout).toMatch(/^checksum [0-9a-f]{64}$/m);
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});

/** x86-64 with every feature the native kernels need (as /proc/cpuinfo lists them). */
function nativeCpu(): boolean {
  if (process.arch !== 'x64') return false;
  try {
    const flags = new Set(
      /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim().split(/\s+/),
    );
    return ['sha_ni', 'avx2', 'sse4_1', 'ssse3'].every((f) => flags.has(f));
  } catch {
    return false;
  }
}

describe.skipIf(!nativeCpu())('miner bench --kernel native on first use', () => {
  test(
    'compiles the kernels into the user cache, saying so on stderr while the compiler runs',
    async () => {
      const { dir, env } = await tempHome();
      const cache = join(dir, 'cache');
      const out = await runBin({ ...env, PATH: process.env.PATH ?? '', XDG_CACHE_HOME: cache });
      expect(out.code, out.stderr).toBe(0);
      const progress = out.stderr.split('\n').filter((l) => l.startsWith('kernel: '));
      expect(progress).toHaveLength(2);
      expect(progress[0]).toMatch(
        new RegExp(
          `^kernel: building the native kernels with .+ into ${cache}/tensormine/native/[0-9a-f]+ \\(first use`,
        ),
      );
      expect(progress[1]).toMatch(/^kernel: native kernels built in \d+\.\d s$/);
      expect(out.stdout.trimEnd().split('\n').at(-1)).toBe('kernel native');
      // Then from the cache: nothing to say.
      const again = await runBin({ ...env, PATH: process.env.PATH ?? '', XDG_CACHE_HOME: cache });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toMatch(/building the native kernels/);
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});
