#!/usr/bin/env node
// Run by `npm install` (the root's postinstall, after install-note.mjs): builds the miner's CLI
// and the workspace packages it loads (turbo, `--filter=@tensormine/cli...`), so that `npx miner`
// starts from the built files (well under a second of CPU) instead of compiling its TypeScript
// sources with tsx on every start. packages/cli/bin/miner.js runs the build only while it is
// current (no source newer than it), so editing a source and running `npx miner` or the tests
// never runs stale code: nothing else about the no-build workflow changes.
//
// Never fails the install: if the build cannot run, it says so in one line and the miner starts
// from its sources. TENSORMINE_INSTALL_BUILD=0 skips it. Plain JavaScript that any Node runs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

if (process.env.TENSORMINE_INSTALL_BUILD === '0') process.exit(0);
// Installed as a dependency of something else (no workspace here): nothing to build.
if (!existsSync(join(root, 'packages', 'cli', 'src'))) process.exit(0);

const turbo = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'turbo.cmd' : 'turbo');
if (!existsSync(turbo)) {
  console.log('note: turbo is not installed, so the miner was not built: npx miner starts from its sources');
  process.exit(0);
}

console.log(
  'building the miner and the packages it loads, so that npx miner starts fast (npm run build builds everything)',
);
const started = Date.now();
const result = spawnSync(
  turbo,
  ['run', 'build', '--filter=@tensormine/cli...', '--output-logs=errors-only', '--log-prefix=none'],
  {
    cwd: root,
    stdio: 'inherit',
    shell: process.platform === 'win32',
    // The JavaScript only: the declarations are for `npm run build` (tsup.config.base.ts).
    env: { ...process.env, TENSORMINE_BUILD_DTS: '0', TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' },
  },
);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (result.status === 0) {
  console.log(`built in ${seconds} s`);
} else {
  console.log(
    `note: the build did not finish (${result.error?.message ?? `exit ${result.status ?? result.signal}`}): npx miner starts from its sources (slower); npm run build retries`,
  );
}
