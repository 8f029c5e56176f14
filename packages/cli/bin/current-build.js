// Whether a package's build runs the code of its sources: the one definition of a "current"
// build, for the `miner` bin (bin/miner.js: the build or the sources) and the test run
// (test-support/global-setup-build.ts: builds once what is missing or stale, and the tests start
// a validator from its build only while it is current). Plain JavaScript that any Node runs.
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The directory of an installed package, found upwards from `from`; undefined if none. */
function packageDir(name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', ...name.split('/'));
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

/** The package in `dir` and the @tensormine packages it loads, recursively: name -> directory. */
export function workspacePackages(dir, found = new Map()) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (found.has(manifest.name)) return found;
  found.set(manifest.name, dir);
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (!name.startsWith('@tensormine/')) continue;
    const depDir = packageDir(name, dir);
    if (depDir !== undefined) workspacePackages(depDir, found);
  }
  return found;
}

/** The newest modification time of the files under `dir` (0 when there are none). */
function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Whether `entry` (a file of the build, e.g. dist/cli.js) of the package in `dir` runs the code
 * of the sources: in a checkout (a package with its src/), the build of this package and of
 * every workspace package it loads is newer than each one's sources; an installed package (no
 * src/) has only its build. A few milliseconds of stat calls, against a second or more for tsx
 * to compile the sources.
 */
export function builtAndCurrent(dir, entry) {
  if (!existsSync(join(dir, entry))) return false;
  try {
    for (const pkg of workspacePackages(dir).values()) {
      const src = join(pkg, 'src');
      if (!existsSync(src)) continue;
      const out = join(pkg, 'dist');
      const builds = existsSync(out)
        ? readdirSync(out)
            .filter((name) => name.endsWith('.js'))
            .map((name) => statSync(join(out, name)).mtimeMs)
        : [];
      // The newest output is the last build: a build writes all its files at once, and files an
      // older build left behind (turbo restores a cached build without removing them) are older.
      if (builds.length === 0 || newestUnder(src) > Math.max(...builds)) return false;
    }
    return true;
  } catch {
    return false;
  }
}
