/**
 * Runs every example in this folder, one after another, and fails if any fails, so that the
 * examples cannot rot (CI runs `npm run examples`).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const examples = readdirSync(here)
  // *.test.ts files are vitest tests (npm test, the root vitest.config.ts): not scripts.
  .filter((f) => f.endsWith('.ts') && f !== 'run-all.ts' && !f.endsWith('.test.ts'))
  .sort();
let failed = 0;
for (const file of examples) {
  console.log(`\n=== examples/${file}`);
  const run = spawnSync(
    process.execPath,
    ['--conditions=@tensormine/source', '--import', 'tsx', join(here, file)],
    {
      stdio: 'inherit',
      env: { ...process.env, DIFFICULTY: process.env.DIFFICULTY ?? '4' },
    },
  );
  if (run.status !== 0) {
    failed++;
    console.error(`examples/${file} failed with status ${run.status}`);
  }
}
console.log(`\nexamples: ${examples.length} run, ${failed} failing`);
process.exit(failed > 0 ? 1 : 0);
