/**
 * Clean-ups that shared test helpers register once, run after every test or every file.
 *
 * A helper module must not call vitest's `afterEach` / `afterAll` at its top level: where test
 * files share a worker without isolation (`isolate: false`, vitest.shared.ts), a helper module
 * is evaluated once per worker, so its top-level hooks would apply to the first file that
 * imported it and to no other. A helper registers its clean-up here instead; the per-file set-up
 * (test-support/setup-file.ts, in every project's `setupFiles`) runs them after each test and
 * after each file. A test file's own hooks are unaffected: it is evaluated for every run.
 */
type CleanUp = () => unknown;

interface Registry {
  readonly test: Set<CleanUp>;
  readonly file: Set<CleanUp>;
}

// Module state: the helpers and the per-file set-up share this module's one instance in a
// worker (or in a file, where files are isolated).
const registered: Registry = { test: new Set(), file: new Set() };

function registry(): Registry {
  return registered;
}

/** Runs `fn` after every test of every file (in the order registered). */
export function afterEachTest(fn: CleanUp): void {
  registry().test.add(fn);
}

/** Runs `fn` after every test file, after its tests and hooks. */
export function afterEachFile(fn: CleanUp): void {
  registry().file.add(fn);
}

/** Runs the clean-ups of `scope` (test-support/setup-file.ts calls it); throws the first failure after running all. */
export async function runCleanUps(scope: keyof Registry): Promise<void> {
  const errors: unknown[] = [];
  for (const fn of registry()[scope]) {
    try {
      await fn();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} clean-ups failed`);
}
