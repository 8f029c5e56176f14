import type { Coord } from '../hexchain/coord.js';
import type {
  DeviceCallback,
  DeviceCallbackHealth,
  DeviceCallbackState,
  DeviceWork,
} from '../schemas/device-callbacks.js';
import type { HexBlockEvent, HexDifficultyEvent, HexRetargetEvent } from '../schemas/hexchain-events.js';
import { type SignedDeviceCallback, signDeviceCallback } from './callback.js';

/**
 * Which registered devices to call back, when, and how often (docs/protocol.md 4.17), without
 * I/O: the sender is injected (`httpCallbackSender` in the validator and the status proxy).
 *
 * - It follows each device's current work (the last v4.1 challenge issued to its key) and, when a
 *   block takes that cell or the difficulty falls below the challenge's, sends one node-signed
 *   `work_stale` notification to the device's registered target.
 * - At most one notification per device is in flight; one that comes meanwhile (or during a
 *   back-off) is coalesced with the next (only the newest counts, and only while it is about the
 *   device's current work). A device that does not answer is backed off, doubling from
 *   `backoffMinMs` to `backoffMaxMs`, and the notification is sent again when the back-off ends
 *   (while its challenge lives and is still the device's work); an answer of any status ends
 *   the back-off, a registration resets it. At most `maxInFlight` notifications are in flight
 *   at once, whatever the devices.
 * - The target is given by the caller (the registration's source address and registered port);
 *   nothing in any body can change it.
 */

export interface CallbackTarget {
  /** The address the registration came from (never a host named in a body). */
  readonly address: string;
  /** The registered callback port. */
  readonly port: number;
}

/** How a notification ended: answered with a 2xx, answered otherwise, or not answered. */
export type CallbackOutcome =
  | { readonly delivered: true; readonly status: number }
  | { readonly delivered: false; readonly status?: number; readonly error: string };

/** Sends one notification; always resolves (a transport failure is an outcome). */
export type CallbackSender = (
  target: CallbackTarget,
  message: SignedDeviceCallback,
) => Promise<CallbackOutcome>;

/** How the devices of a registration are called back. */
export type DeviceCallbackMode =
  /** calls go to the target */
  | 'on'
  /** a status proxy relays the device's calls: nothing is sent from here */
  | 'relayed'
  /** a target this validator does not call (e.g. a public address when only private ones are allowed) */
  | 'off'
  /** no callback port */
  | 'none';

export interface DeviceWorkInput {
  readonly challengeId: string;
  readonly coord: Coord;
  readonly difficulty: number;
  /** Unix seconds. */
  readonly issuedAt: number;
  /** Unix seconds. */
  readonly expiresAt: number;
}

/** What happened to one notification (for logs and metrics). */
export interface CallbackSentEvent {
  readonly device: string;
  readonly reason: DeviceCallback['reason'];
  readonly challengeId: string;
  readonly outcome: CallbackOutcome;
  /** From the send to the outcome. */
  readonly ms: number;
}

export interface DeviceCallbacksOptions {
  readonly secretKey: Uint8Array;
  readonly publicKey: Uint8Array;
  readonly send: CallbackSender;
  /** Unix milliseconds (tests inject a clock). */
  readonly now?: () => number;
  /** First back-off after a notification that was not answered (default 1000 ms). */
  readonly backoffMinMs?: number;
  /** Longest back-off (default 300000 ms). */
  readonly backoffMaxMs?: number;
  /** Notifications in flight at once, all devices together (default 64). */
  readonly maxInFlight?: number;
  /** Devices followed at once; the oldest followed is forgotten beyond (default 100000). */
  readonly maxDevices?: number;
  readonly onSent?: (event: CallbackSentEvent) => void;
}

interface Notice {
  readonly reason: DeviceCallback['reason'];
  readonly workSeq: number;
}

interface WorkState extends DeviceWorkInput {
  stale: boolean;
}

interface DeviceState {
  target: CallbackTarget | null;
  mode: DeviceCallbackMode;
  work: WorkState | undefined;
  workSeq: number;
  inFlight: boolean;
  pending: Notice | undefined;
  failures: number;
  retryAt: number;
  seq: number;
  last: 'ok' | 'refused' | 'failing' | undefined;
  sent: number;
  delivered: number;
  refused: number;
  failed: number;
  coalesced: number;
  lastAttemptAt: number | null;
  lastDeliveredAt: number | null;
  lastError: string | null;
  /** Accepted blocks of the last hour: [Unix ms, difficulty]. */
  blocks: [number, number][];
}

