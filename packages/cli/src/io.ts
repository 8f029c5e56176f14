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

const TERMINAL_LOST = new Set(['EIO', 'ENOTTY', 'EBADF', 'ENXIO']);

/** An error of a terminal that is gone or is no longer this process's to change. */
export function terminalLost(error: unknown): boolean {
  return TERMINAL_LOST.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/**
 * Makes the terminal best-effort for the keys (the live screen, the plain output's keys): a
 * terminal that is gone or no longer this process's keeps its mode, and its read errors are
 * dropped; other errors are raised as before. Started by npx, the miner is left in an orphaned
 * background process group when npx dies (the shell takes the terminal back), and the kernel
 * refuses it terminal settings and reads with EIO, which Node's tty stream reports as an
 * 'error' event (thrown by the emit when nothing listens). Ink switches raw mode off while
 * unmounting: that error left its exit unsettled, "stopped" on screen and the process alive
 * with PPID 1 (at mount, a crash screen; in the plain output, the journal not flushed).
 * Returns the function that undoes this.
 */
export function tolerateLostTerminal(stdin: CliInput): () => void {
  const onError = (error: unknown) => {
    if (!terminalLost(error)) throw error;
  };
  stdin.on('error', onError);
  const original = stdin.setRawMode;
  const own = Object.getOwnPropertyDescriptor(stdin, 'setRawMode');
  if (typeof original === 'function') {
    // A stream that throws instead (any stream Ink may be given).
    stdin.setRawMode = (mode: boolean) => {
      try {
        return original.call(stdin, mode);
      } catch (error) {
        if (terminalLost(error)) return stdin;
        throw error;
      }
    };
  }
  return () => {
    stdin.off('error', onError);
    if (typeof original !== 'function') return;
    if (own) Object.defineProperty(stdin, 'setRawMode', own);
    else delete stdin.setRawMode;
  };
}
