import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFirmware } from '../../test-support/firmware.ts';

/** The firmware-sim package directory and its host build output. */
export const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const buildDir = join(packageDir, 'build');

/**
 * Builds the C core and its host programs (`make`; a no-op when they are up to date, as they
 * are after the run's global set-up built them: test-support/firmware.ts).
 */
export function buildCore(): void {
  buildFirmware();
}

/**
 * Runs build/tm-vectors on the given command lines (see host/tm_vectors.c) and returns its
 * output, one line per command.
 */
export function runVectors(lines: readonly string[]): string[] {
  const result = spawnSync(join(buildDir, 'tm-vectors'), {
    input: `${lines.join('\n')}\n`,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`tm-vectors exited with ${result.status}: ${result.stderr}`);
  const out = result.stdout.split('\n');
  out.pop(); // after the last newline
  if (out.length !== lines.length) {
    throw new Error(`tm-vectors answered ${out.length} lines to ${lines.length} commands`);
  }
  return out;
}

/** Runs one command. */
export function runVector(line: string): string {
  return runVectors([line])[0]!;
}
