import { randomInt } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { BindingInterface } from './binding.js';
import type { DecoderStats } from './codec/decoder.js';
import type { Frame } from './codec/frame.js';
import {
  type BootMessage,
  type DeviceMessage,
  decodeMessage,
  ERROR_NAMES,
  type ErrorMessage,
  encodeMessageFrame,
  type HelloMessage,
  type HostMessage,
  isHostMessage,
  type JobDoneMessage,
  type JobHexMessage,
  type JobTensorMessage,
  MESSAGE_TYPES,
  type ProgressMessage,
  type ResultMessage,
} from './codec/messages.js';
import { SerialError } from './errors.js';
import { knownAnswerJobs, resultDifference, sameResult } from './selftest.js';
import { DEFAULT_BAUD_RATE, SerialTransport } from './transport.js';

/**
 * The timing of a session. The defaults are the figures of docs/serial-protocol.md; tests
 * shorten them.
 */
export interface SerialTiming {
  /** Wait for BOOT/HELLO after opening, ms (3000, section 1). */
  readonly helloWaitMs: number;
  /** Wait for HELLO after each HELLO_REQ, ms (1000). */
  readonly helloRetryMs: number;
  /** HELLO_REQ tries (3, section 7). */
  readonly helloTries: number;
  /** Retransmit an unacknowledged frame after, ms (250, section 3). */
  readonly ackTimeoutMs: number;
  /** Retransmissions before the link counts as lost (8, section 3). */
  readonly retransmits: number;
  /** No valid frame for this long means the board is gone, ms (3000, section 4). */
  readonly heartbeatTimeoutMs: number;
  /** After this long without a frame, ask for HELLO (an idle board talks only every 5 s), ms (1500). */
  readonly probeAfterMs: number;
  /** Between two such probes, ms (500). */
  readonly probeIntervalMs: number;
  /** Reconnect backoff: first and longest delay, ms (500, 15 000). */
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
  /** After the SET_BAUD ACK: wait before HELLO_REQ at the new rate (the board switches after 50 ms), ms (100). */
  readonly baudSettleMs: number;
  /** Wait for HELLO at the new rate, ms (1000, section 6). */
  readonly baudHelloTimeoutMs: number;
  /** After falling back to 115200, wait for the board to fall back too, ms (2500: it waits 2 s). */
  readonly baudFallbackMs: number;
  /** The least time a self-test job may take before it times out, ms (3000). */
  readonly selfTestMinMs: number;
  /** After a self-test that timed out: first and longest wait before the next try, ms (5000, 60 000). */
  readonly selfTestRetryMinMs: number;
  readonly selfTestRetryMaxMs: number;
  /** The decoder's partial-frame timeout, ms (1000, section 2). */
  readonly partialFrameTimeoutMs: number;
}

export const DEFAULT_TIMING: SerialTiming = {
  helloWaitMs: 3000,
  helloRetryMs: 1000,
  helloTries: 3,
  ackTimeoutMs: 250,
  retransmits: 8,
  heartbeatTimeoutMs: 3000,
  probeAfterMs: 1500,
  probeIntervalMs: 500,
  reconnectMinMs: 500,
  reconnectMaxMs: 15_000,
  baudSettleMs: 100,
  baudHelloTimeoutMs: 1000,
  baudFallbackMs: 2500,
  selfTestMinMs: 3000,
  selfTestRetryMinMs: 5000,
  selfTestRetryMaxMs: 60_000,
  partialFrameTimeoutMs: 1000,
};

/**
 * `connecting` opening the port and waiting for HELLO; `self-test` running the known-answer
 * test, or waiting to run it again after it timed out (`lastSelfTest.retryInMs`); `ready`
 * identified and tested: it takes work; `self-test failed` the board answered wrongly: connected
 * but given no work, for good; `no device` the link is down (reconnecting with backoff);
 * `closed` by `close()`.
 */
export type SessionState = 'connecting' | 'self-test' | 'ready' | 'self-test failed' | 'no device' | 'closed';

