import type { MinerLogEvent } from '@tensormine/miner';
import { applyHotkey, HOTKEY_HELP, hotkeyAction } from './hotkeys.js';
import { aborted, type CliIo, tolerateLostTerminal, writeLine } from './io.js';
import { JobLineSummary } from './job-lines.js';
import { hashrateReport } from './reports.js';
import type { SessionLine, SessionView } from './session.js';

/**
 * `miner mine` without the TUI (stdout is not a terminal, or --no-tui): one plain line per
 * event, xmrig style, never a redraw, and a hashrate line every minute; `new job` lines are
 * summarised when jobs come faster than one a second. `--json` prints one JSON object per
 * line instead (json-events.ts: start, every event, a typed hashrate event, stop). The
 * single-key commands work when stdin is a terminal.
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
  const startedAtMs = Date.now();
  const jobs = new JobLineSummary();
  const print = (line: SessionLine) => {
    if (options.json) {
      writeLine(io.stdout, JSON.stringify(jsonLine(line)));
      return;
    }
    const text = jobs.text(line);
    if (text !== undefined) writeLine(io.stdout, `[${timestamp()}] ${text}`);
  };
  const reportHashrate = () => {
    const text = hashrateReport(session.snapshot().stats.hashrate);
    if (options.json) writeJson(io, hashrateEvent(session, text));
    else print({ text, tone: 'info' });
  };
  if (options.json) {
    const info = session.startInfo?.();
    if (info) {
      writeJson(io, {
        time: new Date().toISOString(),
        type: 'start',
        message: session.banner.join('; '),
        node: process.versions.node,
        pid: process.pid,
        ...info,
      });
    }
  } else {
    for (const line of session.banner) writeLine(io.stdout, line);
    if (interactive) writeLine(io.stdout, ` * keys       ${HOTKEY_HELP}`);
  }
  session.on('line', print);
  const timer = setInterval(reportHashrate, options.reportIntervalMs ?? 60_000);
  timer.unref();
  let quit!: () => void;
  const quitRequested = new Promise<void>((resolve) => {
    quit = resolve;
  });
  const onKey = (data: Buffer | string) => {
    for (const ch of data.toString()) {
      const action = hotkeyAction(ch);
      if (action === 'quit') quit();
      else if (action === 'hashrate') reportHashrate();
      else if (action) {
        const text = applyHotkey(action, session);
        if (text) print({ text, tone: 'info' });
      }
    }
  };
  const restoreTerminal = interactive ? tolerateLostTerminal(io.stdin) : () => {};
  if (interactive) {
    io.stdin.setRawMode!(true);
    io.stdin.on('data', onKey);
    io.stdin.resume();
  }
  let reason = 'quit';
  try {
    await Promise.race([
      quitRequested,
      aborted(io.signal).then(() => {
        reason = typeof io.signal?.reason === 'string' ? io.signal.reason : 'signal';
      }),
    ]);
  } finally {
    clearInterval(timer);
    if (interactive) {
      io.stdin.off('data', onKey);
      io.stdin.setRawMode!(false);
      io.stdin.pause();
    }
    restoreTerminal();
  }
  if (!options.json) print({ text: 'stopping: workers, boards, journal', tone: 'info' });
  try {
    await session.close();
  } finally {
    session.off('line', print);
  }
  if (!options.json) print({ text: 'stopped', tone: 'info' });
  else {
    const stats = session.snapshot().stats;
    writeJson(io, {
      time: new Date().toISOString(),
      type: 'stop',
      message: 'stopped',
      reason,
      accepted: stats.accepted,
      rejected: stats.rejected,
      journalPending: stats.journalSize,
      uptimeSeconds: Math.floor((Date.now() - startedAtMs) / 1000),
    });
  }
}

function writeJson(io: CliIo, value: Record<string, unknown>): void {
  writeLine(io.stdout, JSON.stringify(value));
}

/** The typed hashrate event of `--json` (H/s; the 10 s rate is the warm-up rate at first). */
function hashrateEvent(session: SessionView, message: string): Record<string, unknown> {
  const { stats } = session.snapshot();
  const rate = stats.hashrate;
  const n = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? null : v);
  return {
    time: new Date().toISOString(),
    type: 'hashrate',
    message,
    unit: 'H/s',
    '10s': n(rate['10s'] ?? rate.warmup),
    '60s': n(rate['60s']),
    '15m': n(rate['15m']),
    max: n(rate.max ?? rate.warmup),
    warmingUp: rate['10s'] === undefined,
    devices: stats.devices.map((d) => ({
      id: d.id,
      '10s': n(d.hashrate.total['10s'] ?? d.hashrate.total.warmup),
      '60s': n(d.hashrate.total['60s']),
    })),
  };
}

/** `2026-11-22 09:12:33` in local time. */
export function timestamp(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/**
 * A line as JSON: `{ time, type, message, ...fields }` (json-events.ts), results reduced to
 * their identity; an event's own message (a rejection's, an error's) is `detail`, `message`
 * being always the line a person reads.
 */
export function jsonLine(line: SessionLine): Record<string, unknown> {
  const base = { time: new Date().toISOString(), type: line.event?.type ?? 'note', message: line.text };
  if (!line.event) return base;
  const { type: _type, message: detail, ...fields } = line.event as MinerLogEvent & Record<string, unknown>;
  if (detail !== undefined) fields.detail = detail;
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
