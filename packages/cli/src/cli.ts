/**
 * The `miner` process: bin/miner.js runs this file (from dist/ once built, else from source
 * through tsx). A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) aborts the running command,
 * which stops cleanly (the mining session stops its workers, flushes the journal, closes a
 * local validator); the same signal again within a second is the same stop delivered twice
 * (a terminal's Ctrl+C reaches the bin wrapper and this process), later it exits at once.
 * The process also stops cleanly when the process that started it dies: the bin wrapper's
 * IPC channel closes, or, started by npm (npx, npm start), npm or its shell dies or is sent
 * SIGINT (which they do not pass on). A closed stdout or stderr (`miner ... | head`) ends the
 * command quietly.
 */
import { watchNpmStopSignals } from '@tensormine/service-kit/npm-signals';
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

// Started by npm (npx miner, npm start): npm passes SIGTERM and SIGINT to its `sh -c` only,
// which dies of SIGTERM (as npm does of SIGHUP) but holds SIGINT until its command exits: stop
// when npm or its shell dies or is sent SIGINT, instead of mining on (the service kit's
// npm-signal watcher).
watchNpmStopSignals((reason) => controller.abort(reason));

// `miner config | head -3`: the reader went away (EPIPE), or the terminal did (EIO: hung up,
// or no longer this process's). Stop the command (mine stops cleanly) and drop what is still
// written, without a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'EIO') throw error;
    controller.abort(error.code);
  });
}

const code = await run(process.argv.slice(2), processIo(controller.signal));
process.exitCode = code;
// Handles that outlive the command (a keep-alive socket, stdin) must not keep the process up.
setTimeout(() => process.exit(code), 2000).unref();
