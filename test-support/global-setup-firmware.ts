import { buildFirmware } from './firmware.ts';
import { trace } from './trace.ts';

/**
 * The global set-up of the projects whose tests run firmware-sim's C programs (firmware-sim,
 * serial, cli; see their vitest configs): builds them once, before any test file starts. A
 * failed build is not reported here: each test that needs the programs reports it (or, for the
 * serial end-to-end tests, says what to install), as it does without this set-up.
 */
export function setup(): void {
  trace('set-up firmware build start');
  try {
    buildFirmware();
  } catch {
    // reported by the tests that need the build
  }
  trace('set-up firmware build end');
}
