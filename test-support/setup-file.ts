import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { runCleanUps } from './cleanup.ts';
import { trace } from './trace.ts';

/**
 * Runs before every test file of every project (vitest.shared.ts `setupFiles`): the shared
 * helpers' clean-ups (test-support/cleanup.ts) after each test and after the file; the file's
 * start and end on the run's timeline (test-support/trace.ts, with TENSORMINE_TEST_TRACE).
 */
const testFile = () => expect.getState().testPath ?? 'an unknown file';
beforeAll(() => trace(`file start ${testFile()}`));
afterEach(() => runCleanUps('test'));
afterAll(async () => {
  try {
    await runCleanUps('file');
  } finally {
    trace(`file end ${testFile()}`);
  }
});