export interface SelfTestReport {
  readonly ok: boolean;
  /** The kinds tested ('hex', 'tensor'); empty when the test was skipped. */
  readonly tested: readonly string[];
  /** Why it failed. */
  readonly reason?: string;
  /**
   * Set when the test only ran out of time (no JOB_DONE/RESULT within its budget): the board
   * proved nothing wrong, and the test runs again after this many ms (state stays `self-test`).
   */
  readonly retryInMs?: number;
  /** With `retryInMs`: when the next try starts (Unix ms), for views that outlive the moment. */
  readonly retryAtMs?: number;
  readonly ms: number;
}

export interface BoardSessionOptions {
  readonly path: string;
  readonly binding?: BindingInterface;
  /** Negotiate this rate after HELLO (section 6) when it is above 115200 and the board accepts it. */
  readonly baudRate?: number;
  /** Run the known-answer self-test at connect (default true). */
  readonly selfTest?: boolean;
  /** Reconnect with backoff after the link is lost (default true). */
  readonly reconnect?: boolean;
  readonly timing?: Partial<SerialTiming>;
  readonly controlLines?: { readonly dtr: boolean; readonly rts: boolean } | false;
  readonly now?: () => number;
}

export interface SessionEvents {
  state: [state: SessionState];
  /** Every valid frame as it arrives, before it is acted on (logs, timing). */
  frame: [frame: Frame];
  /** The board identified itself (at connect, and again after a reboot). */
  hello: [hello: HelloMessage];
  boot: [boot: BootMessage];
  progress: [progress: ProgressMessage];
  jobDone: [done: JobDoneMessage];
  deviceError: [error: ErrorMessage];
  /**
   * A RESULT, once per board sequence number. Call `ack()` when it is safely handled (verified,
   * journaled): only then is the ACK sent, and until then a retransmission is ignored.
   */
  result: [result: ResultMessage, ack: () => void];
  selfTest: [report: SelfTestReport];
  /**
   * A link that was up (the board had said HELLO) went down: heartbeat, retransmissions
   * exhausted, port closed, no HELLO after a reboot. Failed reconnection attempts only update
   * `lastError`.
   */
  lost: [error: Error];
  /** Something non-fatal: a malformed frame, an unknown type, a frame that makes no sense. */
  error: [error: Error];
}

export interface SessionStats {
  framesIn: number;
  framesOut: number;
  retransmits: number;
  acksSent: number;
  /** RESULT frames received again (their ACK was lost) and answered without acting twice. */
  duplicateResults: number;
  /** Frames with a valid CRC whose payload could not be decoded, or of an unknown type. */
  malformedFrames: number;
  connects: number;
  linkLosses: number;
  decoder: DecoderStats;
  bytesIn: number;
  bytesOut: number;
}

