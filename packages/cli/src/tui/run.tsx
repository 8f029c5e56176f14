import { render } from 'ink';
import { type CliIo, tolerateLostTerminal } from '../io.js';
import type { SessionView } from '../session.js';
import { App, type FrameSize } from './app.js';

/**
 * Runs the TUI on a terminal until q / Ctrl+C (or `io.signal`), then closes the session while
 * the screen still shows its last lines, and restores the terminal. Incremental rendering
 * (only changed lines are rewritten) and at most 4 frames a second: no flicker, little CPU.
 */
export async function runTui(
  session: SessionView,
  io: CliIo,
  options: {
    refreshMs?: number;
    /** Tests: leave the console alone. */
    patchConsole?: boolean;
    /** How long the screen may take to close once the session stopped (default 3 s). */
    exitGraceMs?: number;
  } = {},
): Promise<void> {
  let closing: Promise<void> | undefined;
  let closed!: () => void;
  const stopped = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const close = () => {
    closing ??= session.close().finally(closed);
    return closing;
  };
  const restoreTerminal = tolerateLostTerminal(io.stdin);
  const frame: FrameSize = { height: 0, width: 0 };
  // Registered before Ink's own resize listener, so it runs first.
  const onResize = () => repairAfterShrink(io, frame);
  if (terminalReflows(io.env)) io.stdout.on('resize', onResize);
  const instance = render(
    <App
      session={session}
      onQuit={close}
      {...(io.signal ? { stop: io.signal } : {})}
      frame={frame}
      {...(options.refreshMs ? { refreshMs: options.refreshMs } : {})}
    />,
    {
      stdout: io.stdout,
      stdin: io.stdin,
      stderr: io.stderr,
      exitOnCtrlC: false,
      patchConsole: options.patchConsole ?? true,
      incrementalRendering: true,
      maxFps: 4,
      // The caller decided that stdout is a terminal: do not fall back to CI mode (final frame only).
      interactive: true,
    },
  );
  let grace: NodeJS.Timeout | undefined;
  try {
    // Ink's exit, or, should its teardown fail, the session stopped a while ago: the command
    // ends either way (no process left behind after "stopped").
    const gaveUp = await Promise.race([
      instance.waitUntilExit().then(() => false),
      stopped.then(
        () =>
          new Promise<boolean>((resolve) => {
            grace = setTimeout(() => resolve(true), options.exitGraceMs ?? EXIT_GRACE_MS);
          }),
      ),
    ]);
    if (gaveUp) {
      try {
        instance.unmount();
      } catch {
        // the teardown that already failed
      }
    }
    await close();
  } finally {
    clearTimeout(grace);
    restoreTerminal();
    io.stdout.off('resize', onResize);
  }
}

/** How long the screen may take to close after the session stopped. */
const EXIT_GRACE_MS = 3000;

/**
 * A terminal made narrower re-wraps ("reflows") every line of the live area that no longer
 * fits into several rows; Ink then erases only as many rows as the area had lines, and the
 * top of the old box stays on screen as fragments. Before Ink redraws, the rows the reflow
 * added are deleted (CSI M), so that Ink's erase takes exactly the rest.
 */
export function repairAfterShrink(io: CliIo, frame: FrameSize): void {
  const columns = io.stdout.columns ?? 0;
  if (frame.height === 0 || columns <= 0 || columns >= frame.width) return;
  // Every row of the box is frame.width wide (its borders): each now takes this many rows.
  const rows = frame.height * Math.ceil(frame.width / columns);
  const extra = rows - frame.height;
  if (extra <= 0) return;
  io.stdout.write(`\u001b[${rows}A\r\u001b[${extra}M\u001b[${frame.height}B`);
  frame.width = columns;
}

/**
 * Whether the terminal re-wraps lines when it gets narrower (most do: VTE, tmux, iTerm2,
 * kitty, WezTerm, Windows Terminal, VS Code, Alacritty, Ghostty; xterm truncates instead).
 * MINER_TERMINAL_REFLOW=1/0 overrides the guess.
 */
export function terminalReflows(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.MINER_TERMINAL_REFLOW !== undefined) return env.MINER_TERMINAL_REFLOW === '1';
  if (env.TMUX || env.VTE_VERSION || env.KITTY_WINDOW_ID || env.WT_SESSION || env.ALACRITTY_WINDOW_ID)
    return true;
  return ['iTerm.app', 'WezTerm', 'vscode', 'ghostty', 'Apple_Terminal', 'tmux'].includes(
    env.TERM_PROGRAM ?? '',
  );
}
