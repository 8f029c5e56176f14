import type { DeviceState, DeviceUnitCounters, FoundResult, HashrateWindows } from '@tensormine/miner';
import type { SelfTestReport, SessionStats } from './session.js';

/** What a board is and has done, as `SerialDeviceBackend.info()` and `miner devices` show it. */

/** The state of one board: the miner's DeviceState, with `connecting` for `starting`. */
export type BoardState = Exclude<DeviceState, 'starting'> | 'connecting';

/** Something that stores a result durably before the board's RESULT is acknowledged (the miner's Journal fits). */
export interface ResultJournal {
  add(found: FoundResult): Promise<void>;
}

export interface BoardStats {
  /** RESULT messages handled (after link-level deduplication). */
  results: number;
  /** Verified results emitted as `found`. */
  found: number;
  /** RESULTs the reference verifier rejected or whose fields differ from the reference. */
  wrongResults: number;
  /** RESULTs for a result already emitted (e.g. kept across a reboot and sent again). */
  duplicates: number;
  /** RESULTs for a job id this host does not know. */
  unknownJobs: number;
  /** Valid RESULTs for a solo challenge that already had its result (not emitted: it takes one). */
  staleResults: number;
  /** Jobs sent to the board. */
  jobsSent: number;
  /** ERROR messages and refused jobs. */
  deviceErrors: number;
  /** Times the board rebooted (BOOT during a session). */
  reboots: number;
  /** Times the link was lost. */
  linkLosses: number;
}

/** What `miner devices` shows for a board. */
export interface BoardInfo {
  readonly id: string;
  readonly chipId: string;
  readonly port: string | undefined;
  readonly state: BoardState;
  readonly firmware: string;
  readonly board: string;
  readonly capabilities: readonly string[];
  readonly maxDim: number;
  readonly maxFilters: number;
  /** Rates the board reported in HELLO, nonces per second. */
  readonly hexRate: number;
  readonly tensorRate: number;
  readonly maxBaud: number;
  readonly baudRate: number | undefined;
  /** The rate of the last PROGRESS, nonces per second. */
  readonly rate: number | undefined;
  readonly hashrate: HashrateWindows;
  readonly totalHashes: number;
  readonly lastFoundAtMs: number | undefined;
  /** The last job the board verifiably worked on, and when (kept while the board is away). */
  readonly lastValidWork: { readonly challengeId: string; readonly atMs: number } | undefined;
  readonly selfTest: SelfTestReport | undefined;
  readonly stats: BoardStats;
  /** cgminer-style counters over every connection of the board (ports and replugs included). */
  readonly counters: DeviceUnitCounters;
  readonly link: SessionStats | undefined;
}
