import { readdirSync, readFileSync } from 'node:fs';
import { PROCESS_START_TIMEOUT_MS } from './timeouts.ts';
import { waitFor } from './wait.ts';

/**
 * A process tree as the signal tests see it (Linux /proc): who descends from whom, who is
 * still alive, and each one's command line.
 */

/** The processes whose parent is `pid`, recursively. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Running (not gone, not a zombie). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Kills `pid` and everything below it (SIGKILL): the cleanup of a test that failed midway. */
export function killTree(pid: number): void {
  for (const p of [pid, ...descendants(pid)]) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** The processes of `tree` still running, one line each: what a failed test shows. */
export function survivors(tree: readonly number[]): string {
  return tree
    .filter(alive)
    .map((pid) => `${pid}: ${commandLine(pid)}`)
    .join('\n');
}

/**
 * Stops a process group (a program the test started with `detached: true`, and everything it
 * started): SIGTERM, then waits until no process of the group is left, SIGKILL after the bound of
 * a program's start. Waited for because a program still exiting writes into the test's
 * directories (Node's compile cache in HOME), which the test removes after this.
 */
export async function stopGroup(pgid: number): Promise<void> {
  const running = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    return; // gone
  }
  await waitFor(() => !running(), `process group ${pgid} to exit`, {
    timeoutMs: PROCESS_START_TIMEOUT_MS,
    intervalMs: 50,
  }).catch(() => {
    if (running()) process.kill(-pgid, 'SIGKILL');
  });
}
