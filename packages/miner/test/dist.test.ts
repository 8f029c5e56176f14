/**
 * The engine from a build: the workers must start from dist/worker.js, not from source. The
 * package is bundled with tsup as `npm run build` does (same entries), into a temporary
 * directory, with @tensormine/protocol bundled in so that the test needs no other build; a
 * child Node process then mines a block with it. The C sources of the native kernels are
 * copied into the build as the package build does (dist/c), so the child builds (or finds in
 * the cache) and checks the native kernels from there, and its workers load them; a tensor
 * solution is checked in its worker with the reference, loaded from the build too.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'tsup';
import { expect, test } from 'vitest';
import { WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { copyNativeSources } from '../src/kernels/native/build.js';
import { missingCpuFlags } from '../src/kernels/native/cpu.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

test('workers load from the built worker.js', async () => {
  // Under the package, so that the bundle's imports (typebox, @noble) resolve from node_modules.
  const outDir = join(root, 'node_modules', '.dist-test');
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  try {
    await build({
      config: false,
      entry: { index: join(root, 'src/index.ts'), worker: join(root, 'src/worker/entry.ts') },
      outDir,
      format: ['esm'],
      platform: 'node',
      target: 'node22',
      splitting: true,
      dts: false,
      silent: true,
      noExternal: ['@tensormine/protocol'],
      esbuildOptions(options) {
        options.conditions = ['@tensormine/source'];
      },
    });
    copyNativeSources(outDir);
    const child = `
      const m = await import(${JSON.stringify(`file://${join(outDir, 'index.js')}`)});
      const engine = new m.MiningEngine({ threads: 2 });
      await engine.start();
      const kernel = engine.kernel;
      const notice = engine.kernelSelection.notice;
      const found = new Promise((resolve) => engine.once('found', resolve));
      const job = m.benchJobs(2 ** 20, 0)[0].job;
      engine.setJob({ ...job, stopOnFound: true });
      const result = await found;
      // A tensor solution: its worker loads the reference (the bundled protocol) to check it.
      const tensorFound = new Promise((resolve) => engine.once('found', resolve));
      const tensor = m.benchJobs(0, 4096).find((j) => j.name.startsWith('tensor esp8266')).job;
      engine.setJob({ ...tensor, stopOnFound: true });
      const solution = await tensorFound;
      await engine.stop();
      console.log(JSON.stringify({ id: result.id, kind: result.kind, tensor: solution.kind, errors: engine.kernelErrors, kernel, notice }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', child], {
      cwd: root,
      timeout: WAIT_TIMEOUT_MS,
    });
    const out = JSON.parse(stdout.trim()) as {
      id: string;
      kind: string;
      tensor: string;
      errors: number;
      kernel: string;
      notice?: string;
    };
    // On x86-64 with SHA-NI and AVX2 (and a C compiler, which CI has) the built package runs
    // the native kernels; elsewhere it says why not.
    const native = process.arch === 'x64' && missingCpuFlags({})?.length === 0;
    expect(out.kernel, out.notice).toBe(native ? 'native' : 'wasm');
    expect(out.kind).toBe('hexchain');
    expect(out.tensor).toBe('tensor');
    expect(out.id).toMatch(/^bench-hexchain\/\d+$/);
    expect(out.errors).toBe(0);
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
});