interface Pending {
  readonly name: string;
  readonly bytes: Uint8Array;
  tries: number;
  timer: NodeJS.Timeout | undefined;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

interface Waiter {
  readonly match: (message: DeviceMessage) => boolean;
  readonly resolve: (message: DeviceMessage | undefined) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

const RESULT_SEQ_WINDOW = 128;

/**
 * One board on one port: opens it, waits for BOOT/HELLO (then HELLO_REQ, 3 tries), negotiates
 * the baud rate if asked, runs the known-answer self-test, then carries jobs and results with
 * the reliability of section 3: acked frames are retransmitted every 250 ms up to 8 times,
 * every RESULT is acknowledged (once it is handled) and acted on once per sequence number,
 * and three seconds without a valid frame mark the link lost. A lost link is reopened with
 * backoff until `close()`. Jobs and results are the backend's business (SerialDeviceBackend).
 */
export class BoardSession extends EventEmitter<SessionEvents> {
  readonly path: string;
  readonly timing: SerialTiming;
  hello: HelloMessage | undefined;
  lastSelfTest: SelfTestReport | undefined;
  lastError: Error | undefined;
  private stateValue: SessionState = 'no device';
  private readonly options: BoardSessionOptions;
  private transport: SerialTransport | undefined;
  private generation = 0;
  private seq = 0;
  private jobId = randomInt(1, 2 ** 31);
  private readonly pending = new Map<number, Pending>();
  private readonly waiters = new Set<Waiter>();
  private readonly doneSeqs = new Set<number>();
  private readonly doneOrder: number[] = [];
  private readonly inProgressSeqs = new Set<number>();
  private readonly selfTestJobs = new Map<number, ResultMessage[]>();
  /** Self-test jobs that timed out (the last 16): a late RESULT of theirs is acknowledged and dropped. */
  private readonly lateSelfTestJobs = new Set<number>();
  private heartbeat: NodeJS.Timeout | undefined;
  private lastFrameAt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private backoff: number;
  /** The next self-test after one that timed out. */
  private selfTestTimer: NodeJS.Timeout | undefined;
  /** Self-tests in a row that timed out (each try waits longer and has a longer budget). */
  private selfTestTimeouts = 0;
  private closed = false;
  /** A HELLO was accepted on the current connection (a loss after it is a link loss). */
  private up = false;
  private readonly counters = {
    framesIn: 0,
    framesOut: 0,
    retransmits: 0,
    acksSent: 0,
    duplicateResults: 0,
    malformedFrames: 0,
    connects: 0,
    linkLosses: 0,
  };
  private readonly decoderTotals: DecoderStats = {
    frames: 0,
    garbageBytes: 0,
    crcErrors: 0,
    badHeaders: 0,
    staleFragments: 0,
  };
  private bytesTotals = { in: 0, out: 0 };

  constructor(options: BoardSessionOptions) {
    super();
    this.options = options;
    this.path = options.path;
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.backoff = this.timing.reconnectMinMs;
  }

  get state(): SessionState {
    return this.stateValue;
  }

  /** The baud rate in use. */
  get baudRate(): number {
    return this.transport?.baudRate ?? DEFAULT_BAUD_RATE;
  }

  /** Why setting DTR/RTS failed on this port, if it did (a pseudo-terminal). */
  get controlLinesError(): Error | undefined {
    return this.transport?.controlLinesError;
  }

  stats(): SessionStats {
    const d = this.transport?.decoder.stats;
    const t = this.decoderTotals;
    return {
      ...this.counters,
      decoder: {
        frames: t.frames + (d?.frames ?? 0),
        garbageBytes: t.garbageBytes + (d?.garbageBytes ?? 0),
        crcErrors: t.crcErrors + (d?.crcErrors ?? 0),
        badHeaders: t.badHeaders + (d?.badHeaders ?? 0),
        staleFragments: t.staleFragments + (d?.staleFragments ?? 0),
      },
      bytesIn: this.bytesTotals.in + (this.transport?.bytesIn ?? 0),
      bytesOut: this.bytesTotals.out + (this.transport?.bytesOut ?? 0),
    };
  }

  /**
   * Opens the port and runs the handshake and self-test. Resolves when the session is `ready`,
   * `self-test failed`, or `self-test` waiting to try again after a test that timed out; on failure the session is `no device` and retries in the background
   * (with `reconnect`), and the promise rejects with the reason.
   */
  async open(): Promise<void> {
    if (this.closed) throw new SerialError('closed', `${this.path}: the session is closed`);
    clearTimeout(this.reconnectTimer);
    const gen = ++this.generation;
    this.setState('connecting');
    try {
      await this.connect(gen);
    } catch (error) {
      this.lost(error as Error, gen);
      throw error;
    }
  }

  /** Opens in the background (errors go to `lost`/`lastError`). */
  start(): void {
    this.open().catch(() => {});
  }

  /** Closes the port for good. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.selfTestTimer);
    this.generation++;
    this.teardown(new SerialError('closed', `${this.path}: the session was closed`));
    await this.closeTransport();
    this.setState('closed');
  }

  /** A fresh non-zero job id (u32). */
  nextJobId(): number {
    this.jobId = this.jobId >= 0xffff_ffff ? 1 : this.jobId + 1;
    return this.jobId;
  }

