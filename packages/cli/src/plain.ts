import type { MinerLogEvent } from '@tensormine/miner';
import { applyHotkey, HOTKEY_HELP, hotkeyAction } from './hotkeys.js';
import { aborted, type CliIo, writeLine } from './io.js';
import { hashrateReport } from './reports.js';
import type { SessionLine, SessionView } from './session.js';

/**
 * `miner mine` without the TUI (stdout is not a terminal, or --no-tui): one plain line per
 * event, xmrig style, never a redraw, and a hashrate line every minute. `--json` prints one
 * JSON object per line instead. The single-key commands work when stdin is a terminal.
 * On q (or Ctrl+C) from a terminal, or when `io.signal` aborts (SIGINT, SIGTERM), it closes
 * the session (printing the lines of the shutdown) and resolves.
 */
export interface PlainOptions {
  readonly json: boolean;
  /** How often to print the hashrate line, ms (default 60 000). */
  readonly reportIntervalMs?: number;
}

export async function runPlain(session: SessionView, io: CliIo, options: PlainOptions): Promise<void> {
  const interactive = io.stdin.isTTY === true && typeof io.stdin.setRawMode === 'function';
  const print = (line: SessionLine) => {
    writeLine(io.stdout, options.json ? JSON.stringify(jsonLine(line)) : `[${timestamp()}] ${line.text}`);
  };
  if (!options.json) {
    for (const line of session.banner) writeLine(io.stdout, line);
    if (interactive) writeLine(io.stdout, ` * keys       ${HOTKEY_HELP}`);
  }
  session.on('line', print);
  const timer = setInterval(
    () => print({ text: hashrateReport(session.snapshot().stats.hashrate), tone: 'info' }),
    options.reportIntervalMs ?? 60_000,
  );
  timer.unref();
  let quit!: () => void;
  const quitRequested = new Promise<void>((resolve) => {
    quit = resolve;
  });
  const onKey = (data: Buffer | string) => {
    for (const ch of data.toString()) {
      const action = hotkeyAction(ch);
      if (action === 'quit') quit();
      else if (action) {
        const text = applyHotkey(action, session);
        if (text) print({ text, tone: 'info' });
      }
    }
  };
  if (interactive) {
    io.stdin.setRawMode!(true);
    io.stdin.on('data', onKey);
    io.stdin.resume();
  }
  try {
    await Promise.race([quitRequested, aborted(io.signal)]);
  } finally {
    clearInterval(timer);
    if (interactive) {
      io.stdin.off('data', onKey);
      io.stdin.setRawMode!(false);
      io.stdin.pause();
    }
  }
  if (!options.json) print({ text: 'stopping: workers, boards, journal', tone: 'info' });
  try {
    await session.close();
  } finally {
    session.off('line', print);
  }
  if (!options.json) print({ text: 'stopped', tone: 'info' });
}

/** `2026-11-22 09:12:33` in local time. */
export function timestamp(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/** A line as JSON: `{ time, type, message, ...fields }`, results reduced to their identity. */
export function jsonLine(line: SessionLine): Record<string, unknown> {
  const base = { time: new Date().toISOString(), type: line.event?.type ?? 'note', message: line.text };
  if (!line.event) return base;
  const { type: _type, ...fields } = line.event as MinerLogEvent & Record<string, unknown>;
  const found = 'found' in fields ? fields.found : undefined;
  if (found && typeof found === 'object') {
    const f = found as { id: string; challengeId: string; nonce: number; device: string; worker?: number };
    fields.found = {
      id: f.id,
      challengeId: f.challengeId,
      nonce: f.nonce,
      device: f.device,
      worker: f.worker,
    };
  }
  return { ...base, ...fields };
}
