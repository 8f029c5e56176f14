/**
 * The `miner` process: bin/miner.js runs this file (from dist/ once built, else from source
 * through tsx). SIGINT and SIGTERM abort the running command, which stops cleanly (the
 * mining session stops its workers, flushes the journal, closes a local validator); a second
 * signal exits at once.
 */
import { processIo } from './io.js';
import { run } from './run.js';

const controller = new AbortController();
let signals = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    signals++;
    if (signals > 1) process.exit(130);
    controller.abort(signal);
  });
}

const code = await run(process.argv.slice(2), processIo(controller.signal));
process.exitCode = code;
// Handles that outlive the command (a keep-alive socket, stdin) must not keep the process up.
setTimeout(() => process.exit(code), 2000).unref();
