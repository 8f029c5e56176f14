import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

/**
 * The C builds the tests run (firmware-sim's host programs: tm-sim, the simulated board;
 * tm-vectors; tm-selftest), built once before the run by the global set-up of the projects that
 * use them (test-support/global-setup-firmware.ts), so that test files never compile in
 * parallel. A test file still calls `buildFirmware()` before it uses them: then `make` finds
 * everything up to date (a few milliseconds), or builds what a C change made stale, and a
 * machine without a C compiler gets the compiler's own error at the test that needs it.
 */
export const FIRMWARE_DIR = join(import.meta.dirname, '..', 'firmware-sim');
export const FIRMWARE_BUILD_DIR = join(FIRMWARE_DIR, 'build');
/** The simulated board. */
export const TM_SIM = join(FIRMWARE_BUILD_DIR, 'tm-sim');

let built = false;

/**
 * `make -s -j<cores> all` in firmware-sim (once per process); throws make's output when it
 * fails. The Makefile writes every output to a temporary file renamed into place, so parallel
 * jobs (and makes of other processes at once) never see a half-written file; on a fresh clone the
 * build is about 7 s of CPU, which one job left on one core while the run's start waited for it.
 */
export function buildFirmware(): void {
  if (built) return;
  try {
    execFileSync('make', ['-s', `-j${availableParallelism()}`, 'all'], {
      cwd: FIRMWARE_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const { stdout, stderr, message } = error as { stdout?: Buffer; stderr?: Buffer; message: string };
    throw new Error(
      `could not build firmware-sim (make -C firmware-sim; it needs make, a C compiler and the zlib headers: apt-get install make gcc zlib1g-dev): ${message}\n${stdout ?? ''}${stderr ?? ''}`,
    );
  }
  built = true;
}
