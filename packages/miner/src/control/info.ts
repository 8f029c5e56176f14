import type {
  MinerBoard,
  MinerDevice,
  MinerSystemInfo,
  HashrateWindows as WireWindows,
} from '@tensormine/protocol';
import type { DeviceUnitInfo } from '../device.js';
import type { HashrateWindows } from '../hashrate.js';
import type { DeviceOutcomes, MinerStats } from '../miner.js';

/**
 * GET /api/system/info (packages/protocol/src/schemas/miner.ts): AxeOS names and units first
 * (GH/s, as AxeOS reports them and AxeOS dashboards read them), then ours, whose unit is in
 * their name (`hashesPerSecond`: H/s). Plain data, no server: the control API serves it, and
 * `miner devices` and the tests read it.
 */
const GIGA = 1e9;
const gh = (v: number | undefined): number | null => (v === undefined ? null : v / GIGA);

export function systemInfo(stats: MinerStats, version?: string): MinerSystemInfo {
  const h = stats.hashrate;
  return {
    // AxeOS names and units.
    hashRate: gh(h['10s']),
    hashRate_1m: gh(h['60s']),
    hashRate_10m: gh(h['10m']),
    hashRate_1h: gh(h['1h']),
    expectedHashrate: gh(stats.expectedHashrate),
    sharesAccepted: stats.accepted,
    sharesRejected: stats.rejected,
    sharesRejectedReasons: reasons(stats.rejectedReasons),
    sharesStale: stats.stale,
    bestDiff: stats.bestDifficulty ?? 0,
    bestSessionDiff: stats.bestDifficulty ?? 0,
    uptimeSeconds: stats.uptimeSeconds,
    // Ours.
    version: version ?? null,
    protocolVersion: stats.job?.protocolVersion ?? null,
    validatorUrl: stats.validatorUrl ?? null,
    paused: stats.paused,
    connected: stats.connected,
    hashesPerSecond: windows(h),
    job: stats.job
      ? {
          challengeId: stats.job.challengeId,
          difficulty: stats.job.difficulty,
          expiresAt: new Date(stats.job.expiresAtMs).toISOString(),
        }
      : null,
    latencyMs: { last: stats.lastLatencyMs ?? null, average: stats.averageLatencyMs ?? null },
    journalPending: stats.journalSize,
    devices: stats.devices.map(
      (d): MinerDevice => ({
        id: d.id,
        kind: d.kind,
        state: d.state,
        hashesPerSecond: windows(d.hashrate.total),
        workers: d.hashrate.workers.map(windows),
        totalHashes: d.totalHashes,
        expectedHashesPerSecond: d.expectedHashrate ?? null,
        lastFoundAt: iso(d.lastFoundAtMs),
        sharesAccepted: d.accepted,
        sharesRejected: d.rejected,
        sharesRejectedReasons: reasons(d.rejectedReasons),
        ...(d.units === undefined ? {} : { boards: d.units.map(boardInfo) }),
      }),
    ),
  };
}

/**
 * One board of a device (the serial fleet): AxeOS names where AxeOS has them (hashRate in
 * GH/s, sharesAccepted, sharesRejected, sharesRejectedReasons), cgminer's hardware errors
 * (results the reference verifier rejected), then the link's counters.
 */
function boardInfo(u: DeviceUnitInfo & DeviceOutcomes): MinerBoard {
  return {
    id: u.id,
    kind: u.kind,
    chipId: u.chipId ?? null,
    port: u.port ?? null,
    firmware: u.firmware ?? null,
    board: u.board ?? null,
    state: u.state,
    selfTest:
      u.selfTest === undefined ? null : { reason: u.selfTest.reason, retryAt: iso(u.selfTest.retryAtMs) },
    hashRate: gh(u.hashrate['10s']),
    hashRate_1m: gh(u.hashrate['60s']),
    expectedHashrate: gh(u.expectedHashrate),
    sharesAccepted: u.accepted,
    sharesRejected: u.rejected,
    sharesRejectedReasons: reasons(u.rejectedReasons),
    hardwareErrors: u.counters.hardwareErrors,
    hashesPerSecond: windows(u.hashrate),
    totalHashes: u.totalHashes,
    found: u.counters.found,
    crcErrors: u.counters.crcErrors,
    resyncs: u.counters.resyncs,
    retransmissions: u.counters.retransmissions,
    reboots: u.counters.reboots,
    linkLosses: u.counters.linkLosses,
    lastFoundAt: iso(u.lastFoundAtMs),
  };
}

function windows(w: HashrateWindows): WireWindows {
  return {
    '10s': w['10s'] ?? null,
    '60s': w['60s'] ?? null,
    '15m': w['15m'] ?? null,
    '10m': w['10m'] ?? null,
    '1h': w['1h'] ?? null,
    max: w.max ?? null,
  };
}

function reasons(list: readonly { readonly code: string; readonly count: number }[]) {
  return list.map((r) => ({ message: r.code, count: r.count }));
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}
