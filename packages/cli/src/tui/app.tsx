import { formatDifficulty, formatHashrate } from '@tensormine/miner';
import { Box, type DOMElement, measureElement, Static, Text, useApp, useInput, useWindowSize } from 'ink';
import { useCallback, useEffect, useRef, useState } from 'react';
import { applyHotkey, hotkeyAction } from '../hotkeys.js';
import { JobLineSummary } from '../job-lines.js';
import {
  type DeviceRow,
  formatAgo,
  formatDuration,
  formatMs,
  rate10sText,
  type Snapshot,
} from '../reports.js';
import type { LineTone, SessionLine, SessionView } from '../session.js';
import type { PoolView } from '../work-source.js';

/**
 * The terminal UI of `miner mine` (Ink): log lines scroll above (<Static>: written once,
 * never redrawn), the live area below shows the hashrate windows, the results, the job, the
 * connection and one row per device and CPU worker, and lists the keys. The live area is
 * refreshed from a snapshot every `refreshMs` (a few times a second), and new log lines are
 * written with the same tick, so a burst of events costs one render.
 */
export interface AppProps {
  readonly session: SessionView;
  /**
   * Called once on q, Ctrl+C or `stop`; the app shows "stopping", and when it resolves shows
   * "stopped" in its last frame and exits.
   */
  readonly onQuit: () => Promise<void> | void;
  /** A stop from outside (a signal): the same as q. */
  readonly stop?: AbortSignal;
  /** Refresh interval of the live area, ms (default 500). */
  readonly refreshMs?: number;
  /** Filled in after every render: the live area's size on screen (run.tsx's resize repair). */
  readonly frame?: FrameSize;
}

/** The live area as last drawn: rows and columns. */
export interface FrameSize {
  height: number;
  width: number;
}

interface LogItem {
  readonly id: number;
  readonly text: string;
  readonly tone: LineTone;
}

const TONE_COLOR: Record<LineTone, string | undefined> = {
  info: undefined,
  good: 'green',
  bad: 'red',
  warn: 'yellow',
};

/** Running, then stopping (q, Ctrl+C or a signal), then stopped (the last frame). */
type Phase = 'running' | 'stopping' | 'stopped';

/** Log lines kept for <Static>; older ones are already on the terminal and are dropped from memory. */
const KEEP_LINES = 1000;
const WRITTEN: LogItem = { id: -1, text: '', tone: 'info' };

export function App({ session, onQuit, stop, refreshMs = 500, frame }: AppProps) {
  const { exit } = useApp();
  const { columns } = useWindowSize();
  const [snapshot, setSnapshot] = useState<Snapshot>(() => session.snapshot());
  const [items, setItems] = useState<LogItem[]>(() =>
    session.banner.map((text, id) => ({ id, text, tone: 'info' as const })),
  );
  const [phase, setPhase] = useState<Phase>('running');
  const nextId = useRef(session.banner.length);
  const pending = useRef<LogItem[]>([]);

  const flush = useCallback(() => {
    if (pending.current.length === 0) return;
    const added = pending.current;
    pending.current = [];
    setItems((previous) => {
      const all = previous.concat(added);
      // <Static> writes only the items after those it has written: the old ones can go.
      if (all.length <= KEEP_LINES * 2) return all;
      return all.map((item, i) => (i < all.length - KEEP_LINES ? WRITTEN : item));
    });
  }, []);

  const push = useCallback((text: string, tone: LineTone) => {
    pending.current.push({ id: nextId.current++, text: `${clock()} ${text}`, tone });
  }, []);

  useEffect(() => {
    const jobs = new JobLineSummary();
    const onLine = (line: SessionLine) => {
      const text = jobs.text(line);
      if (text !== undefined) push(text, line.tone);
    };
    session.on('line', onLine);
    const timer = setInterval(() => {
      flush();
      setSnapshot(session.snapshot());
    }, refreshMs);
    return () => {
      clearInterval(timer);
      session.off('line', onLine);
    };
  }, [session, refreshMs, push, flush]);

  const quitting = useRef(false);
  const quit = useCallback(() => {
    if (quitting.current) return;
    quitting.current = true;
    setPhase('stopping');
    push('stopping: workers, boards, journal', 'info');
    flush();
    void Promise.resolve(onQuit()).finally(() => {
      push('stopped', 'info');
      flush();
      setSnapshot(session.snapshot());
      setPhase('stopped');
    });
  }, [onQuit, session, push, flush]);

  // Exit once the stopped frame is on screen.
  useEffect(() => {
    if (phase === 'stopped') exit();
  }, [phase, exit]);

  useEffect(() => {
    if (!stop) return;
    if (stop.aborted) quit();
    else stop.addEventListener('abort', quit, { once: true });
    return () => stop.removeEventListener('abort', quit);
  }, [stop, quit]);

  useInput((input, key) => {
    const action = key.ctrl && input === 'c' ? 'quit' : hotkeyAction(input);
    if (action === undefined) return;
    if (action === 'quit') {
      quit();
      return;
    }
    const text = applyHotkey(action, session);
    if (text) push(text, 'info');
    flush();
    setSnapshot(session.snapshot());
  });

  const width = Math.max(40, columns || 80);
  const live = useRef<DOMElement>(null);
  useEffect(() => {
    if (!frame || !live.current) return;
    frame.height = measureElement(live.current).height;
    frame.width = width;
  });
  return (
    <>
      <Static items={items}>
        {(item) => {
          const color = TONE_COLOR[item.tone];
          const tone = color ? { color } : {};
          // A line wider than the terminal goes on under its text, not at the left edge.
          const [prefix, rest] = hangingIndent(item.text);
          return (
            <Box key={item.id}>
              {prefix ? (
                <Box flexShrink={0}>
                  <Text {...tone}>{prefix}</Text>
                </Box>
              ) : null}
              <Text {...tone} wrap="wrap">
                {rest}
              </Text>
            </Box>
          );
        }}
      </Static>
      <Box ref={live}>
        <LiveArea snapshot={snapshot} width={width} paused={session.paused} phase={phase} />
      </Box>
    </>
  );
}

