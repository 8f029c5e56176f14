import type { EndpointState } from '@tensormine/client';
import {
  type DeviceSelfTest,
  formatDifficulty,
  formatHashrate,
  type HashrateWindows,
  type MinerStats,
} from '@tensormine/miner';
import type { PoolView } from './work-source.js';

/**
 * What the miner shows, as data and as text: the snapshot the TUI renders and the lines the
 * keys print (h hashrate, s results, c connection), the same in the TUI and in plain mode.
 */

/** One row of the device table: a device (cpu, a board) or one CPU worker thread. */
export interface DeviceRow {
  readonly name: string;
  /** A device row or a worker row (indented under its device). */
  readonly level: 'device' | 'worker';
  /** Devices: `ok`, `idle`, `paused`, `no device`, `self-test failed`, ...; workers: `mining`, `sleeping`, ... */
  readonly state: string;
  readonly rate10s: number | undefined;
  readonly rate60s: number | undefined;
  /** When it last produced a verified result (Unix ms). */
  readonly lastValidWorkAtMs: number | undefined;
  /** A port, a firmware: shown after the row. */
  readonly detail?: string;
}

export interface ConnectionInfo {
  /** The validator in use. */
  readonly url: string | undefined;
  readonly endpoints: readonly EndpointState[];
  readonly protocol: '4.0' | '4.1' | undefined;
  readonly connected: boolean;
  /** Last and average submission round trip, ms. */
  readonly latencyMs: number | undefined;
  readonly averageLatencyMs: number | undefined;
  /** `mine --local`: the validator runs in this process. */
  readonly local: boolean;
  readonly apiUrl: string | undefined;
}

export interface Snapshot {
  readonly stats: MinerStats;
  readonly rows: readonly DeviceRow[];
  readonly connection: ConnectionInfo;
  /** The lattice coordinate of a hexchain job, else the challenge id. */
  readonly jobLabel: string | undefined;
  /** `mine --pool`: share counts and earnings. */
  readonly pool?: PoolView | undefined;
  /** Solo mining: the key's balance and what this run earned (read periodically). */
  readonly wallet?: SoloWallet | undefined;
  /** `--dashboard`: where the live lattice is served. */
  readonly dashboardUrl?: string | undefined;
  readonly nowMs: number;
}

/** The key's PTM balance as last read, and its increase since the run started (decimal strings). */
export interface SoloWallet {
  readonly balance: string;
  readonly earned: string;
  readonly checkedAtMs: number;
}

/** `pool shares 41/2/0 (accepted/stale/rejected), share diff 4.10K, blocks 3, est 0.12 PTM, paid 1.5 PTM, last block 1204 (12s ago)` */
export function poolReport(pool: PoolView, nowMs: number): string {
  const last = pool.lastBlock;
  return [
    `pool shares ${pool.sharesAccepted}/${pool.sharesStale}/${pool.sharesRejected} (accepted/stale/rejected)`,
    `share diff ${pool.shareDifficulty === undefined ? 'n/a' : formatDifficulty(pool.shareDifficulty)}`,
    `blocks ${pool.blocks}`,
    `est ${pool.estimated ?? 'n/a'} PTM`,
    `paid ${pool.paid ?? 'n/a'} PTM`,
    `last block ${last === undefined ? 'none yet' : `${last.height}${last.mine ? ' (yours)' : ''} (${formatAgo(last.foundAt * 1000, nowMs)})`}`,
  ].join(', ');
}

/** `speed 10s/60s/15m 1.52 MH/s 1.49 MH/s n/a max 1.60 MH/s` (`~1.50 MH/s` while warming up) */
export function hashrateReport(rate: HashrateWindows): string {
  return `speed 10s/60s/15m ${rate10sText(rate)} ${formatHashrate(rate['60s'])} ${formatHashrate(rate['15m'])} max ${formatHashrate(rate.max ?? rate.warmup)}`;
}

