/**
 * `--kernel native` where the native kernels cannot run, as users run the miner (bin/miner.js
 * in a process of its own): on a machine without a C compiler (PATH without one, CC unset)
 * and on a CPU without SHA-NI (TENSORMINE_CPU_MASK), `miner bench` says why in one line and
 * mines with WebAssembly, with the checksum every kernel gives.
 */
import { execFile } from 'node:child_process';
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