  /**
   * Sends a job (acked). Resolves on its ACK.
   * @throws SerialError `device_error` (ACK status, e.g. 3 unsupported job or 5 busy), `link_lost`.
   */
  sendJob(job: JobHexMessage | JobTensorMessage): Promise<void> {
    return this.request(job);
  }

  /** Cancels a job (0: every job), acked. */
  cancel(jobId = 0): Promise<void> {
    return this.request({ name: 'CANCEL', jobId });
  }

  /** Asks the board to reboot (acked); it answers BOOT and HELLO and the session re-runs the handshake. */
  reboot(): Promise<void> {
    return this.request({ name: 'REBOOT' });
  }

  /**
   * Sends an acked message and resolves on its ACK (status 0), retransmitting the same bytes
   * every `ackTimeoutMs` up to `retransmits` times; then the link counts as lost.
   */
  request(message: HostMessage): Promise<void> {
    const transport = this.transport;
    if (!transport?.isOpen) {
      return Promise.reject(new SerialError('link_lost', `${this.path}: not connected`));
    }
    const gen = this.generation;
    const seq = this.nextSeq();
    const bytes = encodeMessageFrame(message, seq);
    return new Promise<void>((resolve, reject) => {
      const entry: Pending = { name: message.name, bytes, tries: 0, timer: undefined, resolve, reject };
      this.pending.set(seq, entry);
      const attempt = () => {
        if (gen !== this.generation || !this.pending.has(seq)) return;
        if (entry.tries > this.timing.retransmits) {
          this.pending.delete(seq);
          const error = new SerialError(
            'link_lost',
            `${this.path}: ${message.name} (seq ${seq}) was not acknowledged after ${this.timing.retransmits} retransmissions`,
          );
          reject(error);
          this.lost(error, gen);
          return;
        }
        if (entry.tries > 0) this.counters.retransmits++;
        entry.tries++;
        this.write(bytes);
        entry.timer = setTimeout(attempt, this.timing.ackTimeoutMs);
      };
      attempt();
    });
  }

  /** Sends an unacked message. */
  send(message: HostMessage): void {
    if (!this.transport?.isOpen) return;
    this.write(encodeMessageFrame(message, this.nextSeq()));
  }

  // ---- connection ----

  private async connect(gen: number): Promise<void> {
    this.counters.connects++;
    await this.closeTransport();
    const transport = new SerialTransport({
      path: this.path,
      partialFrameTimeoutMs: this.timing.partialFrameTimeoutMs,
      ...(this.options.binding ? { binding: this.options.binding } : {}),
      ...(this.options.controlLines === undefined ? {} : { controlLines: this.options.controlLines }),
      ...(this.options.now ? { now: this.options.now } : {}),
    });
    this.transport = transport;
    // The connection's generation changes on a reboot without a new port: follow the port.
    transport.on('frame', (frame) => {
      if (this.transport === transport) this.onFrame(frame);
    });
    transport.on('close', (error) => {
      if (error && this.transport === transport) this.lost(error, this.generation);
    });
    await transport.open();
    this.check(gen);
    await this.establish(gen);
  }

  /** Handshake, baud rate, self-test: from an open port to `ready` (or `self-test failed`). */
  private async establish(gen: number): Promise<void> {
    this.resetResultSeqs();
    const hello = await this.handshake(gen);
    this.armHeartbeat(gen);
    if ((this.options.baudRate ?? DEFAULT_BAUD_RATE) > DEFAULT_BAUD_RATE)
      await this.negotiateBaud(gen, hello);
    await this.runSelfTest(gen, hello);
    this.backoff = this.timing.reconnectMinMs;
  }

  private async handshake(gen: number): Promise<HelloMessage> {
    const t = this.timing;
    // Wait for the board's own BOOT/HELLO; any other frame means it is up already: ask at once.
    let message = await this.waitFor((m) => m.name !== 'BOOT', t.helloWaitMs, gen);
    for (let i = 0; message?.name !== 'HELLO' && i < t.helloTries; i++) {
      this.send({ name: 'HELLO_REQ', version: 1 });
      message = await this.waitFor((m) => m.name === 'HELLO', t.helloRetryMs, gen);
    }
    if (message?.name !== 'HELLO') {
      throw new SerialError(
        'no_hello',
        `${this.path}: no HELLO within ${t.helloWaitMs} ms of opening nor after ${t.helloTries} HELLO_REQ`,
      );
    }
    return this.accept(message);
  }