function LiveArea({
  snapshot,
  width,
  paused,
  phase,
}: {
  snapshot: Snapshot;
  width: number;
  paused: boolean;
  phase: Phase;
}) {
  const { stats, connection: c, rows, jobLabel, nowMs } = snapshot;
  const rate = stats.hashrate;
  const reasons = stats.rejectedReasons.map((r) => `${r.code} ${r.count}`).join(', ');
  const status =
    phase !== 'running' ? phase.toUpperCase() : paused ? 'PAUSED' : c.connected ? 'MINING' : 'NO VALIDATOR';
  const statusColor = phase !== 'running' || paused ? 'yellow' : c.connected ? 'green' : 'red';
  return (
    <Box flexDirection="column" width={width} borderStyle="single" borderDimColor paddingX={1}>
      <Text wrap="truncate">
        <Text bold color={statusColor}>
          {status}
        </Text>
        {`  ${c.url ?? 'no validator'}${c.local ? ' (local)' : ''}  ${c.protocol ? `v${c.protocol}` : 'v?'}  latency ${formatMs(c.latencyMs)}  uptime ${formatDuration(stats.uptimeSeconds)}`}
      </Text>
      <Text wrap="truncate">
        <Text bold>hashrate</Text>
        {`  10s ${rate10sText(rate)}  60s ${formatHashrate(rate['60s'])}  15m ${formatHashrate(rate['15m'])}  max ${formatHashrate(rate.max ?? rate.warmup)}`}
      </Text>
      <Text wrap="truncate">
        <Text bold>results</Text>
        {'   '}
        <Text color="green">accepted {stats.accepted}</Text>
        {'  '}
        <Text {...(stats.rejected > 0 ? { color: 'red' } : {})}>rejected {stats.rejected}</Text>
        {reasons ? ` (${reasons})` : ''}
        {stats.journalSize > 0 ? `  journal ${stats.journalSize}` : ''}
        {stats.sharesQueued > 0 ? `  queued ${stats.sharesQueued}` : ''}
        {stats.sharesDropped > 0 ? <Text color="yellow">{`  dropped ${stats.sharesDropped}`}</Text> : null}
      </Text>
      {snapshot.pool ? <PoolLine pool={snapshot.pool} nowMs={nowMs} /> : null}
      {snapshot.wallet ? (
        <Text wrap="truncate">
          <Text bold>wallet</Text>
          {`    balance ${snapshot.wallet.balance} PTM  earned `}
          <Text color="green">{`+${snapshot.wallet.earned} PTM`}</Text>
          {` this run  (read ${formatAgo(snapshot.wallet.checkedAtMs, nowMs)})`}
        </Text>
      ) : null}
      <Text wrap="truncate">
        <Text bold>job</Text>
        {`       ${jobLabel ?? 'waiting for work'}  difficulty ${stats.job ? formatDifficulty(stats.job.difficulty) : 'n/a'}`}
      </Text>
      {jobLabel?.startsWith('q=') ? (
        <Text wrap="truncate" dimColor>
          {'          q r s: the lattice cell this block claims (hexagonal coordinates, q + r + s = 0)'}
        </Text>
      ) : null}
      <DeviceTable rows={rows} width={width - 4} nowMs={nowMs} phase={phase} />
      {snapshot.dashboardUrl || c.apiUrl ? (
        <Text wrap="truncate">
          <Text bold>links</Text>
          {`     ${[snapshot.dashboardUrl ? `dashboard ${snapshot.dashboardUrl}` : '', c.apiUrl ? `control ${c.apiUrl}/` : ''].filter(Boolean).join('  ')}`}
        </Text>
      ) : null}
      <Text wrap="truncate" dimColor>
        keys: h hashrate p pause r resume s results c connection q quit
      </Text>
    </Box>
  );
}

