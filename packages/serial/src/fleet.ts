import { EventEmitter } from 'node:events';
import {
  type DeviceBackend,
  type DeviceEvents,
  type DeviceHashrate,
  type DeviceState,
  type DeviceUnitInfo,
  type FoundResult,
  type MiningJob,
  sumWindows,
} from '@tensormine/miner';
import { SerialDeviceBackend } from './backend.js';
import type { BindingInterface } from './binding.js';
import type { BoardInfo, ResultJournal } from './board-info.js';
import type { HelloMessage } from './codec/messages.js';
import { NonceCursor } from './cursor.js';
import {
  ESP32_USB_SERIAL_CHIPS,
  listBoardPorts,
  listPorts,
  noBoardsHelp,
  type UsbSerialChip,
} from './discovery.js';
import { SerialError } from './errors.js';
import { BoardSession, chipIdHex, type SerialTiming, type SessionState } from './session.js';

export interface SerialFleetOptions {
  /** The backend id the Miner sees (default `serial`). */
  readonly id?: string;
  /** Find boards by their USB chip (ESP32_USB_SERIAL_CHIPS); default true when no `ports` are given. */
  readonly auto?: boolean;
  /** Ports to use whatever their USB ids (e.g. `/dev/ttyUSB0`, a pseudo-terminal); never dropped. */
  readonly ports?: readonly string[];
  readonly binding?: BindingInterface;
  /** The chips `auto` looks for (default ESP32_USB_SERIAL_CHIPS). */
  readonly chips?: readonly UsbSerialChip[];
  /** How often to list the ports for added and removed boards, ms (default 2000). */
  readonly pollIntervalMs?: number;
  /** Negotiate this baud rate with each board (section 6); default 115200 (none). */
  readonly baudRate?: number;
  /** Run the known-answer self-test at connect (default true). */
  readonly selfTest?: boolean;
  readonly timing?: Partial<SerialTiming>;
  readonly controlLines?: { readonly dtr: boolean; readonly rts: boolean } | false;
  /** Target duration of one board job, ms (default 3000). */
  readonly jobMs?: number;
  /** Results are made durable here before a board's RESULT is acknowledged (e.g. `() => miner.journal`). */
  readonly journal?: ResultJournal | (() => ResultJournal | undefined);
  readonly sampleIntervalMs?: number;
}

/** Board arrivals and departures (`fleet.boardEvents`). */
export interface FleetBoardEvents {
  /** A board seen for the first time (by chip id). */
  board: [board: SerialDeviceBackend];
  /** A board is on a port (at first sight, and again after a replug, maybe on another port). */
  attached: [board: SerialDeviceBackend, path: string];
  /** A port's board is gone (the port disappeared from the listing). */
  detached: [board: SerialDeviceBackend, path: string];
}

/** A port the fleet has open, with its board if it identified itself. */
export interface FleetPort {
  readonly path: string;
  readonly state: SessionState;
  readonly chipId: string | undefined;
  readonly explicit: boolean;
  readonly lastError: string | undefined;
}

/**
 * Every serial mining board of this machine as one miner `DeviceBackend`: it lists the ports
 * every `pollIntervalMs` (hotplug), opens a BoardSession on each port whose USB chip is an
 * ESP32 bridge (and on the ports named explicitly), and gives each board, identified by the
 * chip id of its HELLO, one SerialDeviceBackend that keeps its id and counters across
 * unplugs and ports. The Miner gives the fleet a job's nonce range; the boards take chunks of
 * it sized to their own rates. `boards()` is what `miner devices` lists.
 */
export class SerialFleet extends EventEmitter<DeviceEvents> implements DeviceBackend {
  readonly id: string;
  readonly kind = 'serial';
  /** `board`, `attached`, `detached`. */
  readonly boardEvents = new EventEmitter<FleetBoardEvents>();
  private readonly options: SerialFleetOptions;
  private readonly explicit: ReadonlySet<string>;
  private readonly auto: boolean;
  private readonly sessions = new Map<string, BoardSession>();
  private readonly duplicates = new Set<string>();
  private readonly byChip = new Map<string, SerialDeviceBackend>();
  private running = false;
  private paused = false;
  private current: MiningJob | undefined;
  private cursor: NonceCursor | undefined;
  private exhaustedFor: MiningJob | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private sampleTimer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private stateValue: DeviceState = 'stopped';
  lastError: Error | undefined;

  constructor(options: SerialFleetOptions = {}) {
    super();
    this.options = options;
    this.id = options.id ?? 'serial';
    this.explicit = new Set(options.ports ?? []);
    this.auto = options.auto ?? this.explicit.size === 0;
  }

  get state(): DeviceState {
    return this.stateValue;
  }