  private accept(hello: HelloMessage): HelloMessage {
    if (hello.version !== 1) {
      throw new SerialError(
        'unsupported_version',
        `${this.path}: expected protocol version 1, got ${hello.version} (${hello.firmware})`,
      );
    }
    this.hello = hello;
    this.up = true;
    this.emit('hello', hello);
    return hello;
  }

  private async negotiateBaud(gen: number, hello: HelloMessage): Promise<void> {
    const rate = this.options.baudRate!;
    if (hello.maxBaud < rate) return;
    try {
      await this.request({ name: 'SET_BAUD', baudRate: rate });
    } catch (error) {
      if (error instanceof SerialError && error.code === 'device_error') {
        this.report(new SerialError('device_error', `${this.path}: ${rate} baud refused: ${error.message}`));
        return;
      }
      throw error;
    }
    const transport = this.transport!;
    await transport.setBaudRate(rate);
    await delay(this.timing.baudSettleMs);
    this.check(gen);
    this.send({ name: 'HELLO_REQ', version: 1 });
    const again = await this.waitFor((m) => m.name === 'HELLO', this.timing.baudHelloTimeoutMs, gen);
    if (again?.name === 'HELLO') return;
    // Both fall back to 115200: the board after 2 s without a valid frame at the new rate.
    this.report(new SerialError('device_error', `${this.path}: no HELLO at ${rate} baud; back to 115200`));
    await transport.setBaudRate(DEFAULT_BAUD_RATE);
    this.disarmHeartbeat();
    await delay(this.timing.baudFallbackMs);
    this.check(gen);
    await this.handshake(gen);
    this.armHeartbeat(gen);
  }

  private async runSelfTest(gen: number, hello: HelloMessage): Promise<void> {
    clearTimeout(this.selfTestTimer);
    if (this.options.selfTest === false) {
      this.lastSelfTest = { ok: true, tested: [], ms: 0 };
      this.setState('ready');
      return;
    }
    this.setState('self-test');
    const started = Date.now();
    const tested: string[] = [];
    const verdict = await this.knownAnswerTest(gen, hello, tested);
    this.check(gen);
    const ms = Date.now() - started;
    if (verdict?.timedOut) {
      // Late is not wrong (a starved host, a slow hub): no work, and the test again with backoff.
      const t = this.timing;
      const retryInMs = Math.min(t.selfTestRetryMinMs * 2 ** this.selfTestTimeouts, t.selfTestRetryMaxMs);
      this.selfTestTimeouts++;
      const retryAtMs = Date.now() + retryInMs;
      const report: SelfTestReport = { ok: false, tested, reason: verdict.reason, retryInMs, retryAtMs, ms };
      this.lastSelfTest = report;
      this.emit('selfTest', report);
      this.report(
        new SerialError(
          'self_test_timeout',
          `${this.path}: self-test timed out: ${verdict.reason}; trying again in ${formatSeconds(retryInMs)}`,
        ),
      );
      this.selfTestTimer = setTimeout(() => {
        if (gen !== this.generation) return;
        this.runSelfTest(gen, hello).catch((error: Error) => this.lost(error, gen));
      }, retryInMs);
      this.selfTestTimer.unref();
      return;
    }
    this.selfTestTimeouts = 0;
    const report: SelfTestReport = {
      ok: verdict === undefined,
      tested,
      ...(verdict === undefined ? {} : { reason: verdict.reason }),
      ms,
    };
    this.lastSelfTest = report;
    this.emit('selfTest', report);
    this.setState(report.ok ? 'ready' : 'self-test failed');
    if (verdict)
      this.report(new SerialError('self_test_failed', `${this.path}: self-test failed: ${verdict.reason}`));
  }

