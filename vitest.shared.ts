import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { HOOK_TIMEOUT_MS, TEST_TIMEOUT_MS } from './test-support/timeouts.ts';

const ROOT = import.meta.dirname;
const SUPPORT = join(ROOT, 'test-support');

/**
 * Test files at once: two more than the cores. Many test files spend much of their time waiting
 * on other processes (a validator, tm-sim, PostgreSQL, a browser, miners), so a core is rarely
 * busy with one file alone; vitest's default (cores - 1) left one of the two cores of a CI machine
 * idle, and with one more than the cores a quiet 2-core run still left 52 s of core time idle
 * (two more: 15 s, the same CPU; docs/benchmarks.md, "The test suite").
 * Every project has the same number (vitest runs projects with one number as one group, sharing
 * the workers); `--maxWorkers` on the command line overrides it.
 */
export const MAX_WORKERS = availableParallelism() + 2;

export interface ProjectOptions {
  /**
   * The project's tests run firmware-sim's C programs: they are built once before the run
   * (test-support/global-setup-firmware.ts).
   */
  readonly firmware?: boolean;
  /**
   * The project's tests start the `miner` bin: the CLI's build is made once before the run if it
   * is missing or stale (test-support/global-setup-build.ts).
   */
  readonly build?: boolean;
}

/**
 * The vitest project of a workspace package (`dir`, from the repository's root), declared inline
 * in the root config (vitest.config.ts). Workspace dependencies resolve to their TypeScript
 * sources (`@tensormine/source` export condition, set in the root config), so tests need no build.
 *
 * A project sets `test` options only, none that changes the Vite config (no `root`, `resolve`,
 * plugins...): so every project shares the root config's Vite server (vitest's
 * `sharedViteServer`), and each module is transformed once per run and kept once in vitest's
 * module cache (`node_modules/.vitest-cache`), not once per project that loads it (13 servers
 * transformed the protocol's sources up to 11 times on a fresh clone; docs/benchmarks.md).
 *
 * Every project gets the suite's time bounds (test-support/timeouts.ts: the one place they
 * live), the run's shared services (test-support/global-setup.ts: one PostgreSQL server and one
 * browser per run, started on first use) and the per-file clean-ups of the shared helpers
 * (test-support/setup-file.ts). A project's own `test` options come last; a timeout is not one
 * of them. A project's own `globalSetup` (paths from its directory) runs after the shared ones
 * (it adds to them, it does not replace them).
 */
export function packageProject(
  dir: string,
  name: string,
  test: NonNullable<TestProjectInlineConfiguration['test']> = {},
  options: ProjectOptions = {},
): TestProjectInlineConfiguration {
  const { globalSetup: ownGlobalSetup = [], ...own } = test;
  const projectDir = join(ROOT, dir);
  return {
    test: {
      name,
      dir: projectDir,
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      maxWorkers: MAX_WORKERS,
      testTimeout: TEST_TIMEOUT_MS,
      hookTimeout: HOOK_TIMEOUT_MS,
      globalSetup: [
        join(SUPPORT, 'global-setup.ts'),
        ...(options.firmware ? [join(SUPPORT, 'global-setup-firmware.ts')] : []),
        ...(options.build ? [join(SUPPORT, 'global-setup-build.ts')] : []),
        ...(Array.isArray(ownGlobalSetup) ? ownGlobalSetup : [ownGlobalSetup]).map((file) =>
          resolve(projectDir, file),
        ),
      ],
      setupFiles: [join(SUPPORT, 'setup-file.ts')],
      ...own,
    },
  };
}
