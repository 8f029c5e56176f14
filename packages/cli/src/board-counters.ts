import type { DeviceOutcomes, DeviceUnitCounters } from '@tensormine/miner';

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