  get job(): MiningJob | undefined {
    return this.current;
  }

  get lastFoundAtMs(): number | undefined {
    let last: number | undefined;
    for (const b of this.byChip.values()) {
      if (b.lastFoundAtMs !== undefined && (last === undefined || b.lastFoundAtMs > last))
        last = b.lastFoundAtMs;
    }
    return last;
  }

  /** The boards seen so far (connected or not), in order of first sight. */
  backends(): SerialDeviceBackend[] {
    return [...this.byChip.values()];
  }

  /** The board with this chip id (16 hex digits). */
  board(chipId: string): SerialDeviceBackend | undefined {
    return this.byChip.get(chipId.toLowerCase());
  }

  /** Every board seen, as units of this backend (the miner's stats, the control API). */
  units(): DeviceUnitInfo[] {
    return this.backends().map((b) => b.unitInfo());
  }

  /** Every board seen, for `miner devices`. */
  boards(): BoardInfo[] {
    return this.backends().map((b) => b.info());
  }

  /** The ports open now, with or without an identified board. */
  ports(): FleetPort[] {
    return [...this.sessions.values()].map((s) => ({
      path: s.path,
      state: s.state,
      chipId: s.hello ? chipIdHex(s.hello) : undefined,
      explicit: this.explicit.has(s.path),
      lastError: s.lastError?.message,
    }));
  }

  /**
   * When `auto` finds no board port and none is open: what it looked for, the ports it saw and
   * how to fix permissions (docs/udev/99-tensormine.rules); otherwise nothing.
   */
  async noBoardsHelp(): Promise<string[]> {
    if (!this.auto || this.sessions.size > 0 || this.byChip.size > 0) return [];
    const chips = this.options.chips ?? ESP32_USB_SERIAL_CHIPS;
    const ports = await listPorts(this.options.binding).catch(() => []);
    return noBoardsHelp(ports, chips);
  }

  /** A board can run the job, or no board is known yet (a board that arrives later gets it). */
  supports(job: MiningJob): boolean {
    if (this.byChip.size === 0) return true;
    return this.backends().some((b) => b.supports(job));
  }

