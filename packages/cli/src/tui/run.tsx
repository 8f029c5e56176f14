import { render } from 'ink';
import { aborted, type CliIo } from '../io.js';
import type { SessionView } from '../session.js';
import { App } from './app.js';

/**
 * Runs the TUI on a terminal until q / Ctrl+C (or `io.signal`), then closes the session while
 * the screen still shows its last lines, and restores the terminal. Incremental rendering
 * (only changed lines are rewritten) and at most 4 frames a second: no flicker, little CPU.
 */
export async function runTui(
  session: SessionView,
  io: CliIo,
  options: { refreshMs?: number } = {},
): Promise<void> {
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= session.close();
    return closing;
  };
  const instance = render(
    <App session={session} onQuit={close} {...(options.refreshMs ? { refreshMs: options.refreshMs } : {})} />,
    {
      stdout: io.stdout,
      stdin: io.stdin,
      stderr: io.stderr,
      exitOnCtrlC: false,
      patchConsole: true,
      incrementalRendering: true,
      maxFps: 4,
      // The caller decided that stdout is a terminal: do not fall back to CI mode (final frame only).
      interactive: true,
    },
  );
  const onAbort = () => {
    void close().finally(() => instance.unmount());
  };
  void aborted(io.signal).then(onAbort);
  await instance.waitUntilExit();
  await close();
}
