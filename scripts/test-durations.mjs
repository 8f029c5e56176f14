#!/usr/bin/env node
// `npm run test:durations`: writes test-support/test-durations.json, each test file's duration in
// the last `npm test` of this checkout (vitest's cache of it: node_modules/.vite/vitest/*/
// results.json), in seconds. The sequencer (test-support/sequencer.ts) orders a run without that
// cache (a fresh clone, CI) by these durations: the longest files first, so that no long file
// starts late and runs alone at the end. Run it after a whole `npm test` on a quiet machine (a
// fresh clone's first run is the one that matters: its durations are what such a run pays) and
// commit the file with the tests that changed. `npm run test:durations -- <dir>` reads the cache
// of the checkout in <dir> instead (e.g. a fresh clone that ran `npm test`). Plain JavaScript
// that any Node runs.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = join(import.meta.dirname, '..');
const from = resolve(process.argv[2] ?? root);
const cacheDir = join(from, 'node_modules', '.vite', 'vitest');
const out = join(root, 'test-support', 'test-durations.json');

const seconds = {};
const runs = new Set();
for (const hash of existsSync(cacheDir) ? readdirSync(cacheDir) : []) {
  const file = join(cacheDir, hash, 'results.json');
  if (!existsSync(file)) continue;
  const { projects = {} } = JSON.parse(readFileSync(file, 'utf8'));
  for (const { files = {} } of Object.values(projects)) {
    for (const [path, result] of Object.entries(files)) {
      if (typeof result?.duration !== 'number') continue;
      seconds[path] = Math.round(result.duration / 100) / 10;
      if (typeof result.lastRun === 'number') runs.add(result.lastRun);
    }
  }
}

const paths = Object.keys(seconds).sort();
if (paths.length === 0) {
  console.error(`no test durations in ${cacheDir}: run the whole npm test first`);
  process.exit(1);
}
if (runs.size > 1) {
  console.warn(
    `note: the durations come from ${runs.size} runs (a targeted vitest run since the last whole npm test?): only a whole run's are comparable`,
  );
}
const sorted = Object.fromEntries(paths.map((path) => [path, seconds[path]]));
writeFileSync(out, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`wrote ${paths.length} test files' durations to test-support/test-durations.json`);