  /** Lists the ports and opens the boards; resolves after the first listing (boards connect in the background). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.updateState();
    for (const b of this.byChip.values()) await b.start();
    await this.poll();
    const interval = this.options.pollIntervalMs ?? 2000;
    this.pollTimer = setInterval(() => void this.poll(), interval);
    this.pollTimer.unref();
    this.sampleTimer = setInterval(
      () => this.emit('hashrate', this.hashrate()),
      this.options.sampleIntervalMs ?? 1000,
    );
    this.sampleTimer.unref();
  }

  /** Stops every board and closes every port. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.pollTimer);
    clearInterval(this.sampleTimer);
    await this.polling;
    await Promise.all(this.backends().map((b) => b.stop()));
    await Promise.all([...this.sessions.values()].map((s) => s.close()));
    for (const b of this.byChip.values()) b.detach();
    this.sessions.clear();
    this.updateState();
  }

  /**
   * Resolves when every open port has finished connecting (its board is ready, failed its
   * self-test or is absent), or after `timeoutMs` (a board whose self-test timed out and waits
   * to try again is still connecting).
   */
  async settled(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const busy = [...this.sessions.values()].some(
        (s) =>
          s.state === 'connecting' || s.state === 'self-test' || (s.state === 'no device' && !s.lastError),
      );
      if (!busy) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  setJob(job: MiningJob | undefined): void {
    this.current = job;
    this.cursor = job === undefined ? undefined : new NonceCursor(job);
    this.exhaustedFor = undefined;
    for (const b of this.byChip.values()) b.assign(job, this.cursor);
    this.updateState();
  }

  pause(): void {
    this.paused = true;
    for (const b of this.byChip.values()) b.pause();
  }

  resume(): void {
    this.paused = false;
    for (const b of this.byChip.values()) b.resume();
  }

  hashrate(): DeviceHashrate {
    const totals = this.backends().map((b) => b.hashrate().total);
    return { total: sumWindows(totals), workers: totals };
  }

  totalHashes(): number {
    let total = 0;
    for (const b of this.byChip.values()) total += b.totalHashes();
    return total;
  }

  expectedHashrate(): number | undefined {
    let sum: number | undefined;
    for (const b of this.byChip.values()) {
      const e = b.expectedHashrate();
      if (e !== undefined) sum = (sum ?? 0) + e;
    }
    return sum;
  }

  /** Lists the ports once: opens the new ones, closes those that disappeared. */
  poll(): Promise<void> {
    if (!this.polling) {
      this.polling = this.pollOnce().finally(() => {
        this.polling = undefined;
      });
    }
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    const wanted = new Set(this.explicit);
    if (this.auto) {
      try {
        const found = await listBoardPorts(
          this.options.binding,
          this.options.chips ?? ESP32_USB_SERIAL_CHIPS,
        );
        for (const p of found) wanted.add(p.path);
      } catch (error) {
        this.report(new SerialError('port_failed', `cannot list serial ports: ${(error as Error).message}`));
        return;
      }
    }
    if (!this.running) return;
    for (const path of wanted) {
      if (!this.sessions.has(path) && !this.duplicates.has(path)) this.open(path);
    }
    for (const [path, session] of this.sessions) {
      if (wanted.has(path)) continue;
      this.sessions.delete(path);
      for (const b of this.byChip.values()) {
        if (b.attachedSession === session) {
          b.detach();
          this.boardEvents.emit('detached', b, path);
        }
      }
      await session.close();
    }
    for (const path of this.duplicates) if (!wanted.has(path)) this.duplicates.delete(path);
    this.updateState();
  }

  private open(path: string): void {
    const o = this.options;
    const session = new BoardSession({
      path,
      ...(o.binding ? { binding: o.binding } : {}),
      ...(o.baudRate === undefined ? {} : { baudRate: o.baudRate }),
      ...(o.selfTest === undefined ? {} : { selfTest: o.selfTest }),
      ...(o.timing ? { timing: o.timing } : {}),
      ...(o.controlLines === undefined ? {} : { controlLines: o.controlLines }),
    });
    this.sessions.set(path, session);
    session.on('hello', (hello) => this.identify(session, hello));
    session.on('state', () => this.updateState());
    session.on('error', () => {}); // a board's errors are reported by its backend once identified
    session.start();
  }

  private identify(session: BoardSession, hello: HelloMessage): void {
    const chip = chipIdHex(hello);
    let board = this.byChip.get(chip);
    if (!board) {
      board = new SerialDeviceBackend({
        hello,
        ...(this.options.jobMs === undefined ? {} : { jobMs: this.options.jobMs }),
        ...(this.options.journal === undefined ? {} : { journal: this.options.journal }),
        ...(this.options.sampleIntervalMs === undefined
          ? {}
          : { sampleIntervalMs: this.options.sampleIntervalMs }),
      });
      this.byChip.set(chip, board);
      this.wire(board);
      if (this.paused) board.pause();
      if (this.running) void board.start();
      board.assign(this.current, this.cursor);
      this.boardEvents.emit('board', board);
    }
    const previous = board.attachedSession;
    if (previous === session) return;
    if (previous && previous.state === 'ready' && this.sessions.get(previous.path) === previous) {
      // The same board answers on two ports (a symlink named explicitly): keep the first.
      this.report(
        new SerialError(
          'device_error',
          `${session.path}: board ${chip} is already open on ${previous.path}; ignoring this port`,
        ),
      );
      this.sessions.delete(session.path);
      this.duplicates.add(session.path);
      void session.close();
      return;
    }
    // Another session for this chip (detached from it): make sure it no longer claims the board.
    for (const b of this.byChip.values()) if (b !== board && b.attachedSession === session) b.detach();
    board.attach(session);
    this.boardEvents.emit('attached', board, session.path);
    this.updateState();
  }

  private wire(board: SerialDeviceBackend): void {
    board.on('found', (found: FoundResult) => {
      this.emit('found', found);
      const job = this.current;
      if (job && found.challengeId === job.challengeId && (job.stopOnFound ?? true)) this.setJob(undefined);
    });
    board.on('error', (error) => this.report(error));
    board.on('notice', (notice) => this.emit('notice', notice));
    board.on('state', () => this.updateState());
    board.on('exhausted', (challengeId) => {
      const job = this.current;
      if (!job || job.challengeId !== challengeId || this.exhaustedFor === job) return;
      if (!this.cursor?.exhausted || this.backends().some((b) => b.busy)) return;
      this.exhaustedFor = job;
      this.emit('exhausted', challengeId);
    });
  }

  private updateState(): void {
    let state: DeviceState;
    const states = new Set(this.backends().map((b) => b.state));
    const connecting = [...this.sessions.values()].some(
      (s) => s.state === 'connecting' || s.state === 'self-test',
    );
    if (!this.running) state = 'stopped';
    else if (states.has('ok')) state = 'ok';
    else if (states.has('paused')) state = 'paused';
    else if (states.has('idle')) state = 'idle';
    else if (connecting || states.has('starting')) state = 'starting';
    else if (states.has('self-test failed')) state = 'self-test failed';
    else state = 'no device';
    if (state === this.stateValue) return;
    this.stateValue = state;
    this.emit('state', state);
  }

  private report(error: Error): void {
    this.lastError = error;
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }
}