/** `mine --pool`: shares accepted/stale/rejected, share difficulty, earnings, the pool's last block. */
function PoolLine({ pool, nowMs }: { pool: PoolView; nowMs: number }) {
  const last = pool.lastBlock;
  return (
    <Text wrap="truncate">
      <Text bold>pool</Text>
      {'      '}
      <Text color="green">shares {pool.sharesAccepted}</Text>
      {'  '}
      <Text {...(pool.sharesStale > 0 ? { color: 'yellow' } : {})}>stale {pool.sharesStale}</Text>
      {'  '}
      <Text {...(pool.sharesRejected > 0 ? { color: 'red' } : {})}>rejected {pool.sharesRejected}</Text>
      {`  share diff ${pool.shareDifficulty === undefined ? 'n/a' : formatDifficulty(pool.shareDifficulty)}`}
      {`  est ${pool.estimated ?? 'n/a'} PTM  paid ${pool.paid ?? 'n/a'} PTM`}
      {`  last block ${last === undefined ? 'none yet' : `${last.height}${last.mine ? ' (yours)' : ''} ${formatAgo(last.foundAt * 1000, nowMs)}`}`}
    </Text>
  );
}

/**
 * While stopping, what still runs is shown as stopping (the workers finish their batch); once
 * stopped, as stopped.
 */
const STOPPED_STATES = new Set([
  'stopped',
  'no device',
  'error',
  'self-test failed',
  'self-test',
  'unplugged',
]);

function DeviceTable({
  rows,
  width,
  nowMs,
  phase,
}: {
  rows: readonly DeviceRow[];
  width: number;
  nowMs: number;
  phase: Phase;
}) {
  const nameWidth = Math.max(8, ...rows.map((r) => r.name.length + (r.level === 'worker' ? 2 : 0))) + 2;
  const stateWidth = Math.max(8, ...rows.map((r) => r.state.length)) + 2;
  const wide = width >= nameWidth + stateWidth + 50;
  const cells = (name: string, state: string, r10: string, r60: string, last: string) =>
    `${name.padEnd(nameWidth)}${state.padEnd(stateWidth)}${r10.padStart(12)}${wide ? r60.padStart(12) : ''}  ${last}`;
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text wrap="truncate" bold>
        {cells('device', 'state', '10s', '60s', 'last valid work')}
      </Text>
      {rows.map((r) => (
        <Text
          key={r.name}
          wrap="truncate"
          {...(r.state === 'no device' || r.state === 'self-test failed' || r.state === 'error'
            ? { color: 'red' }
            : r.state === 'self-test'
              ? { color: 'yellow' }
              : {})}
        >
          {cells(
            r.level === 'worker' ? `  ${r.name}` : r.name,
            phase !== 'running' && !STOPPED_STATES.has(r.state) ? phase : r.state,
            formatHashrate(r.rate10s),
            formatHashrate(r.rate60s),
            formatAgo(r.lastValidWorkAtMs, nowMs),
          )}
          {r.detail && wide ? `  ${r.detail}` : ''}
        </Text>
      ))}
    </Box>
  );
}

/** `09:12:33` */
function clock(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/**
 * Where a log line's continuation starts when the terminal wraps it: after the label of a start
 * line (` * key        `) or after the clock of a log line (`12:00:00 `).
 */
export function hangingIndent(text: string): [prefix: string, rest: string] {
  const match = /^( \* \S+ +|\d\d:\d\d:\d\d )/.exec(text);
  return match ? [match[1] as string, text.slice((match[1] as string).length)] : ['', text];
}
