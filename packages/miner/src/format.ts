import type { DeviceNoticeKind } from './device.js';
import type { FoundResult } from './found.js';
import { formatHashrate } from './hashrate.js';
import type { MinerLogEvent, ShareDropReason } from './miner.js';

/**
 * One plain line per log event, xmrig style, for output that is not a terminal (the TUI
 * renders the same events its own way). Examples:
 *   accepted (120/1) diff 43118 (103 ms)
 *   rejected (120/2) diff 43118 (98 ms): coordinate_occupied
 */
export function formatLogEvent(e: MinerLogEvent): string {
  switch (e.type) {
    case 'job':
      return `new job ${e.challengeId} (v${e.protocolVersion}) diff ${formatDifficulty(e.difficulty)} on ${e.devices.join(', ') || 'no device'}`;
    case 'found':
      return `found ${e.found.id} by ${e.found.device}${e.found.worker === undefined ? '' : `#${e.found.worker}`} diff ${formatDifficulty(e.found.achievedDifficulty)}`;
    case 'accepted':
      return `accepted (${e.accepted}/${e.rejected}) diff ${formatDifficulty(e.difficulty)} (${Math.round(e.latencyMs)} ms) by ${finder(e.found)}`;
    case 'rejected':
      return `rejected (${e.accepted}/${e.rejected}) diff ${formatDifficulty(e.difficulty)} (${Math.round(e.latencyMs)} ms) by ${finder(e.found)}: ${e.code}`;
    case 'journaled':
      return `result ${e.found.id} kept in the journal (${e.reason}); will resubmit`;
    case 'resubmitting':
      return `resubmitting ${e.count} journaled result${e.count === 1 ? '' : 's'}`;
    case 'expired':
      return `dropped journaled result ${e.found.id}: its challenge expired`;
    case 'connection-lost':
      return `${e.url ? `validator ${e.url}` : 'validator'} unreachable (${e.reason}); retrying in ${Math.round(e.retryInMs / 1000)} s`;
    case 'connection-restored':
      return `${e.url ? `validator ${e.url}` : 'validator'} back after ${Math.round(e.downMs / 1000)} s`;
    case 'stale':
      return `work is stale (${e.reason}); fetching new work`;
    case 'shares-dropped':
      return `${e.count} share${e.count === 1 ? '' : 's'} dropped unsent (${DROP_WORDS[e.reason]}); ${e.total} in all, ${e.queued} queued`;
    case 'device-error':
      return `${e.device}: ${e.message}`;
    case 'device-state':
      return `${e.device}: ${e.state}`;
    case 'device-notice':
      return `${e.device}${e.port === undefined ? '' : ` (${e.port})`}: ${NOTICE_WORDS[e.kind]}${e.reason ? `: ${e.reason}` : ''}`;
    case 'paused':
      return 'paused';
    case 'resumed':
      return 'resumed';
    case 'error':
      return `error: ${e.message}`;
  }
}

const DROP_WORDS: Record<ShareDropReason, string> = {
  'queue-full':
    'the queue of shares waiting to be sent was full: the share difficulty is too easy for this miner until vardiff raises it',
  expired: 'their challenge expired while they waited',
  stopped: 'the miner stopped with them queued',
};

const NOTICE_WORDS: Record<DeviceNoticeKind, string> = {
  attached: 'attached',
  lost: 'lost',
  back: 'back',
  rebooted: 'rebooted',
  'self-test-failed': 'self-test failed',
  'link-degraded': 'link degraded',
};

/** The device (and worker) that found a result: `cpu#2`, `serial:02a1b2c3d4e50000`. */
function finder(found: FoundResult): string {
  return found.worker === undefined ? found.device : `${found.device}#${found.worker}`;
}

/** 43118 -> "43118", 1.5e6 -> "1.50M", 4.29e9 -> "4.29G". */
export function formatDifficulty(d: number): string {
  if (!Number.isFinite(d)) return String(d);
  if (d < 1e5) return String(Math.round(d));
  for (const [unit, size] of [
    ['E', 1e18],
    ['P', 1e15],
    ['T', 1e12],
    ['G', 1e9],
    ['M', 1e6],
    ['k', 1e3],
  ] as const) {
    if (d >= size) return `${(d / size).toFixed(2)}${unit}`;
  }
  return String(d);
}

export { formatHashrate };
