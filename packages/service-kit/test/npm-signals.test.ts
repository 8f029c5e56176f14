/**
 * How a program started by npm tells that npm or its `sh -c` was sent a stop signal they do
 * not pass on: the logic over a fake /proc (real process trees: the cli's signals.test.ts and
 * the validator's bin-signals.test.ts).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, onTestFinished, test } from 'vitest';
import { descendants, killTree } from '../../../test-support/process-tree.ts';
import { waitFor } from '../../../test-support/wait.ts';
import {
  ancestors,
  launchers,
  npmShell,
  type ProcReader,
  procfs,
  watchAncestors,
} from '../src/npm-signals.js';

/** A /proc file's text, trimmed (undefined once the process is gone). */
function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** npm (10) -> sh -c (20) -> miner (30). */
function fakeProc(): ProcReader & { wakes: number; gone: Set<number> } {
  const parents: Record<number, number> = { 30: 20, 20: 10, 10: 1 };
  const argv: Record<number, string[]> = {
    10: ['npm exec miner mine'],
    20: ['sh', '-c', "'miner' mine --local"],
    30: ['node', '/repo/node_modules/.bin/miner', 'mine'],
  };
  const fake = {
    wakes: 2,
    gone: new Set<number>(),
    parent: (pid: number) => (fake.gone.has(pid) ? undefined : parents[pid]),
    commandLine: (pid: number) => (fake.gone.has(pid) ? undefined : argv[pid]),
    wakeUps: (pid: number) => (pid === 20 && !fake.gone.has(20) ? fake.wakes : undefined),
  };
  return fake;
}

describe('the processes that started a program', () => {
  test('finds the ancestors and the sh -c shell npm runs it under', () => {
    const proc = fakeProc();
    expect(ancestors(30, 2, proc)).toEqual([20, 10]);
    expect(ancestors(30, 5, proc)).toEqual([20, 10]);
    expect(npmShell(30, 3, proc)).toBe(20);
    expect(npmShell(20, 3, proc)).toBeUndefined();
    // Watched: up to the shell, and npm; without a shell, the parent only.
    expect(launchers(30, 20, proc)).toEqual([20, 10]);
    expect(launchers(30, undefined, proc)).toEqual([20]);
  });

  test('a sh -c that npm did not start (tmux, a script) is not watched for wake-ups', () => {
    const proc = fakeProc();
    const npmArgv = proc.commandLine;
    proc.commandLine = (pid) => (pid === 10 ? ['tmux', 'new-session'] : npmArgv(pid));
    expect(npmShell(30, 3, proc)).toBeUndefined();
    // npm's own script file names it too (before it sets its title).
    proc.commandLine = (pid) =>
      pid === 10 ? ['/usr/bin/node', '/usr/lib/node_modules/npm/bin/npm-cli.js', 'start'] : npmArgv(pid);
    expect(npmShell(30, 3, proc)).toBe(20);
  });

  test('a wake-up of the waiting shell is a SIGINT, confirmed at the next poll', () => {
    const proc = fakeProc();
    const alive = (pid: number) => !proc.gone.has(pid);
    const watch = watchAncestors([20, 10], 20, proc, alive);
    expect(watch.poll(1000)).toBeUndefined();
    expect(watch.poll(1500)).toBeUndefined();
    proc.wakes += 1;
    expect(watch.poll(2000)).toBeUndefined();
    expect(watch.poll(2500)).toBe('SIGINT');
  });

  test('a wake-up explained by this process being stopped and continued is not', () => {
    const proc = fakeProc();
    const watch = watchAncestors([20, 10], 20, proc, () => true);
    // Stopped (the shell wakes), continued (it wakes again; SIGCONT here).
    proc.wakes += 2;
    watch.continued(1900);
    expect(watch.poll(2000)).toBeUndefined();
    expect(watch.poll(2500)).toBeUndefined();
    // The SIGCONT reaches the event loop after the poll that saw the wake-up.
    proc.wakes += 1;
    expect(watch.poll(10_000)).toBeUndefined();
    watch.continued(10_100);
    expect(watch.poll(10_500)).toBeUndefined();
    // Much later, a real SIGINT.
    proc.wakes += 1;
    expect(watch.poll(20_000)).toBeUndefined();
    expect(watch.poll(20_500)).toBe('SIGINT');
  });

  test('npm gone with its shell waiting is a SIGHUP', () => {
    const proc = fakeProc();
    const watch = watchAncestors([20, 10], 20, proc, (pid) => !proc.gone.has(pid));
    expect(watch.poll(1000)).toBeUndefined();
    proc.gone.add(10);
    expect(watch.poll(1500)).toBe('SIGHUP');
  });

  test('the shell gone is the SIGTERM npm passed on to it, whether npm is gone yet or not', () => {
    for (const gone of [[20], [20, 10]]) {
      const proc = fakeProc();
      const watch = watchAncestors([20, 10], 20, proc, (pid) => !proc.gone.has(pid));
      expect(watch.poll(1000)).toBeUndefined();
      for (const pid of gone) proc.gone.add(pid);
      expect(watch.poll(1500)).toBe('SIGTERM');
    }
  });

  test.runIf(process.platform === 'linux')(
    '/proc: a shell waiting on its command wakes on SIGINT, not on SIGWINCH',
    async () => {
      const sh = spawn('sh', ['-c', 'sleep 30; true'], { stdio: 'ignore' });
      onTestFinished(() => killTree(sh.pid!));
      // The shell waits for its command (sleep): asleep in the kernel's wait for a child.
      await waitFor(
        () =>
          procfs.commandLine(sh.pid!)?.[0] === 'sh' &&
          descendants(sh.pid!).length === 1 &&
          readProc(`/proc/${sh.pid}/wchan`) === 'do_wait',
        'the shell waiting on its command',
      );
      const before = procfs.wakeUps(sh.pid!)!;
      // An ignored signal is discarded when sent: the shell is not woken (a window to see it
      // wake, were it woken: a slow machine can only make a wake show later, never invent one).
      process.kill(sh.pid!, 'SIGWINCH');
      await new Promise((r) => setTimeout(r, 300));
      expect(procfs.wakeUps(sh.pid!)).toBe(before);
      process.kill(sh.pid!, 'SIGINT');
      await waitFor(() => procfs.wakeUps(sh.pid!) !== before, 'the shell woken by SIGINT');
      expect(procfs.wakeUps(sh.pid!)).toBe(before + 1);
      // The shell is still waiting on its command: it did not pass the signal on or act on it.
      expect(sh.exitCode).toBeNull();
    },
  );
});