  /**
   * Runs the known-answer jobs; undefined when the board passed, else why not: `timedOut` when
   * a job had neither JOB_DONE nor its RESULT within the budget (which doubles with each try
   * that timed out, up to 8 times). A RESULT that comes after its budget does not count: it is
   * acknowledged and dropped, and the next try has fresh jobs (ids, challenges).
   */
  private async knownAnswerTest(
    gen: number,
    hello: HelloMessage,
    tested: string[],
  ): Promise<{ readonly reason: string; readonly timedOut?: true } | undefined> {
    const stretch = 2 ** Math.min(this.selfTestTimeouts, 3);
    for (const { job, expected } of knownAnswerJobs(hello, () => this.nextJobId())) {
      const kind = job.name === 'JOB_HEX' ? 'hex' : 'tensor';
      tested.push(kind);
      const results: ResultMessage[] = [];
      this.selfTestJobs.set(job.jobId, results);
      try {
        const rate = Math.max(1, kind === 'hex' ? hello.hexRate : hello.tensorRate);
        const budget = stretch * Math.max(this.timing.selfTestMinMs, (3000 * job.nonceCount) / rate + 1000);
        // Listen before sending: the ACK, the RESULT and JOB_DONE may arrive in one read.
        const finished = this.waitFor((m) => m.name === 'JOB_DONE' && m.jobId === job.jobId, budget, gen);
        finished.catch(() => {});
        try {
          await this.request(job);
        } catch (error) {
          if (error instanceof SerialError && error.code === 'device_error')
            return { reason: `${kind} job refused: ${error.message}` };
          throw error;
        }
        const done = await finished;
        if (results.length === 0) {
          // The RESULT may come after JOB_DONE when its first transmission was lost.
          const grace = this.timing.ackTimeoutMs * (this.timing.retransmits + 1);
          await this.waitFor((m) => m.name === 'RESULT' && m.jobId === job.jobId, grace, gen);
        }
        this.check(gen);
        if (results.length === 0) {
          if (done) {
            return {
              reason: `${kind}: the board finished nonces [${job.firstNonce}, ${job.firstNonce + job.nonceCount}) without the known solution ${expected.nonce}`,
            };
          }
          // Still running (or starved): stop it so that it does not hold the board.
          this.cancel(job.jobId).catch(() => {});
          this.lateSelfTestJobs.add(job.jobId);
          if (this.lateSelfTestJobs.size > 16)
            this.lateSelfTestJobs.delete(this.lateSelfTestJobs.values().next().value!);
          return { reason: `${kind}: no RESULT within ${Math.round(budget)} ms`, timedOut: true };
        }
        const wrong = results.find((r) => !sameResult(expected, r));
        if (wrong) return { reason: `${kind}: wrong RESULT: ${resultDifference(expected, wrong)}` };
        if (results.length > 1)
          return { reason: `${kind}: ${results.length} RESULTs for a range with one solution` };
      } finally {
        this.selfTestJobs.delete(job.jobId);
      }
    }
    return undefined;
  }

  // ---- receiving ----

  private onFrame(frame: Frame): void {
    this.counters.framesIn++;
    this.feedHeartbeat();
    if (this.listenerCount('frame') > 0) this.emit('frame', frame);
    let message: DeviceMessage;
    try {
      const decoded = decodeMessage(frame);
      if (isHostMessage(decoded) && decoded.name !== 'ACK') {
        this.counters.malformedFrames++;
        this.report(
          new SerialError('unknown_type', `${this.path}: a host message (${decoded.name}) from the board`),
        );
        return;
      }
      message = decoded as DeviceMessage;
    } catch (error) {
      this.counters.malformedFrames++;
      // An acked frame that cannot be decoded is answered so the board stops retransmitting it.
      if (frame.type === MESSAGE_TYPES.RESULT) this.sendAck(frame.seq, 2);
      this.report(error as Error);
      return;
    }
    switch (message.name) {
      case 'ACK':
        this.onAck(message.ackSeq, message.status);
        break;
      case 'RESULT':
        this.onResult(frame.seq, message);
        break;
      case 'BOOT':
        this.onBoot(message);
        break;
      case 'HELLO':
        this.onHello(message);
        break;
      case 'PROGRESS':
        this.emit('progress', message);
        break;
      case 'JOB_DONE':
        this.emit('jobDone', message);
        break;
      case 'ERROR':
        this.emit('deviceError', message);
        break;
    }
    for (const waiter of [...this.waiters]) {
      if (waiter.match(message)) {
        this.waiters.delete(waiter);
        clearTimeout(waiter.timer);
        waiter.resolve(message);
      }
    }
  }

