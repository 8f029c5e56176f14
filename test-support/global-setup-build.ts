import { ensureBuilt } from './build.ts';
import { traced } from './trace.ts';

/**
 * The global set-up of the projects whose tests start the `miner` bin (cli, terminal; see their
 * vitest configs): builds the CLI and the packages it loads once, before any test file starts,
 * if the build is missing or stale (test-support/build.ts), so that every miner the tests start
 * runs the build instead of compiling the sources with tsx. A failed build leaves them on their
 * sources (bin/miner.js never runs a stale build).
 */
export async function setup(): Promise<void> {
  await traced('set-up build', ensureBuilt);
}
