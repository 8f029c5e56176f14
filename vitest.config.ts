import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test-support/sequencer.ts';
import { HOOK_TIMEOUT_MS } from './test-support/timeouts.ts';
import { MAX_WORKERS, packageProject } from './vitest.shared.ts';

/**
 * One root config; each package is a project, declared here (vitest.shared.ts: the workers, the
 * time bounds, the shared services, and why the projects share this config's Vite server;
 * docs/testing.md: what `npm test` covers and how to write a test here). Every project's test
 * files are independent of each other: they share workers (`isolate: false`,
 * test-support/cleanup.ts).
 */
export default defineConfig({
  // workspace dependencies resolve to their TypeScript sources: tests need no build
  resolve: { conditions: ['@tensormine/source'] },
  ssr: { resolve: { conditions: ['@tensormine/source'] } },
  test: {
    projects: [
      packageProject('packages/protocol', 'protocol', { isolate: false }),
      packageProject('packages/service-kit', 'service-kit', { isolate: false }),
      packageProject('packages/client', 'client', { isolate: false }),
      packageProject('packages/validator', 'validator', { isolate: false }),
      // test/native-setup.ts builds the native kernels into the user's cache once, before the
      // test files (which run in parallel) would each compile them. What a file installs in its
      // thread (the native kernels, by selectKernel) is an input the tests give explicitly where
      // they check the choice (kernelFor), not a state they assume.
      packageProject('packages/miner', 'miner', { isolate: false, globalSetup: ['test/native-setup.ts'] }),
      packageProject('packages/wasm-gen', 'wasm-gen', { isolate: false }),
      packageProject('packages/serial', 'serial', { isolate: false }, { firmware: true }),
      packageProject('packages/status-proxy', 'status-proxy', { isolate: false }),
      packageProject('packages/hub', 'hub', { isolate: false }),
      // docs-trial.test.ts runs the doc's `npx miner` commands: the CLI's build is made once if stale.
      packageProject('packages/terminal', 'terminal', { isolate: false }, { build: true }),
      // The miner's global setup builds the native kernels into the user's cache once, before
      // the test files start: the miners these tests start (in process, or as processes whose
      // XDG_CACHE_HOME is that cache, test/helpers.ts) then load them instead of each compiling
      // them; the miners they start run the CLI's build, made once if it is missing or stale.
      packageProject(
        'packages/cli',
        'cli',
        {
          isolate: false,
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
          globalSetup: ['../miner/test/native-setup.ts'],
        },
        { firmware: true, build: true },
      ),
      packageProject('firmware-sim', 'firmware-sim', { isolate: false }, { firmware: true }),
      // The examples that are tests (`*.test.ts`) run with `npm test`; the scripts run with
      // `npm run examples`.
      packageProject('examples', 'examples', { include: ['*.test.ts'], isolate: false }),
    ],
    maxWorkers: MAX_WORKERS,
    // the global set-ups' teardown: stopping the run's PostgreSQL server and browser
    teardownTimeout: HOOK_TIMEOUT_MS,
    // the longest files first, across projects (test-support/sequencer.ts)
    sequence: { sequencer: LongestFirstSequencer },
  },
});
