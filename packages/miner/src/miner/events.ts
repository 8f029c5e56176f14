import type { DeviceNotice, DeviceState } from '../device.js';
import type { FoundResult } from '../found.js';

/** What the Miner reports, and the types of its parts' reports. */

export interface ResultFields {
  readonly found: FoundResult;
  /** Counts after this result, for the `accepted (120/1)` line. */
  readonly accepted: number;
  readonly rejected: number;
  /** Expected hashes per result of the job (the share's difficulty). */
  readonly difficulty: number;
  /** Submission round trip, ms. */
  readonly latencyMs: number;
}

/** Why pool shares were dropped unsent (the `shares-dropped` event). */
export type ShareDropReason = 'queue-full' | 'expired' | 'stopped';

/** What the Miner reports. The CLI prints them (plain lines) or shows them (the TUI). */
export type MinerLogEvent =
  | {
      readonly type: 'job';
      readonly challengeId: string;
      readonly protocolVersion: '4.0' | '4.1';
      readonly difficulty: number;
      readonly expiresAtMs: number;
      readonly devices: readonly string[];
    }
  | { readonly type: 'found'; readonly found: FoundResult }
  | ({ readonly type: 'accepted'; readonly details?: Readonly<Record<string, unknown>> } & ResultFields)
  | ({ readonly type: 'rejected'; readonly code: string; readonly message: string } & ResultFields)
  /** A result could not be delivered; it stays in the journal and will be resubmitted. */
  | { readonly type: 'journaled'; readonly found: FoundResult; readonly reason: string }
  | { readonly type: 'resubmitting'; readonly count: number }
  /** A journaled result whose challenge expired before it could be delivered: dropped. */
  | { readonly type: 'expired'; readonly found: FoundResult }
  /** A validator (`url`, when the source names it) stopped answering; each has its own state. */
  | {
      readonly type: 'connection-lost';
      readonly url?: string;
      readonly reason: string;
      readonly retryInMs: number;
    }
  | { readonly type: 'connection-restored'; readonly url?: string; readonly downMs: number }
  | { readonly type: 'stale'; readonly reason: string }
  /**
   * Pool shares were dropped without being sent: the queue behind the in-flight submissions was
   * full (the oldest queued share goes), a queued share's challenge expired before its turn, or
   * the miner stopped with shares still queued.
   */
  | {
      readonly type: 'shares-dropped';
      readonly reason: ShareDropReason;
      /** Dropped by this event. */
      readonly count: number;
      /** Dropped since the start. */
      readonly total: number;
      /** Shares waiting in the queue now. */
      readonly queued: number;
    }
  | { readonly type: 'device-error'; readonly device: string; readonly message: string }
  | { readonly type: 'device-state'; readonly device: string; readonly state: DeviceState }
  /** A unit of a backend (a board) attached, lost, back, rebooted, failed its self-test, or its link degraded. */
  | ({ readonly type: 'device-notice'; readonly device: string } & Omit<DeviceNotice, 'unit' | 'message'> & {
        readonly backend: string;
        readonly reason: string;
      })
  | { readonly type: 'paused' }
  | { readonly type: 'resumed' }
  | { readonly type: 'error'; readonly message: string };

export interface MinerEvents {
  log: [event: MinerLogEvent];
}

/** How a part of the Miner reports. */
export type Log = (event: MinerLogEvent) => void;

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
