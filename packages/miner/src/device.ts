import type { EventEmitter } from 'node:events';
import type { FoundResult } from './found.js';
import type { HashrateWindows } from './hashrate.js';
import type { MiningJob } from './job.js';

/**
 * A device backend: something that mines jobs. The CPU engine is one (`MiningEngine`); the
 * serial bridge to ESP32 boards plugs in as another. The Miner gives every backend a disjoint
 * nonce range of the current job and submits what they find.
 */

/**
 * `ok` mining; `idle` ready without a job; `paused`; `stopped` (not started or stopped);
 * `starting`; `no device` (a serial port with nothing behind it); `self-test failed` (a board
 * that failed its known-answer test); `error` (see the last `error` event).
 */
export type DeviceState =
  | 'ok'
  | 'idle'
  | 'paused'
  | 'stopped'
  | 'starting'
  | 'no device'
  | 'self-test failed'
  | 'error';

export interface DeviceHashrate {
  readonly total: HashrateWindows;
  /** Per worker thread (CPU) or per chip (a board); may be empty. */
  readonly workers: readonly HashrateWindows[];
}

export interface DeviceEvents {
  /** A result, already verified with the reference verifier. */
  found: [found: FoundResult];
  /** A new hashrate sample (about once a second). */
  hashrate: [rate: DeviceHashrate];
  state: [state: DeviceState];
  /** A failure that did not stop the backend (a kernel mismatch, a worker crash, a bad board reply). */
  error: [error: Error];
  /** Every worker reached the end of its nonce range without a result. */
  exhausted: [challengeId: string];
}

export interface DeviceBackend extends EventEmitter<DeviceEvents> {
  /** Stable and unique among the miner's backends, e.g. `cpu`, `serial:3c61053f6a28`. */
  readonly id: string;
  /** `cpu`, `serial`, ... */
  readonly kind: string;
  readonly state: DeviceState;
  /** The job being mined, if any. */
  readonly job: MiningJob | undefined;
  /** Whether this backend can mine a job of this kind (a board may mine only hexchain). */
  supports(job: MiningJob): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Replaces the current job (the previous one ends within one batch); undefined idles. */
  setJob(job: MiningJob | undefined): void;
  pause(): void;
  resume(): void;
  hashrate(): DeviceHashrate;
  /** Hashes (nonce iterations) done since start. */
  totalHashes(): number;
  /** The rate this backend should reach (e.g. its best 60 s average), for dashboards. */
  expectedHashrate(): number | undefined;
  /** When it last produced a verified result (Unix ms). */
  readonly lastFoundAtMs: number | undefined;
}
