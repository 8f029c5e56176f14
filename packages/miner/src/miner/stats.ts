import type { DeviceHashrate, DeviceState, DeviceUnitInfo } from '../device.js';
import type { FoundResult } from '../found.js';
import type { HashrateWindows } from '../hashrate.js';

/** Submission outcomes of the results a device (or unit) found. */
export interface DeviceOutcomes {
  readonly accepted: number;
  readonly rejected: number;
  /** Rejections by validator error code, most frequent first. */
  readonly rejectedReasons: readonly { readonly code: string; readonly count: number }[];
}

export interface DeviceSummary extends DeviceOutcomes {
  readonly id: string;
  readonly kind: string;
  readonly state: DeviceState;
  readonly hashrate: DeviceHashrate;
  readonly totalHashes: number;
  readonly expectedHashrate: number | undefined;
  readonly lastFoundAtMs: number | undefined;
  /** Its units (the boards of the serial fleet), each with its counters and outcomes. */
  readonly units?: readonly (DeviceUnitInfo & DeviceOutcomes)[];
}

export interface MinerStats {
  readonly running: boolean;
  readonly paused: boolean;
  readonly connected: boolean;
  readonly accepted: number;
  readonly rejected: number;
  /** Rejections by validator error code, most frequent first. */
  readonly rejectedReasons: readonly { readonly code: string; readonly count: number }[];
  /** The highest achievedDifficulty of any verified result. */
  readonly bestDifficulty: number | undefined;
  readonly lastLatencyMs: number | undefined;
  readonly averageLatencyMs: number | undefined;
  readonly journalSize: number;
  /** Pool shares waiting for a submission slot. */
  readonly sharesQueued: number;
  /** Pool shares dropped unsent since the start (each drop was reported: `shares-dropped`). */
  readonly sharesDropped: number;
  /** Seconds since start; once stopped, how long it ran (0 before the first start). */
  readonly uptimeSeconds: number;
  readonly job:
    | {
        readonly challengeId: string;
        readonly protocolVersion: '4.0' | '4.1';
        readonly difficulty: number;
        readonly expiresAtMs: number;
      }
    | undefined;
  readonly hashrate: HashrateWindows;
  readonly expectedHashrate: number | undefined;
  readonly devices: readonly DeviceSummary[];
  readonly validatorUrl: string | undefined;
}

interface Outcomes {
  accepted: number;
  rejected: number;
  reasons: Map<string, number>;
}

/**
 * The Miner's statistics: results accepted and rejected (in all, by reason, per device id: a
 * backend or a board of the fleet), the best difficulty found, the submission latency.
 */
export class MinerStatistics {
  #accepted = 0;
  #rejected = 0;
  readonly #reasons = new Map<string, number>();
  /** Outcomes per device id (a found result's `device`: a backend, or a board of the fleet). */
  readonly #outcomes = new Map<string, Outcomes>();
  #best: number | undefined;
  #lastLatencyMs: number | undefined;
  #latencyTotal = 0;
  #latencyCount = 0;

  get accepted(): number {
    return this.#accepted;
  }

  get rejected(): number {
    return this.#rejected;
  }

  /** The highest achievedDifficulty of any verified result. */
  get bestDifficulty(): number | undefined {
    return this.#best;
  }

  get lastLatencyMs(): number | undefined {
    return this.#lastLatencyMs;
  }

  get averageLatencyMs(): number | undefined {
    return this.#latencyCount === 0 ? undefined : this.#latencyTotal / this.#latencyCount;
  }

  /** Rejections by validator error code, most frequent first. */
  get rejectedReasons(): { code: string; count: number }[] {
    return byCount(this.#reasons);
  }

  /** A verified result (before it is submitted). */
  found(found: FoundResult): void {
    if (this.#best === undefined || found.achievedDifficulty > this.#best)
      this.#best = found.achievedDifficulty;
  }

  /** The round trip of a submission the validator answered. */
  latency(ms: number): void {
    this.#lastLatencyMs = ms;
    this.#latencyTotal += ms;
    this.#latencyCount++;
  }

  accept(found: FoundResult): void {
    this.#accepted++;
    this.#outcomesOf(found.device).accepted++;
  }

  reject(found: FoundResult, code: string): void {
    this.#rejected++;
    this.#reasons.set(code, (this.#reasons.get(code) ?? 0) + 1);
    const mine = this.#outcomesOf(found.device);
    mine.rejected++;
    mine.reasons.set(code, (mine.reasons.get(code) ?? 0) + 1);
  }

  /** The outcomes of these device ids together. */
  outcomeSummary(ids: readonly string[]): DeviceOutcomes {
    let accepted = 0;
    let rejected = 0;
    const reasons = new Map<string, number>();
    for (const id of ids) {
      const o = this.#outcomes.get(id);
      if (!o) continue;
      accepted += o.accepted;
      rejected += o.rejected;
      for (const [code, n] of o.reasons) reasons.set(code, (reasons.get(code) ?? 0) + n);
    }
    return { accepted, rejected, rejectedReasons: byCount(reasons) };
  }

  #outcomesOf(device: string): Outcomes {
    let o = this.#outcomes.get(device);
    if (!o) {
      o = { accepted: 0, rejected: 0, reasons: new Map() };
      this.#outcomes.set(device, o);
    }
    return o;
  }
}

function byCount(reasons: ReadonlyMap<string, number>): { code: string; count: number }[] {
  return [...reasons].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count);
}
