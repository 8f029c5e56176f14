/**
 * The smoke test of the TUI in a real terminal: `npx miner mine --local` in a pseudo-terminal
 * (util-linux `script`), a tiny difficulty so that blocks come at once; it must show an
 * accepted result, then quit on q with exit code 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { expect, test } from 'vitest';
import { PROCESS_START_TIMEOUT_MS, SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { cleanup, tempHome, waitFor } from './helpers.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

test.skipIf(!hasScript)(
  'miner mine --local in a terminal shows accepted results and quits on q',
  async () => {
    const { env } = await tempHome();
    const child = spawn(
      'script',
      ['-qec', 'stty cols 100 rows 30; npx miner mine --local --threads 1', '/dev/null'],
      {
        cwd: root,
        env: { ...process.env, ...env, TENSORMINE_HEX_DIFFICULTY: '4096', CI: '' },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    // Closing script's terminal hangs up the miner (SIGHUP), which stops it cleanly.
    cleanup(() => child.kill('SIGKILL'));
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const text = () => stripVTControlCharacters(screen);
    await waitFor(
      () => /accepted \(\d+\/0\) diff/.test(text()),
      'an accepted result',
      PROCESS_START_TIMEOUT_MS,
      text,
    );
    expect(text()).toContain('keys: h hashrate p pause r resume s results c connection q quit');
    expect(text()).toMatch(/ \* validator {2}http:\/\/127\.0\.0\.1:\d+ \(local, in this process; data in\s/);
    child.stdin.write('q');
    expect(await exited).toBe(0);
    expect(text()).toContain('stopping: workers, boards, journal');
    // The last frame on the terminal says it stopped (the journal flushed), not "stopping".
    expect(text()).toMatch(/\d\d:\d\d:\d\d stopped\r?\n/);
    expect(text().slice(text().lastIndexOf('STOPP'))).toMatch(/^STOPPED/);
  },
  SLOW_TEST_TIMEOUT_MS,
);
