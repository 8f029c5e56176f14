import { connectionReport, hashrateReport, poolReport, resultsReport } from './reports.js';
import type { SessionView } from './session.js';

/**
 * The single-key commands of `miner mine`, xmrig's: the same in the TUI and in plain mode
 * (when stdin is a terminal).
 */
export type HotkeyAction = 'hashrate' | 'pause' | 'resume' | 'results' | 'connection' | 'quit';

export const HOTKEYS: Readonly<Record<string, HotkeyAction>> = {
  h: 'hashrate',
  p: 'pause',
  r: 'resume',
  s: 'results',
  c: 'connection',
  q: 'quit',
};

export const HOTKEY_HELP = 'h hashrate, p pause, r resume, s results, c connection, q quit';

/** The action of a key (case-insensitive; Ctrl+C quits), or undefined. */
export function hotkeyAction(input: string): HotkeyAction | undefined {
  if (input === '\u0003') return 'quit';
  return HOTKEYS[input.toLowerCase()];
}

/**
 * Carries out an action other than quit: pauses or resumes the session (the miner then
 * reports `paused` / `resumed` itself), or returns the report line to print.
 */
export function applyHotkey(action: Exclude<HotkeyAction, 'quit'>, session: SessionView): string | undefined {
  switch (action) {
    case 'pause':
      session.pause();
      return undefined;
    case 'resume':
      session.resume();
      return undefined;
    case 'hashrate':
      return hashrateReport(session.snapshot().stats.hashrate);
    case 'results': {
      const s = session.snapshot();
      const results = resultsReport(s.stats);
      return s.pool ? `${results}\n${poolReport(s.pool, s.nowMs)}` : results;
    }
    case 'connection': {
      const s = session.snapshot();
      return connectionReport(s.connection, s.stats.uptimeSeconds);
    }
  }
}
