/**
 * vitest global setup: builds the native kernels once (into the user's cache, as the miner
 * does on first use), before the test files start. A failure is left to the tests that need
 * them, which say why; the build itself is tested in native.test.ts.
 */
import { traced } from '../../../test-support/trace.ts';
import { buildNativeLibrary } from '../src/kernels/native/build.js';

export default async function setup(): Promise<void> {
  await traced('set-up native kernels', () => buildNativeLibrary().catch(() => undefined));
}