/**
 * The 10 s rate, or in the first 10 s the rate over the samples so far, marked `~` (warming
 * up), instead of `n/a` while results are already coming in.
 */
export function rate10sText(rate: HashrateWindows): string {
  if (rate['10s'] !== undefined) return formatHashrate(rate['10s']);
  return rate.warmup === undefined ? 'n/a' : `~${formatHashrate(rate.warmup)}`;
}

/** `results accepted 12, rejected 1 (coordinate_occupied 1), best diff 1.05M, avg latency 4 ms, journal 0` */
export function resultsReport(stats: MinerStats): string {
  const reasons = stats.rejectedReasons.map((r) => `${r.code} ${r.count}`).join(', ');
  return [
    `results accepted ${stats.accepted}, rejected ${stats.rejected}${reasons ? ` (${reasons})` : ''}`,
    `best diff ${stats.bestDifficulty === undefined ? 'n/a' : formatDifficulty(stats.bestDifficulty)}`,
    `avg latency ${formatMs(stats.averageLatencyMs)}`,
    `journal ${stats.journalSize} pending`,
  ].join(', ');
}

/** `using validator http://127.0.0.1:8420 (local) v4.1, latency 4 ms, connected; fallbacks http://b (up)` */
export function connectionReport(c: ConnectionInfo, uptimeSeconds: number): string {
  const parts = [
    `using validator ${c.url ?? 'none'}${c.local ? ' (local)' : ''}`,
    c.protocol ? `v${c.protocol}` : 'protocol not known yet',
    `latency ${formatMs(c.latencyMs)}`,
    c.connected ? 'connected' : 'unreachable, retrying',
    `uptime ${formatDuration(uptimeSeconds)}`,
  ];
  const others = c.endpoints.filter((e) => e.url !== c.url);
  if (others.length > 0) {
    parts.push(
      `fallbacks ${others.map((e) => `${e.url} (${e.up ? 'up' : `down: ${e.lastError ?? 'unknown'}`})`).join(', ')}`,
    );
  }
  if (c.apiUrl) parts.push(`api ${c.apiUrl}`);
  return parts.join(', ');
}

/** 3723 -> "1h 02m 03s"; 65 -> "1m 05s"; 5 -> "5s". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (h > 0) return `${h}h ${pad(m)}m ${pad(r)}s`;
  if (m > 0) return `${m}m ${pad(r)}s`;
  return `${r}s`;
}

/**
 * Why a board's self-test did not pass: `hex: wrong RESULT` (failed for good), or `timed out
 * (hex: no RESULT within 3000 ms), retrying at 13:10:05` (local time; `retrying now` once that
 * time has come: the test runs).
 */
export function formatSelfTest(selfTest: DeviceSelfTest, nowMs: number): string {
  if (selfTest.retryAtMs === undefined) return selfTest.reason;
  const when = selfTest.retryAtMs > nowMs ? `retrying at ${formatClock(selfTest.retryAtMs)}` : 'retrying now';
  return `timed out (${selfTest.reason}), ${when}`;
}

/** A board's state with its self-test problem, if any: `self-test: timed out (...), retrying at 13:10:05`. */
export function formatBoardState(state: string, selfTest: DeviceSelfTest | undefined, nowMs: number): string {
  return selfTest === undefined ? state : `${state}: ${formatSelfTest(selfTest, nowMs)}`;
}

/** HH:MM:SS, local time. */
export function formatClock(atMs: number): string {
  return new Date(atMs).toTimeString().slice(0, 8);
}

/** How long ago, `never` when undefined: "4s ago", "2m 10s ago". */
export function formatAgo(atMs: number | undefined, nowMs: number): string {
  if (atMs === undefined) return 'never';
  return `${formatDuration((nowMs - atMs) / 1000)} ago`;
}

export function formatMs(ms: number | undefined): string {
  return ms === undefined ? 'n/a' : `${Math.round(ms)} ms`;
}
