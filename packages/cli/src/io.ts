/**
 * What a command talks to: the streams, the environment and a stop signal. `cli.ts` passes
 * the process's; tests pass their own (`run(argv, io)`), so every command runs in process
 * with captured output and an isolated environment.
 */

/** An output stream; `isTTY`, `columns` and `resize` as a terminal's stdout has them. */
export type CliOutput = NodeJS.WritableStream & {
  readonly isTTY?: boolean;
  readonly columns?: number;
  readonly rows?: number;
};

/** An input stream; `isTTY` and `setRawMode` as a terminal's stdin has them. */
export type CliInput = NodeJS.ReadableStream & {
  readonly isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
};

export interface CliIo {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  readonly stdin: CliInput;
  /** The environment the settings (MINER_*, XDG_*, HOME, TENSORMINE_*) are read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on SIGINT / SIGTERM: a long-running command (mine, validator start) stops cleanly. */
  readonly signal?: AbortSignal;
}

/** Writes one line. */
export function writeLine(stream: NodeJS.WritableStream, line = ''): void {
  stream.write(`${line}\n`);
}

/** The process's streams and environment. */
export function processIo(signal?: AbortSignal): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    ...(signal ? { signal } : {}),
  };
}

/** Resolves when `signal` aborts (never without one). */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
