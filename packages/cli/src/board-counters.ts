import type { DeviceOutcomes, DeviceUnitCounters } from '@tensormine/miner';
import { formatSelfTest } from './reports.js';
import type { BoardRow } from './serial-boards.js';

/**
 * What the TUI's device row shows after a board's state: why its self-test did not pass (and
 * when it runs again) if so, its port, board and firmware, its counters:
 * `timed out (hex: no RESULT within 3000 ms), retrying at 13:10:05 · /dev/ttyUSB0, esp32 fw 1.0.0 · A 0 ...`.
 */
export function boardDetail(b: BoardRow, o: DeviceOutcomes | undefined, nowMs: number): string {
  const selfTest = b.selfTest ? `${formatSelfTest(b.selfTest, nowMs)} · ` : '';
  return `${selfTest}${b.port ?? 'unplugged'}, ${b.board} fw ${b.firmware} · ${compactCounters(b.counters, o)}`;
}

/**
 * A board's counters in a few characters, cgminer style, for the TUI's device row and the plain
 * mode: `A 12 R 1 (stale 1) HW 0 CRC 2 RS 1 RT 3`, then reboots and losses when there were any.
 * A accepted, R rejected (by reason), HW hardware errors (results the reference verifier
 * rejected), CRC frames with a bad CRC, RS receiver resyncs, RT retransmissions.
 */
export function compactCounters(c: DeviceUnitCounters, o: DeviceOutcomes | undefined): string {
  const reasons =
    o && o.rejectedReasons.length > 0
      ? ` (${o.rejectedReasons.map((r) => `${r.code} ${r.count}`).join(', ')})`
      : '';
  const parts = [
    `A ${o?.accepted ?? 0}`,
    `R ${o?.rejected ?? 0}${reasons}`,
    `HW ${c.hardwareErrors}`,
    `CRC ${c.crcErrors}`,
    `RS ${c.resyncs}`,
    `RT ${c.retransmissions}`,
  ];
  if (c.reboots > 0) parts.push(`reboots ${c.reboots}`);
  if (c.linkLosses > 0) parts.push(`lost ${c.linkLosses}`);
  return parts.join(' ');
}
