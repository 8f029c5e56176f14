import { afterAll, afterEach } from 'vitest';
import { runCleanUps } from './cleanup.ts';

/**
 * Runs before every test file of every project (vitest.shared.ts `setupFiles`): the shared
 * helpers' clean-ups (test-support/cleanup.ts) after each test and after the file.
 */
afterEach(() => runCleanUps('test'));
afterAll(() => runCleanUps('file'));
