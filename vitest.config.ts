import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test-support/sequencer.ts';
import { HOOK_TIMEOUT_MS } from './test-support/timeouts.ts';
import { MAX_WORKERS } from './vitest.shared.ts';

/**
 * One root config; each package is a project (vitest.shared.ts: the workers, the time bounds,
 * the shared services; docs/testing.md: what `npm test` covers and how to write a test here).
 */
export default defineConfig({
  test: {
    projects: ['packages/*', 'firmware-sim', 'examples'],
    maxWorkers: MAX_WORKERS,
    // the global set-ups' teardown: stopping the run's PostgreSQL server and browser
    teardownTimeout: HOOK_TIMEOUT_MS,
    // the longest files first, across projects (test-support/sequencer.ts)
    sequence: { sequencer: LongestFirstSequencer },
  },
});