const HOUR_MS = 3_600_000;
const coordKey = (c: Coord) => `${c.q},${c.r},${c.s}`;

export class DeviceCallbacks {
  readonly #secretKey: Uint8Array;
  readonly #publicKey: Uint8Array;
  readonly #send: CallbackSender;
  readonly #now: () => number;
  readonly #backoffMin: number;
  readonly #backoffMax: number;
  readonly #maxInFlight: number;
  readonly #maxDevices: number;
  readonly #onSent: ((event: CallbackSentEvent) => void) | undefined;
  readonly #devices = new Map<string, DeviceState>();
  /** Cell -> the devices whose current (fresh) work is there. */
  readonly #byCell = new Map<string, Set<string>>();
  /** Devices with a coalesced notice waiting for capacity or the end of a back-off. */
  readonly #deferred = new Set<string>();
  readonly #running = new Set<Promise<void>>();
  #inFlight = 0;
  #height = 0;
  #difficulty = 0;

  constructor(options: DeviceCallbacksOptions) {
    this.#secretKey = options.secretKey;
    this.#publicKey = options.publicKey;
    this.#send = options.send;
    this.#now = options.now ?? Date.now;
    this.#backoffMin = options.backoffMinMs ?? 1000;
    this.#backoffMax = options.backoffMaxMs ?? 300_000;
    this.#maxInFlight = options.maxInFlight ?? 64;
    this.#maxDevices = options.maxDevices ?? 100_000;
    this.#onSent = options.onSent;
  }

  /** Notifications in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Devices followed. */
  get size(): number {
    return this.#devices.size;
  }

  /** The lattice height and difficulty the notifications report (set by the events). */
  setChain(height: number, difficulty: number): void {
    this.#height = height;
    this.#difficulty = difficulty;
  }

  /**
   * A registration (or what storage says about one): where the device is called back and how.
   * A new registration ends any back-off: the device may have restarted.
   */
  setDevice(pubkey: string, target: CallbackTarget | null, mode: DeviceCallbackMode): void {
    const state = this.#state(pubkey);
    state.target = mode === 'on' ? target : null;
    state.mode = mode;
    state.failures = 0;
    state.retryAt = 0;
    if (state.last === 'failing') state.last = undefined;
    if (state.pending) this.#deferred.add(pubkey);
    this.#drain();
  }

  /** True when a device is followed with a registration (setDevice was called for it). */
  knows(pubkey: string): boolean {
    return this.#devices.has(pubkey);
  }

  /** A v4.1 challenge was issued to the device: its new current work. */
  workIssued(pubkey: string, work: DeviceWorkInput): void {
    const state = this.#state(pubkey);
    this.#unindex(pubkey, state);
    state.work = { ...work, stale: false };
    state.workSeq++;
    state.pending = undefined;
    this.#deferred.delete(pubkey);
    const key = coordKey(work.coord);
    let set = this.#byCell.get(key);
    if (!set) {
      set = new Set();
      this.#byCell.set(key, set);
    }
    set.add(pubkey);
  }

  /**
   * A block was accepted at `coord`: every other device working on that cell is notified
   * (`block`); the miner's own work there is done.
   */
  blockAccepted(block: { coord: Coord; minerPubkey: string; difficulty: number }, height: number): void {
    this.#height = height;
    const now = this.#now();
    const miner = this.#devices.get(block.minerPubkey);
    if (miner) {
      miner.blocks.push([now, block.difficulty]);
      this.#prune(miner, now);
    }
    const set = this.#byCell.get(coordKey(block.coord));
    if (!set) return;
    this.#byCell.delete(coordKey(block.coord));
    for (const pubkey of set) {
      const state = this.#devices.get(pubkey);
      if (!state?.work || state.work.stale) continue;
      state.work.stale = true;
      if (pubkey === block.minerPubkey) continue;
      if (state.work.expiresAt * 1000 < now) continue;
      this.#notify(pubkey, state, 'block');
    }
  }

