/**
 * The engine from a build: the workers must start from dist/worker.js, not from source. The
 * package is bundled with tsup as `npm run build` does (same entries), into a temporary
 * directory, with @tensormine/protocol bundled in so that the test needs no other build; a
 * child Node process then mines a block with it.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'tsup';
import { expect, test } from 'vitest';
import { WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';

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
    const child = `
      const m = await import(${JSON.stringify(`file://${join(outDir, 'index.js')}`)});
      const engine = new m.MiningEngine({ threads: 2 });
      await engine.start();
      const found = new Promise((resolve) => engine.once('found', resolve));
      const job = m.benchJobs(2 ** 20, 0)[0].job;
      engine.setJob({ ...job, stopOnFound: true });
      const result = await found;
      await engine.stop();
      console.log(JSON.stringify({ id: result.id, kind: result.kind, errors: engine.kernelErrors }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', child], {
      cwd: root,
      timeout: WAIT_TIMEOUT_MS,
    });
    const out = JSON.parse(stdout.trim()) as { id: string; kind: string; errors: number };
    expect(out.kind).toBe('hexchain');
    expect(out.id).toMatch(/^bench-hexchain\/\d+$/);
    expect(out.errors).toBe(0);
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
});
