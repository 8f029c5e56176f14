/**
 * The TUI in a real terminal: `npx miner mine --local` in a pseudo-terminal (util-linux
 * `script`), a tiny difficulty so that blocks come at once; it must show an accepted result,
 * then quit on q with exit code 0. And, typed into an interactive shell, it must stop when npx
 * is sent SIGTERM or SIGHUP, leaving no miner behind.
 */
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { expect, test } from 'vitest';
import { alive, commandLine, descendants, killTree, survivors } from '../../../test-support/process-tree.ts';
import {
  PROCESS_START_TIMEOUT_MS,
  SLOW_TEST_TIMEOUT_MS,
  WAIT_TIMEOUT_MS,
} from '../../../test-support/timeouts.ts';
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
    // 'close', not 'exit': the output read after the process ended is on the screen by then.
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
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

test.skipIf(!hasScript)(
  'typed into an interactive shell, npx miner mine with the live screen stops on SIGTERM or SIGHUP to npx, leaving no orphan',
  async () => {
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      const { env } = await tempHome();
      // bash with job control: npx runs in a process group of its own, in the foreground; once
      // npx is gone, bash takes the terminal back and the miner's group is an orphaned
      // background group, refused terminal settings (EIO). The miner then printed "stopped"
      // and lived on with PPID 1.
      const shell = spawn('script', ['-qec', 'bash --norc --noprofile -i', '/dev/null'], {
        cwd: root,
        env: { ...process.env, ...env, PS1: '$ ', TENSORMINE_HEX_DIFFICULTY: '4096', CI: '' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      cleanup(() => killTree(shell.pid!));
      let screen = '';
      shell.stdout.on('data', (chunk: Buffer) => {
        screen += chunk.toString();
      });
      const exited = new Promise<number | null>((resolve) => shell.on('exit', (code) => resolve(code)));
      const text = () => stripVTControlCharacters(screen);
      shell.stdin.write('stty cols 100 rows 30; npx miner mine --local --threads 1\n');
      await waitFor(
        () => /accepted \(\d+\/0\) diff/.test(text()),
        'an accepted result',
        PROCESS_START_TIMEOUT_MS,
        text,
      );
      const tree = descendants(shell.pid!);
      const npx = tree.find((pid) => commandLine(pid).startsWith('npm exec miner'));
      const miner = tree.find((pid) => / \S*\/\.bin\/miner mine/.test(commandLine(pid)));
      expect(npx, survivors(tree)).toBeDefined();
      expect(miner, survivors(tree)).toBeDefined();
      const below = [npx!, ...descendants(npx!)];
      process.kill(npx!, signal);
      await waitFor(
        () => !below.some(alive),
        `every process from npx down to exit (${signal})`,
        WAIT_TIMEOUT_MS,
        () => survivors(below),
      );
      // The processes are gone; their last output may still be on its way through the terminal.
      await waitFor(
        () => /\d\d:\d\d:\d\d stopped\r?\n/.test(text()),
        `the miner's "stopped" line (${signal})`,
        WAIT_TIMEOUT_MS,
        text,
      );
      expect(text(), signal).not.toContain('ERROR');
      shell.stdin.write('exit 0\n');
      expect(await exited).toBe(0);
    }
  },
  SLOW_TEST_TIMEOUT_MS,
);
