import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

/**
 * The test run's timeline, to see where its wall time goes (docs/testing.md): with
 * `TENSORMINE_TEST_TRACE=<file>` in the environment, the global set-ups (each set-up and build,
 * the shared services' starts and stops) and every test file (its start and end, in its worker)
 * append one line each to <file>: `<ms since the epoch> <pid>.<thread> <what>`. A test file on a
 * process (or thread) no earlier file ran on started a worker of its own. Without the variable,
 * nothing is written.
 */
export function trace(what: string): void {
  const file = process.env.TENSORMINE_TEST_TRACE;
  if (file === undefined || file === '') return;
  appendFileSync(file, `${Date.now()} ${process.pid}.${threadId} ${what}\n`);
}

/** `fn()`, traced as `<what> start` and `<what> end` (also when it throws). */
export async function traced<T>(what: string, fn: () => T | Promise<T>): Promise<T> {
  trace(`${what} start`);
  try {
    return await fn();
  } finally {
    trace(`${what} end`);
  }
}