  /**
   * The difficulty changed (a retarget, or an operator's change): every device whose current
   * challenge is harder than the new difficulty is notified (`retarget`); a new challenge would
   * be cheaper. Challenges at or below it keep their easier target and are left alone.
   */
  difficultyChanged(difficulty: number, height?: number): void {
    this.#difficulty = difficulty;
    if (height !== undefined) this.#height = height;
    const now = this.#now();
    for (const [pubkey, state] of this.#devices) {
      const work = state.work;
      if (!work || work.stale || work.difficulty <= difficulty || work.expiresAt * 1000 < now) continue;
      work.stale = true;
      this.#unindex(pubkey, state);
      this.#notify(pubkey, state, 'retarget');
    }
  }

  /** Sends the coalesced notifications whose back-off has ended (call it every few hundred ms). */
  flush(): void {
    this.#drain();
  }

  /** A device's callbacks (state `none` for a device never registered here). */
  health(pubkey: string): DeviceCallbackHealth {
    const s = this.#devices.get(pubkey);
    const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));
    if (!s) {
      return {
        state: 'none',
        sent: 0,
        delivered: 0,
        refused: 0,
        failed: 0,
        coalesced: 0,
        last_attempt_at: null,
        last_delivered_at: null,
        retry_at: null,
        last_error: null,
      };
    }
    let state: DeviceCallbackState;
    if (s.mode === 'none') state = 'none';
    else if (s.mode === 'relayed') state = 'relayed';
    else if (s.mode === 'off') state = 'off';
    else state = s.last ?? 'idle';
    return {
      state,
      sent: s.sent,
      delivered: s.delivered,
      refused: s.refused,
      failed: s.failed,
      coalesced: s.coalesced,
      last_attempt_at: seconds(s.lastAttemptAt),
      last_delivered_at: seconds(s.lastDeliveredAt),
      retry_at: s.retryAt > this.#now() ? seconds(s.retryAt) : null,
      last_error: s.lastError,
    };
  }

  /** A device's current work as followed here, or null. */
  work(pubkey: string): DeviceWork | null {
    const w = this.#devices.get(pubkey)?.work;
    if (!w) return null;
    return {
      challenge_id: w.challengeId,
      coord: w.coord,
      difficulty: w.difficulty,
      issued_at: w.issuedAt,
      expires_at: w.expiresAt,
      stale: w.stale,
    };
  }

  /** The device's accepted blocks of the last hour and the hash rate they stand for. */
  blockRate(pubkey: string): { blocks: number; hashrate: number | null } {
    const s = this.#devices.get(pubkey);
    if (!s) return { blocks: 0, hashrate: null };
    this.#prune(s, this.#now());
    if (s.blocks.length === 0) return { blocks: 0, hashrate: null };
    const work = s.blocks.reduce((sum, [, d]) => sum + d, 0);
    return { blocks: s.blocks.length, hashrate: Math.round(work / (HOUR_MS / 1000)) };
  }

  /** Resolves when every notification in flight has ended (each is bounded by the sender's timeout). */
  async close(): Promise<void> {
    this.#deferred.clear();
    await Promise.all([...this.#running]);
  }

  #state(pubkey: string): DeviceState {
    let state = this.#devices.get(pubkey);
    if (state) return state;
    if (this.#devices.size >= this.#maxDevices) {
      // Forget the device followed longest ago that has nothing in flight.
      for (const [old, s] of this.#devices) {
        if (s.inFlight) continue;
        this.#unindex(old, s);
        this.#deferred.delete(old);
        this.#devices.delete(old);
        break;
      }
    }
    state = {
      target: null,
      mode: 'none',
      work: undefined,
      workSeq: 0,
      inFlight: false,
      pending: undefined,
      failures: 0,
      retryAt: 0,
      seq: 0,
      last: undefined,
      sent: 0,
      delivered: 0,
      refused: 0,
      failed: 0,
      coalesced: 0,
      lastAttemptAt: null,
      lastDeliveredAt: null,
      lastError: null,
      blocks: [],
    };
    this.#devices.set(pubkey, state);
    return state;
  }

  #unindex(pubkey: string, state: DeviceState): void {
    if (!state.work) return;
    const key = coordKey(state.work.coord);
    const set = this.#byCell.get(key);
    if (!set) return;
    set.delete(pubkey);
    if (set.size === 0) this.#byCell.delete(key);
  }

  #prune(state: DeviceState, now: number): void {
    const from = now - HOUR_MS;
    while (state.blocks.length > 0 && state.blocks[0]![0] < from) state.blocks.shift();
    if (state.blocks.length > 10_000) state.blocks.splice(0, state.blocks.length - 10_000);
  }

  #notify(pubkey: string, state: DeviceState, reason: Notice['reason']): void {
    if (state.mode !== 'on' || !state.target) return;
    const notice: Notice = { reason, workSeq: state.workSeq };
    if (state.inFlight || this.#now() < state.retryAt || this.#inFlight >= this.#maxInFlight) {
      if (state.pending) state.coalesced++;
      state.pending = notice;
      this.#deferred.add(pubkey);
      return;
    }
    this.#sendNow(pubkey, state, notice);
  }

  #sendNow(pubkey: string, state: DeviceState, notice: Notice): void {
    const work = state.work;
    const target = state.target;
    if (!work || !target || notice.workSeq !== state.workSeq) return;
    const now = this.#now();
    const callback: DeviceCallback = {
      type: 'work_stale',
      reason: notice.reason,
      device: pubkey,
      challenge_id: work.challengeId,
      coord: work.coord,
      height: this.#height,
      difficulty: this.#difficulty,
      sent_at: now,
      seq: ++state.seq,
    };
    const message = signDeviceCallback(callback, this.#secretKey, this.#publicKey);
    state.inFlight = true;
    state.sent++;
    state.lastAttemptAt = now;
    this.#inFlight++;
    const run = this.#send(target, message)
      .catch((error: unknown): CallbackOutcome => ({ delivered: false, error: String(error) }))
      .then((outcome) => {
        this.#finish(pubkey, state, notice, outcome);
        this.#onSent?.({
          device: pubkey,
          reason: notice.reason,
          challengeId: work.challengeId,
          outcome,
          ms: this.#now() - now,
        });
      });
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  #finish(pubkey: string, state: DeviceState, notice: Notice, outcome: CallbackOutcome): void {
    const now = this.#now();
    state.inFlight = false;
    this.#inFlight--;
    if (outcome.delivered) {
      state.delivered++;
      state.lastDeliveredAt = now;
      state.failures = 0;
      state.retryAt = 0;
      state.last = 'ok';
    } else if (outcome.status !== undefined) {
      // Answered: the device is alive, only unwilling; no back-off.
      state.refused++;
      state.failures = 0;
      state.retryAt = 0;
      state.last = 'refused';
      state.lastError = outcome.error;
    } else {
      state.failed++;
      state.failures++;
      state.retryAt =
        now + Math.min(this.#backoffMax, this.#backoffMin * 2 ** Math.min(state.failures - 1, 30));
      state.last = 'failing';
      state.lastError = outcome.error;
      // Not delivered: sent again when the back-off ends, while it is about the current work
      // (a newer notice, if one came meanwhile, is the one kept).
      state.pending ??= notice;
    }
    if (state.pending) this.#deferred.add(pubkey);
    this.#drain();
  }

  #drain(): void {
    if (this.#deferred.size === 0) return;
    const now = this.#now();
    for (const pubkey of this.#deferred) {
      if (this.#inFlight >= this.#maxInFlight) return;
      const state = this.#devices.get(pubkey);
      if (!state?.pending || state.mode !== 'on') {
        this.#deferred.delete(pubkey);
        continue;
      }
      if (state.inFlight || now < state.retryAt) continue;
      const notice = state.pending;
      state.pending = undefined;
      this.#deferred.delete(pubkey);
      // Only about the current work, and only while its challenge lives.
      if (notice.workSeq !== state.workSeq || !state.work || state.work.expiresAt * 1000 < now) continue;
      this.#sendNow(pubkey, state, notice);
    }
  }
}

/**
 * Hands one event of the hexchain's event stream (docs/protocol.md 4.12: `block`, `retarget`,
 * `difficulty`) to `callbacks`; other events are ignored. The validator listens to its own hub,
 * the status proxy to the stream it re-serves.
 */
export function followHexEvent(callbacks: DeviceCallbacks, event: string, data: unknown): void {
  if (event === 'block') {
    const e = data as HexBlockEvent;
    callbacks.blockAccepted(
      { coord: e.block.coord, minerPubkey: e.block.miner_pubkey, difficulty: e.block.difficulty },
      e.height,
    );
  } else if (event === 'retarget') {
    const e = data as HexRetargetEvent;
    callbacks.difficultyChanged(e.to, e.height);
  } else if (event === 'difficulty') {
    callbacks.difficultyChanged((data as HexDifficultyEvent).to);
  }
}
