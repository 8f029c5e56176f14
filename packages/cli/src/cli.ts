/**
 * The `miner` process: bin/miner.js runs this file (from dist/ once built, else from source
 * through tsx). A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) aborts the running command,
 * which stops cleanly (the mining session stops its workers, flushes the journal, closes a
 * local validator); the same signal again within a second is the same stop delivered twice
 * (a terminal's Ctrl+C reaches the bin wrapper and this process), later it exits at once.
 * The process also stops cleanly when the process that started it dies: the bin wrapper's
 * IPC channel closes, or, started by npm (npx, npm start), it is re-parented. A closed stdout
 * or stderr (`miner ... | head`) ends the command quietly.
 */
import { readFileSync } from 'node:fs';
import { processIo } from './io.js';
import { run } from './run.js';

const controller = new AbortController();
let firstSignalAt: number | undefined;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const) {
  process.on(signal, () => {
    const now = Date.now();
    if (firstSignalAt === undefined) {
      firstSignalAt = now;
      controller.abort(signal);
    } else if (now - firstSignalAt > 1000) process.exit(130);
  });
}

// The bin wrapper died (even by SIGKILL): its IPC channel closes.
if (process.env.TENSORMINE_MINER_WRAPPED === '1' && process.channel) {
  process.on('disconnect', () => controller.abort('SIGHUP'));
  process.channel.unref();
}

// Started by npm (npx miner, npm start: npm -> sh -c -> this process): when npm or its shell
// dies (npm forwards SIGTERM to the shell, which dies of it; SIGHUP kills npm), stop instead
// of mining on as an orphan.
if (process.env.npm_command !== undefined && process.platform === 'linux') {
  const watched = [process.ppid, parentOf(process.ppid)].filter(
    (pid): pid is number => pid !== undefined && pid > 1,
  );
  setInterval(() => {
    if (watched.some((pid) => !alive(pid))) controller.abort('SIGHUP');
  }, 500).unref();
}

/** The parent of a process (Linux /proc), if it can be read. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// `miner config | head -3`: the reader went away. Stop the command (mine stops cleanly) and
// drop what is still written, without a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    controller.abort('EPIPE');
  });
}

const code = await run(process.argv.slice(2), processIo(controller.signal));
process.exitCode = code;
// Handles that outlive the command (a keep-alive socket, stdin) must not keep the process up.
setTimeout(() => process.exit(code), 2000).unref();
