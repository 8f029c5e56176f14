/**
 * The npm-signal watcher: the stop signals that npm never passes on. Started by npm (`npx miner`,
 * `npm start -w ...`), a program runs under `npm -> sh -c '<command>' -> program` (with tsx in
 * between for a service run from its sources). npm forwards SIGINT and SIGTERM only to that
 * shell (by pid, not to the process group), and the shell does not pass them on:
 *
 *   * SIGTERM and SIGHUP kill the shell (or npm), and the program, orphaned, would run on: it
 *     stops when it sees a process between it and npm, or npm, gone (the shell gone: npm passed
 *     it a SIGTERM; npm gone and the shell alive: npm died of a SIGHUP, which it does not pass).
 *   * SIGINT does not even kill the shell: a non-interactive `sh -c` that waits for a
 *     foreground command CATCHES SIGINT and acts on it only after that command has exited
 *     (strace: the signal arrives, the shell's wait4 is restarted, nothing reaches the
 *     program). Debian's dash does not `exec` the last command of `-c` either, so the shell
 *     stays in between.
 *
 * The shell blocks in wait4 for the whole run; the kernel wakes it only for a signal it catches
 * (SIGINT; SIGWINCH and other ignored signals are dropped before delivery) or a state change
 * of its child (the program stopped or continued, which it sees as SIGCONT). Each wake-up is
 * one more voluntary context switch in /proc/<shell>/status. So a wake-up of the waiting shell
 * that is not explained by a SIGCONT here is a SIGINT to npm or to the shell, and the program
 * stops as if it had received it. Linux only (/proc); elsewhere signal the program itself.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/** What /proc says about a process; undefined when it is gone or unreadable. */
export interface ProcReader {
  parent(pid: number): number | undefined;
  /** argv of the process. */
  commandLine(pid: number): string[] | undefined;
  /** Voluntary context switches so far (each wake-up of a sleeping process adds one). */
  wakeUps(pid: number): number | undefined;
}

export const procfs: ProcReader = {
  parent(pid) {
    const stat = read(`/proc/${pid}/stat`);
    if (stat === undefined) return undefined;
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  },
  commandLine(pid) {
    const line = read(`/proc/${pid}/cmdline`);
    return line === undefined ? undefined : line.split('\0').filter((a) => a !== '');
  },
  wakeUps(pid) {
    const match = read(`/proc/${pid}/status`)?.match(/^voluntary_ctxt_switches:\s+(\d+)$/m);
    return match ? Number(match[1]) : undefined;
  },
};

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const SHELLS = new Set(['sh', 'dash', 'bash', 'ash', 'ksh', 'mksh', 'zsh']);

/** The processes above `pid`, nearest first (up to `depth`, stopping at init). */
export function ancestors(pid: number, depth: number, proc: ProcReader = procfs): number[] {
  const out: number[] = [];
  for (let p = proc.parent(pid); p !== undefined && p > 1 && out.length < depth; p = proc.parent(p)) {
    out.push(p);
  }
  return out;
}

/**
 * The nearest ancestor that is the `sh -c` shell npm runs a bin or script with (its parent is
 * npm), if any within `depth`.
 */
export function npmShell(pid: number, depth = 4, proc: ProcReader = procfs): number | undefined {
  return ancestors(pid, depth, proc).find((p) => {
    const argv = proc.commandLine(p);
    if (argv === undefined || !SHELLS.has(basename(argv[0] ?? '')) || argv[1] !== '-c') return false;
    const parent = proc.parent(p);
    return parent !== undefined && isNpm(proc.commandLine(parent));
  });
}

/** npm names its process `npm <command> ...` (process.title); else its script is npm-cli.js. */
function isNpm(argv: string[] | undefined): boolean {
  if (argv === undefined) return false;
  return /^npm(\s|$)/.test(argv[0] ?? '') || argv.some((a) => /[\\/]npm-cli\.js$/.test(a));
}

/** Why a program started by npm stops: the signal npm was sent, as far as it can be told. */
export type LauncherStop = 'SIGHUP' | 'SIGINT' | 'SIGTERM';

export interface AncestorWatch {
  /** Called on each SIGCONT this process receives (it was stopped: its shell woke for that). */
  continued(now?: number): void;
  /** One poll; returns why to stop, if the miner should. */
  poll(now: number): LauncherStop | undefined;
}

/**
 * Watches the processes that started this one: `shell` gone (npm passes SIGTERM to its shell,
 * which dies of it: SIGTERM), another of `watched` gone with the shell alive (npm itself died,
 * of a SIGHUP it does not pass on: SIGHUP), and `shell` woken without a SIGCONT here (SIGINT).
 * A wake-up is confirmed at the next poll so that a SIGCONT delivered around it is seen first.
 */
export function watchAncestors(
  watched: number[],
  shell: number | undefined,
  proc: ProcReader = procfs,
  alive: (pid: number) => boolean = processAlive,
): AncestorWatch {
  let baseline = shell === undefined ? undefined : proc.wakeUps(shell);
  let continuedAt = Number.NEGATIVE_INFINITY;
  let suspectedAt: number | undefined;
  const GRACE = 1000;
  return {
    continued(now = Date.now()) {
      continuedAt = now;
    },
    poll(now) {
      if (shell !== undefined && !alive(shell)) return 'SIGTERM';
      if (watched.some((pid) => !alive(pid))) return 'SIGHUP';
      if (shell === undefined || baseline === undefined) return undefined;
      const count = proc.wakeUps(shell);
      if (count === undefined) return 'SIGHUP';
      if (count !== baseline) {
        baseline = count;
        suspectedAt ??= now;
      }
      if (suspectedAt === undefined || now === suspectedAt) return undefined;
      // Stopped and continued (a SIGCONT shortly before the wake-up or since): that woke it.
      const explained = continuedAt >= suspectedAt - GRACE;
      suspectedAt = undefined;
      return explained ? undefined : 'SIGINT';
    },
  };
}

/**
 * The processes to watch: those between `pid` and the npm shell, the shell, and npm (its
 * parent); without a shell (npm ran the program directly), the parent.
 */
export function launchers(pid: number, shell: number | undefined, proc: ProcReader = procfs): number[] {
  if (shell === undefined) return ancestors(pid, 1, proc);
  const chain = ancestors(pid, 8, proc);
  return chain.slice(0, chain.indexOf(shell) + 2);
}

/**
 * Started by npm (`npm_command` set; Linux): calls `onStop` once when npm's shell dies of the
 * SIGTERM npm passed on (SIGTERM), npm dies (SIGHUP) or the shell is sent a SIGINT that it holds
 * (SIGINT). Returns a function that stops watching. Processes started otherwise get their
 * signals directly and need nothing of this.
 */
export function watchNpmStopSignals(
  onStop: (reason: LauncherStop) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): () => void {
  if (env.npm_command === undefined || process.platform !== 'linux') return () => {};
  const shell = npmShell(process.pid);
  const watch = watchAncestors(launchers(process.pid, shell), shell);
  const continued = () => watch.continued();
  process.on('SIGCONT', continued);
  let stopped = false;
  const timer = setInterval(() => {
    const reason = watch.poll(Date.now());
    if (reason === undefined || stopped) return;
    stopped = true;
    onStop(reason);
  }, 500);
  timer.unref();
  return () => {
    clearInterval(timer);
    process.off('SIGCONT', continued);
  };
}

/** Whether a process with this id exists (one of another user's counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