  private onAck(seq: number, status: number): void {
    const entry = this.pending.get(seq);
    if (!entry) return;
    this.pending.delete(seq);
    clearTimeout(entry.timer);
    if (status === 0) entry.resolve();
    else {
      entry.reject(
        new SerialError(
          'device_error',
          `${this.path}: ${entry.name} refused with status ${status} (${ERROR_NAMES[status] ?? 'unknown'})`,
          { status },
        ),
      );
    }
  }

  private onResult(seq: number, result: ResultMessage): void {
    if (this.doneSeqs.has(seq)) {
      this.counters.duplicateResults++;
      this.sendAck(seq, 0);
      return;
    }
    if (this.inProgressSeqs.has(seq)) {
      this.counters.duplicateResults++;
      return;
    }
    const selfTest = this.selfTestJobs.get(result.jobId);
    if (selfTest || this.lateSelfTestJobs.has(result.jobId)) {
      selfTest?.push(result); // a late one (after its budget) does not count
      this.markDone(seq);
      this.sendAck(seq, 0);
      return;
    }
    this.inProgressSeqs.add(seq);
    const gen = this.generation;
    let acked = false;
    const ack = () => {
      if (acked) return;
      acked = true;
      this.inProgressSeqs.delete(seq);
      if (gen !== this.generation) return; // the board rebooted or the link dropped: it resends
      this.markDone(seq);
      this.sendAck(seq, 0);
    };
    if (this.listenerCount('result') === 0) ack();
    else this.emit('result', result, ack);
  }

  private onBoot(boot: BootMessage): void {
    this.emit('boot', boot);
    const s = this.stateValue;
    if (s === 'ready' || s === 'self-test' || s === 'self-test failed') {
      // The board restarted under us: its job is gone and its sequence numbers restart.
      const gen = ++this.generation;
      this.teardown(new SerialError('device_error', `${this.path}: the board rebooted (${boot.reason})`));
      this.setState('connecting');
      this.armHeartbeat(gen);
      this.establish(gen).catch((error: Error) => this.lost(error, gen));
    }
  }

  private onHello(hello: HelloMessage): void {
    if (this.stateValue !== 'ready' && this.stateValue !== 'self-test failed') return; // the handshake takes it
    try {
      const before = this.hello;
      this.accept(hello);
      if (before && !sameChip(before, hello)) {
        // Another board on this port: start over with it.
        this.lost(
          new SerialError('device_error', `${this.path}: a different board answered`),
          this.generation,
        );
      }
    } catch (error) {
      this.lost(error as Error, this.generation);
    }
  }

  // ---- helpers ----

  private sendAck(seq: number, status: number): void {
    this.counters.acksSent++;
    this.send({ name: 'ACK', ackSeq: seq, status });
  }

  private markDone(seq: number): void {
    this.doneSeqs.add(seq);
    this.doneOrder.push(seq);
    if (this.doneOrder.length > RESULT_SEQ_WINDOW) this.doneSeqs.delete(this.doneOrder.shift()!);
  }

  private resetResultSeqs(): void {
    this.doneSeqs.clear();
    this.doneOrder.length = 0;
    this.inProgressSeqs.clear();
  }

  private nextSeq(): number {
    const seq = this.seq;
    this.seq = (this.seq + 1) & 0xffff;
    return seq;
  }

  private write(bytes: Uint8Array): void {
    const transport = this.transport;
    if (!transport?.isOpen) return;
    this.counters.framesOut++;
    transport.write(bytes).catch((error: Error) => this.report(error));
  }

