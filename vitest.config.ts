import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * One root config; each package is a project (see vitest.shared.ts, and docs/testing.md for
 * what `npm test` covers and how to write a test here).
 *
 * Workers: one more than the cores. Many test files spend much of their time waiting on other
 * processes (a validator, tm-sim, PostgreSQL, a browser), so a core is rarely busy with one
 * file alone; vitest's default (cores - 1) left one of the two cores of a CI machine idle.
 * `--maxWorkers` on the command line overrides it.
 */
export default defineConfig({
  test: {
    projects: ['packages/*', 'firmware-sim', 'examples'],
    maxWorkers: availableParallelism() + 1,
  },
});
