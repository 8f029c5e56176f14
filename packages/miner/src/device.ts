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
 * that failed its known-answer test); `self-test` (a board whose known-answer test only ran out
 * of time: no work until it passes, tried again with backoff; its unit's `selfTest` says why and
 * when); `error` (see the last `error` event).
 */
export type DeviceState =
  | 'ok'
  | 'idle'
  | 'paused'
  | 'stopped'
  | 'starting'
  | 'no device'
  | 'self-test failed'
  | 'self-test'
  | 'error';

export interface DeviceHashrate {
  readonly total: HashrateWindows;
  /** Per worker thread (CPU) or per chip (a board); may be empty. */
  readonly workers: readonly HashrateWindows[];
}

/**
 * What happened to one unit of a backend that drives several (a board of the serial fleet),
 * for log lines an operator reads: `attached` (first seen), `lost` (unplugged, silent, port
 * gone), `back` (after `lost`), `rebooted` (the board restarted under us), `self-test-failed`
 * (connected, given no work), `link-degraded` (CRC errors, resyncs or retransmissions piling up).
 */
export type DeviceNoticeKind =
  | 'attached'
  | 'lost'
  | 'back'
  | 'rebooted'
  | 'self-test-failed'
  | 'link-degraded';

export interface DeviceNotice {
  readonly kind: DeviceNoticeKind;
  /** The unit, e.g. `serial:02a1b2c3d4e50000`. */
  readonly unit: string;
  /** The board's chip id (16 hex digits), when the unit is a board. */
  readonly chipId?: string;
  /** The port it is (or was last) on. */
  readonly port?: string;
  /** Why, in words (`no valid frame for 3000 ms`, `power-on`, `4 CRC errors in 10 s`). */
  readonly message: string;
}

/** Per-unit counters, cgminer style: what went wrong on a board and its link. */
export interface DeviceUnitCounters {
  /** Verified results the unit found (emitted as `found`). */
  readonly found: number;
  /** Results the reference verifier rejected: the board computed wrongly (cgminer's HW errors). */
  readonly hardwareErrors: number;
  /** Frames dropped for a bad CRC. */
  readonly crcErrors: number;
  /** Times the receiver resynchronised (a false start or a stale partial frame dropped). */
  readonly resyncs: number;
  /** Frames sent again: by the host (no ACK in time) and by the board (results resent). */
  readonly retransmissions: number;
  readonly reboots: number;
  readonly linkLosses: number;
}

/** Why a unit's known-answer self-test did not pass (states `self-test failed` and `self-test`). */
export interface DeviceSelfTest {
  /** In words, e.g. `hex: no RESULT within 3000 ms`, `hex: wrong RESULT`. */
  readonly reason: string;
  /** When it is tried again (Unix ms): set when the test only ran out of time. */
  readonly retryAtMs?: number;
}

/** One unit of a backend that drives several (`DeviceBackend.units()`). */
export interface DeviceUnitInfo {
  readonly id: string;
  readonly kind: string;
  readonly state: DeviceState;
  readonly chipId?: string;
  readonly port?: string;
  /** What the unit reported about itself (a board's HELLO). */
  readonly firmware?: string;
  readonly board?: string;
  readonly hashrate: HashrateWindows;
  readonly totalHashes: number;
  readonly expectedHashrate: number | undefined;
  readonly lastFoundAtMs: number | undefined;
  readonly counters: DeviceUnitCounters;
  /** Set while the unit's self-test has failed or waits to be tried again (states `self-test failed`, `self-test`). */
  readonly selfTest?: DeviceSelfTest;
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
  /** Something happened to one of the backend's units (a board attached, lost, rebooted...). */
  notice: [notice: DeviceNotice];
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
  /** The units of a backend that drives several (the boards of the serial fleet), each with its counters. */
  units?(): readonly DeviceUnitInfo[];
}
