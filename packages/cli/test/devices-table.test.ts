/**
 * `miner devices --local-boards`: the board table, and a running miner's boards read from its
 * control API (GET /api/system/info), as pure functions: a board waiting to try its self-test
 * again says so, why and when (a time, not a countdown), the same from either source.
 */
import { type DeviceUnitInfo, systemInfo } from '@tensormine/miner';
import type { MinerBoard } from '@tensormine/protocol';
import { describe, expect, test } from 'vitest';
import { boardDetail } from '../src/board-counters.js';
import { boardFromApi, boardTable } from '../src/commands/devices.js';
import { formatBoardState, formatClock, formatSelfTest } from '../src/reports.js';
import type { BoardRow } from '../src/serial-boards.js';

const NOW = Date.UTC(2026, 10, 26, 13, 10, 0);
const RETRY_AT = NOW + 5000;
const counters = {
  found: 0,
  hardwareErrors: 0,
  crcErrors: 0,
  resyncs: 0,
  retransmissions: 0,
  reboots: 0,
  linkLosses: 0,
};
const none = {
  '10s': undefined,
  '60s': undefined,
  '15m': undefined,
  '10m': undefined,
  '1h': undefined,
  max: undefined,
};

function row(id: string, state: string, selfTest?: BoardRow['selfTest']): BoardRow {
  return {
    id,
    chipId: id.slice(7),
    port: '/dev/ttyUSB0',
    state,
    ...(selfTest === undefined ? {} : { selfTest }),
    firmware: '1.0.0',
    board: 'esp32',
    rate: undefined,
    announcedRate: 3000,
    lastValidWorkAtMs: undefined,
    counters,
  };
}

describe('a board whose self-test did not pass', () => {
  test('the state says why, and when a test that timed out runs again (local time), then that it runs', () => {
    const timedOut = { reason: 'hex: no RESULT within 3000 ms', retryAtMs: RETRY_AT };
    expect(formatSelfTest(timedOut, NOW)).toBe(
      `timed out (hex: no RESULT within 3000 ms), retrying at ${formatClock(RETRY_AT)}`,
    );
    expect(formatClock(RETRY_AT)).toMatch(/^\d\d:\d\d:\d\d$/);
    expect(formatSelfTest(timedOut, RETRY_AT)).toBe(
      'timed out (hex: no RESULT within 3000 ms), retrying now',
    );
    expect(formatBoardState('self-test failed', { reason: 'hex: wrong RESULT' }, NOW)).toBe(
      'self-test failed: hex: wrong RESULT',
    );
    expect(formatBoardState('idle', undefined, NOW)).toBe('idle');
  });

  test('its row of the board table says so', () => {
    const lines = boardTable(
      [
        row('serial:0000000000000001', 'self-test', {
          reason: 'hex: no RESULT within 3000 ms',
          retryAtMs: RETRY_AT,
        }),
        row('serial:0000000000000002', 'idle'),
      ],
      NOW,
    );
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^board\s+state\s+rate\s+firmware\s+chip id\s+port\s+last valid work\s+found/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^serial:0000000000000001\\s+self-test: timed out \\(hex: no RESULT within 3000 ms\\), retrying at ${formatClock(RETRY_AT)}\\s+3\\.00 kH/s \\(announced\\)\\s+1\\.0\\.0`,
      ),
    );
    expect(lines[2]).toMatch(/^serial:0000000000000002\s+idle\s+3\.00 kH\/s \(announced\)/);
  });

  test("the TUI's device row says it after the state", () => {
    const waiting = row('serial:0000000000000001', 'self-test', {
      reason: 'hex: no RESULT within 3000 ms',
      retryAtMs: RETRY_AT,
    });
    expect(boardDetail(waiting, undefined, NOW)).toBe(
      `timed out (hex: no RESULT within 3000 ms), retrying at ${formatClock(RETRY_AT)} · /dev/ttyUSB0, esp32 fw 1.0.0 · A 0 R 0 HW 0 CRC 0 RS 0 RT 0`,
    );
    expect(boardDetail(row('serial:0000000000000002', 'idle'), undefined, NOW)).toBe(
      '/dev/ttyUSB0, esp32 fw 1.0.0 · A 0 R 0 HW 0 CRC 0 RS 0 RT 0',
    );
  });

  test("from a running miner's control API: the same row, the retry's time carried exactly", () => {
    const unit = (id: string, state: DeviceUnitInfo['state'], selfTest?: DeviceUnitInfo['selfTest']) => ({
      id,
      kind: 'serial',
      state,
      chipId: id.slice(7),
      port: '/dev/ttyUSB0',
      firmware: '1.0.0',
      board: 'esp32',
      hashrate: none,
      totalHashes: 0,
      expectedHashrate: undefined,
      lastFoundAtMs: undefined,
      counters,
      ...(selfTest === undefined ? {} : { selfTest }),
      accepted: 0,
      rejected: 0,
      rejectedReasons: [],
    });
    const info = systemInfo({
      running: true,
      paused: false,
      connected: true,
      accepted: 0,
      rejected: 0,
      rejectedReasons: [],
      stale: 0,
      bestDifficulty: 0,
      lastLatencyMs: undefined,
      averageLatencyMs: undefined,
      journalSize: 0,
      sharesQueued: 0,
      sharesDropped: 0,
      uptimeSeconds: 1,
      job: undefined,
      hashrate: none,
      expectedHashrate: undefined,
      validatorUrl: undefined,
      devices: [
        {
          id: 'serial',
          kind: 'serial',
          state: 'starting',
          hashrate: { total: none, workers: [] },
          totalHashes: 0,
          expectedHashrate: undefined,
          lastFoundAtMs: undefined,
          accepted: 0,
          rejected: 0,
          rejectedReasons: [],
          units: [
            unit('serial:0000000000000001', 'self-test', {
              reason: 'hex: no RESULT within 3000 ms',
              retryAtMs: RETRY_AT,
            }),
            unit('serial:0000000000000002', 'self-test failed', { reason: 'hex: wrong RESULT' }),
            unit('serial:0000000000000003', 'idle'),
          ],
        },
      ],
    });
    const wire = JSON.parse(JSON.stringify(info)) as { devices: { boards: MinerBoard[] }[] };
    const rows = wire.devices[0]!.boards.map(boardFromApi);
    expect(rows.map((r) => [r.state, r.selfTest])).toEqual([
      ['self-test', { reason: 'hex: no RESULT within 3000 ms', retryAtMs: RETRY_AT }],
      ['self-test failed', { reason: 'hex: wrong RESULT' }],
      ['idle', undefined],
    ]);
    const lines = boardTable(rows, NOW);
    expect(lines[1]).toContain(
      `self-test: timed out (hex: no RESULT within 3000 ms), retrying at ${formatClock(RETRY_AT)}`,
    );
    expect(lines[2]).toContain('self-test failed: hex: wrong RESULT');
  });
});
