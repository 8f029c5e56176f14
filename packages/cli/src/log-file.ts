import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CliError } from './errors.js';
import { type CliIo, writeLine } from './io.js';
import { JobLineSummary } from './job-lines.js';
import { timestamp } from './plain.js';
import type { SessionLine, SessionView } from './session.js';

/**
 * `miner mine --log-file FILE`: every log line, timestamped and plain (as in plain mode, `new
 * job` lines summarised), appended to FILE (mode 0600), whatever the screen shows (the TUI,
 * plain lines or --json). For a miner running unattended (a service unit, nohup) next to the
 * journal of the service manager. A write error is reported once on stderr; mining goes on.
 * Returns the function that writes the last line and closes the file.
 */
export async function startLogFile(
  path: string,
  session: SessionView,
  io: CliIo,
): Promise<() => Promise<void>> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new CliError('usage', `--log-file ${path}: cannot create its folder: ${(error as Error).message}`);
  }
  const stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  let failed = false;
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', (error) =>
      reject(
        new CliError('usage', `--log-file ${path}: cannot open it: ${error.message}`, [], { cause: error }),
      ),
    );
  });
  stream.on('error', (error) => {
    if (failed) return;
    failed = true;
    writeLine(io.stderr, `miner: --log-file ${path}: ${error.message}; no more lines are written to it`);
  });
  const write = (text: string) => {
    if (!failed) stream.write(`[${timestamp()}] ${text}\n`);
  };
  write(`miner started (pid ${process.pid})`);
  for (const line of session.banner) if (!failed) stream.write(`${line}\n`);
  const jobs = new JobLineSummary();
  const onLine = (line: SessionLine) => {
    const text = jobs.text(line);
    if (text !== undefined) write(text);
  };
  session.on('line', onLine);
  return async () => {
    session.off('line', onLine);
    write('stopped');
    await new Promise<void>((resolve) => stream.end(resolve));
  };
}
