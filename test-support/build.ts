import { spawn } from 'node:child_process';
import { join } from 'node:path';
// The one definition of a current build (the `miner` bin's, plain JavaScript).
import { builtAndCurrent } from '../packages/cli/bin/current-build.js';

/**
 * The workspace's build for the test run's processes. The tests start validator processes (and
 * the `miner` bin starts the miner) from the build while it is current, which costs about half
 * the CPU of compiling the TypeScript sources with tsx on every start; a stale or missing build
 * is never run: such a process starts from its sources.
 *
 * `npm install` builds the miner's CLI and every workspace package it loads
 * (scripts/install-build.mjs), the validator among them; the run builds them again, once, on
 * the first test file that asks (test-support/global-setup.ts, `/build`) if a source is newer
 * than its build (an edit since) or there is none (TENSORMINE_INSTALL_BUILD=0, a failed build).
 */

const ROOT = join(import.meta.dirname, '..');

/** The packages the run's processes start from, with the file each starts. */
export const BUILT_ENTRIES = {
  cli: { dir: join(ROOT, 'packages', 'cli'), entry: join('dist', 'cli.js') },
  validator: { dir: join(ROOT, 'packages', 'validator'), entry: join('dist', 'bin.js') },
} as const;

export type BuiltPackage = keyof typeof BUILT_ENTRIES;

/** Whether the build of `name` is current (no source of it or of what it loads newer). */
export function isBuiltAndCurrent(name: BuiltPackage): boolean {
  const { dir, entry } = BUILT_ENTRIES[name];
  return builtAndCurrent(dir, entry);
}

/**
 * Builds what `npm install` builds (scripts/install-build.mjs: the CLI and the packages it
 * loads, JavaScript only) unless it is current; resolves to whether every entry is current then.
 * Never rejects: a failed build leaves the processes on their sources.
 */
export function ensureBuilt(): Promise<boolean> {
  // once per run: the vitest process loads this module once per project
  const holder = globalThis as { [BUILD]?: Promise<boolean> };
  holder[BUILD] ??= build();
  return holder[BUILD];
}

const BUILD = Symbol.for('tensormine.test-build');

async function build(): Promise<boolean> {
  const names = Object.keys(BUILT_ENTRIES) as BuiltPackage[];
  if (names.every(isBuiltAndCurrent)) return true;
  await new Promise<void>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'install-build.mjs')], {
      cwd: ROOT,
      // its one-line notes on the run's output; the build's own errors too
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, TENSORMINE_INSTALL_BUILD: '1' },
    });
    child.once('error', () => resolve());
    child.once('exit', () => resolve());
  });
  return names.every(isBuiltAndCurrent);
}