  private waitFor(
    match: (message: DeviceMessage) => boolean,
    timeoutMs: number,
    gen: number,
  ): Promise<DeviceMessage | undefined> {
    this.check(gen);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(undefined);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** @throws when the connection `gen` was superseded (lost, rebooted, closed). */
  private check(gen: number): void {
    if (gen !== this.generation) {
      throw this.lastError ?? new SerialError('link_lost', `${this.path}: the connection was reset`);
    }
  }

  /**
   * Watches the link: three seconds without a valid frame and it is lost. An idle board sends
   * PROGRESS only every 5 s, so after `probeAfterMs` of silence the host asks for HELLO
   * (every 500 ms) to hear from it within the 3 s.
   */
  private armHeartbeat(gen: number): void {
    this.disarmHeartbeat();
    const t = this.timing;
    this.lastFrameAt = Date.now();
    let lastProbe = 0;
    this.heartbeat = setInterval(
      () => {
        const now = Date.now();
        const silent = now - this.lastFrameAt;
        if (silent >= t.heartbeatTimeoutMs) {
          this.lost(
            new SerialError('link_lost', `${this.path}: no valid frame for ${t.heartbeatTimeoutMs} ms`),
            gen,
          );
        } else if (silent >= t.probeAfterMs && now - lastProbe >= t.probeIntervalMs) {
          lastProbe = now;
          this.send({ name: 'HELLO_REQ', version: 1 });
        }
      },
      Math.min(100, t.probeIntervalMs),
    );
    this.heartbeat.unref();
  }

  private feedHeartbeat(): void {
    this.lastFrameAt = Date.now();
  }

  private disarmHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** Rejects what waits on the connection (pending acked frames, waiters). */
  private teardown(error: Error): void {
    this.disarmHeartbeat();
    clearTimeout(this.selfTestTimer);
    for (const entry of this.pending.values()) {
      clearTimeout(entry.timer);
      entry.reject(error);
    }
    this.pending.clear();
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiters.clear();
    this.selfTestJobs.clear();
    this.resetResultSeqs();
  }

  private lost(error: Error, gen: number): void {
    if (gen !== this.generation || this.closed) return;
    this.generation++;
    this.lastError = error;
    const wasUp = this.up;
    this.up = false;
    this.teardown(error);
    void this.closeTransport();
    this.setState('no device');
    if (wasUp) {
      this.counters.linkLosses++;
      this.emit('lost', error);
    }
    if (this.options.reconnect === false) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.start(), this.backoff);
    this.reconnectTimer.unref();
    this.backoff = Math.min(this.backoff * 2, this.timing.reconnectMaxMs);
  }

  private async closeTransport(): Promise<void> {
    const transport = this.transport;
    if (!transport) return;
    this.transport = undefined;
    const d = transport.decoder.stats;
    const t = this.decoderTotals;
    t.frames += d.frames;
    t.garbageBytes += d.garbageBytes;
    t.crcErrors += d.crcErrors;
    t.badHeaders += d.badHeaders;
    t.staleFragments += d.staleFragments;
    this.bytesTotals.in += transport.bytesIn;
    this.bytesTotals.out += transport.bytesOut;
    transport.removeAllListeners('frame');
    transport.removeAllListeners('close');
    await transport.close().catch(() => {});
  }

  private report(error: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  private setState(state: SessionState): void {
    if (state === this.stateValue) return;
    this.stateValue = state;
    this.emit('state', state);
  }
}

/** The chip id as lowercase hex (16 digits): a board's identity. */
export function chipIdHex(hello: Pick<HelloMessage, 'chipId'>): string {
  let hex = '';
  for (const b of hello.chipId) hex += b.toString(16).padStart(2, '0');
  return hex;
}

function sameChip(a: HelloMessage, b: HelloMessage): boolean {
  return chipIdHex(a) === chipIdHex(b);
}

/** 5000 -> "5 s", 1500 -> "1.5 s", 80 -> "0.08 s". */
function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(2))} s`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
