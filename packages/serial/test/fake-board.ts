import type { HexchainJob, MiningJob, TensorJob } from '@tensormine/miner';
import {
  type Coord,
  computeWork,
  decodeHeader,
  difficultyParams,
  expand,
  hashMeetsTarget,
  hexPowHash,
  meetsThresholds,
  taggedHash,
  targetFromDifficulty,
  u64le,
} from '@tensormine/protocol';
import { SerialPortMock } from 'serialport';
import { vi } from 'vitest';
import { waitFor } from '../../../test-support/wait.ts';
import type { BindingInterface, OpenOptions } from '../src/binding.js';
import { FrameDecoder } from '../src/codec/decoder.js';
import {
  decodeMessage,
  encodeMessageFrame,
  type HelloMessage,
  type HostMessage,
  type JobHexMessage,
  type JobTensorMessage,
  type ResultMessage,
  type SerialMessage,
} from '../src/codec/messages.js';

/** serialport's MockBinding (the binding SerialPortMock uses). */
export const MockBinding = SerialPortMock.binding;
type MockPortBinding = Awaited<ReturnType<typeof MockBinding.open>>;

/**
 * A small scripted board for the session and backend tests: it speaks the device side of
 * docs/serial-protocol.md over serialport's MockBinding (the same interface as the real
 * binding), mines with the protocol's reference functions at a simulated rate, and can be
 * told to misbehave: lose frames, lose ACKs, go silent, reboot, lie.
 */
export interface FakeBoardOptions {
  readonly chipId?: string;
  readonly capabilities?: number;
  /** Simulated nonces per second. */
  readonly hexRate?: number;
  readonly tensorRate?: number;
  readonly maxDim?: number;
  readonly maxFilters?: number;
  readonly maxBaud?: number;
  /** Send BOOT and HELLO when the port opens (a DTR reset). Default true. */
  readonly bootOnOpen?: boolean;
  readonly progressMs?: number;
  readonly retransmitMs?: number;
}

interface BoardJob {
  readonly message: JobHexMessage | JobTensorMessage;
  next: number;
  readonly end: number;
  done: number;
}

interface Unacked {
  readonly bytes: Uint8Array;
  readonly seq: number;
  readonly result: ResultMessage;
  sentAt: number;
  acksIgnored: number;
}

export class FakeBoard {
  readonly hello: HelloMessage;
  port: MockPortBinding | undefined;
  /** What the host sent, decoded, in order. */
  readonly received: SerialMessage[] = [];
  /** RESULTs sent (first transmissions). */
  readonly results: ResultMessage[] = [];
  /** Misbehaviour switches. */
  silent = false;
  /** Ignore the first transmission of the next host frame of these types (the host must retransmit). */
  readonly dropFirst = new Set<string>();
  /** Ignore this many host ACKs of each RESULT (the board retransmits; the host must not act twice). */
  ignoreResultAcks = 0;
  /** 'nonce': report the nonce after the solution; 'hash': corrupt the hash; 'self-test': lie only on tiny jobs. */
  lie: 'nonce' | 'hash' | 'self-test' | undefined;
  /** Keep found results without sending them (they go out after the next boot). */
  holdResults = false;
  /** Mine at this fraction of the announced rate (0: a starved board that acks jobs and finishes none). */
  speed = 1;
  /** Refuse jobs with this ACK status. */
  refuseJobs: number | undefined;
  readonly options: Required<FakeBoardOptions>;
  private readonly decoder = new FrameDecoder();
  private seq = 0;
  private readonly seenSeqs = new Map<number, number>();
  private job: BoardJob | undefined;
  private readonly unacked: Unacked[] = [];
  private hashes = 0n;
  private timer: NodeJS.Timeout | undefined;
  private lastTick = Date.now();
  private lastProgress = 0;
  private rate = 0;

  constructor(options: FakeBoardOptions = {}) {
    this.options = {
      chipId: '3c61053f6a280000',
      capabilities: 0x1f,
      hexRate: 20_000,
      tensorRate: 400,
      maxDim: 16,
      maxFilters: 4,
      maxBaud: 921_600,
      bootOnOpen: true,
      progressMs: 100,
      retransmitMs: 50,
      ...options,
    };
    const o = this.options;
    this.hello = {
      name: 'HELLO',
      version: 1,
      chipId: Uint8Array.from(Buffer.from(o.chipId, 'hex')),
      firmware: 'fake-fw 1.0',
      board: 'fake-esp32',
      capabilities: o.capabilities,
      maxDim: o.maxDim,
      maxFilters: o.maxFilters,
      hexRate: o.hexRate,
      tensorRate: o.tensorRate,
      maxBaud: o.maxBaud,
    };
  }

  /** The port opened: a DTR reset boots the board. */
  connect(port: MockPortBinding): void {
    this.port = port;
    this.decoder.reset();
    if (this.options.bootOnOpen) setTimeout(() => this.boot(0), 5);
    this.timer ??= setInterval(() => this.tick(), 10);
  }

  /** Simulates a reset: BOOT, HELLO, then the results kept from before. */
  boot(reason: number): void {
    this.holdResults = false;
    this.job = undefined;
    this.hashes = 0n;
    this.seenSeqs.clear();
    this.send({ name: 'BOOT', reason });
    this.send(this.hello);
    for (const u of this.unacked) this.retransmit(u);
  }

  /** Stops the board's timers. */
  dispose(): void {
    clearInterval(this.timer);
  }

  get currentJob(): (JobHexMessage | JobTensorMessage) | undefined {
    return this.job?.message;
  }

  receive(bytes: Uint8Array): void {
    if (this.silent) return;
    for (const frame of this.decoder.push(bytes)) {
      let message: SerialMessage;
      try {
        message = decodeMessage(frame);
      } catch {
        this.send({ name: 'ERROR', code: 2, jobId: 0, message: 'malformed' });
        continue;
      }
      this.received.push(message);
      setImmediate(() => this.handle(frame.seq, message as HostMessage));
    }
  }

  private handle(seq: number, m: HostMessage): void {
    if (this.silent) return;
    if (m.name === 'ACK') {
      const i = this.unacked.findIndex((u) => u.seq === m.ackSeq);
      if (i < 0) return;
      const u = this.unacked[i]!;
      if (u.acksIgnored < this.ignoreResultAcks) {
        u.acksIgnored++;
        return;
      }
      this.unacked.splice(i, 1);
      return;
    }
    if (m.name === 'HELLO_REQ') {
      this.send(this.hello);
      return;
    }
    if (this.dropFirst.has(m.name)) {
      this.dropFirst.delete(m.name);
      return;
    }
    const seen = this.seenSeqs.get(seq);
    if (seen !== undefined) {
      this.send({ name: 'ACK', ackSeq: seq, status: seen });
      return;
    }
    let status = 0;
    if ((m.name === 'JOB_HEX' || m.name === 'JOB_TENSOR') && this.refuseJobs !== undefined)
      status = this.refuseJobs;
    if (m.name === 'SET_BAUD' && m.baudRate > this.options.maxBaud) status = 4;
    this.seenSeqs.set(seq, status);
    this.send({ name: 'ACK', ackSeq: seq, status });
    if (status !== 0) return;
    switch (m.name) {
      case 'JOB_HEX':
      case 'JOB_TENSOR':
        if (this.job) this.jobDone(2);
        this.job = { message: m, next: m.firstNonce, end: m.firstNonce + m.nonceCount, done: 0 };
        break;
      case 'CANCEL':
        if (this.job && (m.jobId === 0 || m.jobId === this.job.message.jobId)) this.jobDone(1);
        break;
      case 'REBOOT':
        setTimeout(() => this.boot(1), 20);
        break;
      default:
        break;
    }
  }

  private jobDone(reason: number): void {
    const job = this.job!;
    this.job = undefined;
    this.send({ name: 'JOB_DONE', jobId: job.message.jobId, noncesDone: BigInt(job.done), reason });
  }

  private tick(): void {
    const now = Date.now();
    const dt = now - this.lastTick;
    this.lastTick = now;
    if (this.silent || !this.port?.isOpen) return;
    if (!this.holdResults) {
      for (const u of this.unacked) if (now - u.sentAt >= this.options.retransmitMs) this.retransmit(u);
    }
    const job = this.job;
    if (job) {
      const rate = job.message.name === 'JOB_HEX' ? this.options.hexRate : this.options.tensorRate;
      const budget = this.speed === 0 ? 0 : Math.max(1, Math.round((rate * this.speed * dt) / 1000));
      const stop = Math.min(job.end, job.next + budget);
      for (let nonce = job.next; nonce < stop; nonce++) {
        const r = this.tryNonce(job.message, nonce);
        if (r) this.pushResult(r);
      }
      const n = stop - job.next;
      job.done += n;
      job.next = stop;
      this.hashes += BigInt(n);
      this.rate = rate;
      if (job.next >= job.end) this.jobDone(0);
    }
    if (now - this.lastProgress >= this.options.progressMs) {
      this.lastProgress = now;
      this.send({
        name: 'PROGRESS',
        jobId: this.job?.message.jobId ?? 0,
        noncesDone: BigInt(this.job?.done ?? 0),
        hashesSinceBoot: this.hashes,
        rate: this.job ? this.rate : 0,
      });
    }
  }

  private tryNonce(m: JobHexMessage | JobTensorMessage, nonce: number): ResultMessage | undefined {
    const tiny = m.nonceCount < 5000 && this.lie === 'self-test';
    if (m.name === 'JOB_HEX') {
      const header = new Uint8Array(88);
      header.set(m.headerPrefix);
      header.set(u64le(nonce), 80);
      const powHash = hexPowHash(header);
      if (!hashMeetsTarget(powHash, m.target)) return undefined;
      if (this.lie === 'hash' || tiny) powHash[31]! ^= 1;
      return {
        name: 'RESULT',
        kind: 'hex',
        jobId: m.jobId,
        nonce: this.lie === 'nonce' ? nonce + 1 : nonce,
        powHash,
      };
    }
    const task = {
      challengeHash: m.challengeHash,
      operation: m.operation,
      activation: m.activation,
      dim: m.dim,
      filters: m.filters,
      input: new Int8Array(expand(taggedHash('PTM4/input', m.challengeHash), m.dim * m.dim).buffer),
      pathTarget: m.pathTarget,
      mmlThresholdQ16: m.mmlThresholdQ16,
      pathDistanceMax: m.pathDistanceMax,
    };
    const w = computeWork(task, m.minerPublicKey, nonce);
    if (!meetsThresholds(task, w)) return undefined;
    const computationHash = w.computationHash.slice();
    if (this.lie === 'hash' || tiny) computationHash[0]! ^= 1;
    return {
      name: 'RESULT',
      kind: 'tensor',
      jobId: m.jobId,
      nonce: this.lie === 'nonce' ? nonce + 1 : nonce,
      tensorResultHash: w.tensorResultHash,
      mmlScoreQ16: w.mmlScoreQ16,
      pathSignature: w.pathSignature,
      pathDistance: w.pathDistance,
      computationHash,
    };
  }

  private pushResult(result: ResultMessage): void {
    const seq = this.nextSeq();
    const bytes = encodeMessageFrame(result, seq);
    this.results.push(result);
    const u: Unacked = { bytes, seq, result, sentAt: Date.now(), acksIgnored: 0 };
    this.unacked.push(u);
    if (!this.holdResults) this.emitBytes(bytes);
  }

  private retransmit(u: Unacked): void {
    u.sentAt = Date.now();
    this.emitBytes(u.bytes);
  }

  /** Sends raw bytes (garbage, partial frames) as the board. */
  emitBytes(bytes: Uint8Array): void {
    if (this.silent || !this.port?.isOpen) return;
    this.port.emitData(Buffer.from(bytes));
  }

  send(message: SerialMessage): void {
    this.emitBytes(encodeMessageFrame(message, this.nextSeq()));
  }

  private nextSeq(): number {
    const s = this.seq;
    this.seq = (this.seq + 1) & 0xffff;
    return s;
  }
}

/**
 * A binding with the real binding's interface: serialport's MockBinding, whose ports are wired
 * to fake boards. `failControlLines` makes `set` fail as it does on a pseudo-terminal.
 */
export function fakeBinding(
  boards: Map<string, FakeBoard>,
  options: { readonly failControlLines?: boolean } = {},
): BindingInterface {
  return {
    list: () => MockBinding.list(),
    async open(openOptions: OpenOptions) {
      const port = await MockBinding.open(openOptions);
      const board = boards.get(openOptions.path);
      const write = port.write.bind(port);
      port.write = async (buffer: Buffer) => {
        await write(buffer);
        board?.receive(Uint8Array.from(buffer));
      };
      if (options.failControlLines) {
        port.set = async () => {
          throw new Error('Inappropriate ioctl for device');
        };
      }
      board?.connect(port);
      return port;
    },
  } as BindingInterface;
}

export const TEST_COORD: Coord = { q: 0, r: -1, s: 1 };

/** A hexchain job at difficulty D over the whole nonce range. */
export function hexJob(id: string, difficulty = 16, extra: Partial<HexchainJob> = {}): HexchainJob {
  return {
    kind: 'hexchain',
    challengeId: id,
    coord: TEST_COORD,
    challengeHash: Uint8Array.from(taggedHash('test/challenge', new TextEncoder().encode(id))),
    target: targetFromDifficulty(BigInt(difficulty)),
    difficulty,
    minerPublicKey: Uint8Array.from(taggedHash('test/key')),
    expiresAtMs: Date.now() + 600_000,
    ...extra,
  };
}

/** A small tensor job (matmul N=8, difficulty level 3 unless told). */
export function tensorJob(id: string, extra: Partial<TensorJob> = {}, level = 3): TensorJob {
  const challengeHash = Uint8Array.from(taggedHash('test/tensor', new TextEncoder().encode(id)));
  const dim = 8;
  const { mmlThresholdQ16, pathDistanceMax } = difficultyParams(level);
  return {
    kind: 'tensor',
    challengeId: id,
    task: {
      challengeId: id,
      challengeHash,
      operation: 'matmul',
      activation: 'relu',
      dim,
      filters: 0,
      input: new Int8Array(expand(taggedHash('PTM4/input', challengeHash), dim * dim).buffer),
      pathTarget: taggedHash('PTM4/path-target', challengeHash).slice(0, 8),
      mmlThresholdQ16,
      pathDistanceMax,
    },
    difficulty: level,
    minerPublicKey: Uint8Array.from(taggedHash('test/key')),
    expiresAtMs: Date.now() + 600_000,
    ...extra,
  };
}

export const FAST_TIMING = {
  helloWaitMs: 150,
  helloRetryMs: 100,
  ackTimeoutMs: 40,
  heartbeatTimeoutMs: 500,
  probeAfterMs: 250,
  probeIntervalMs: 80,
  reconnectMinMs: 50,
  reconnectMaxMs: 200,
  baudSettleMs: 20,
  baudHelloTimeoutMs: 200,
  baudFallbackMs: 300,
  selfTestMinMs: 1000,
  selfTestRetryMinMs: 100,
  selfTestRetryMaxMs: 400,
} as const;

/**
 * The fake boards' and the sessions' clock: vitest's fake timers (timeouts, intervals and
 * Date.now) moving 10 ms each time the event loop is free for a 10 ms timer. A loaded machine
 * slows this clock down instead of jumping it forward: a stall never makes a board miss a
 * heartbeat, an ACK time out or a back-off run out before the bytes in flight arrived (the mock
 * serial port delivers them on process.nextTick, which stays real and runs between two moves),
 * and the boards, the sessions and the backends keep their proportions whatever the machine's
 * speed. Call it before creating boards; `useRealClock()` after closing them.
 */
export function useBoardClock(): void {
  vi.useFakeTimers({
    shouldAdvanceTime: true,
    advanceTimeDelta: 10,
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  });
}

/** Back to the real timers (after the test's boards and sessions are closed). */
export function useRealClock(): void {
  vi.useRealTimers();
}

/**
 * Polls `predicate` until it holds; fails naming `what` after the suite's wait bound
 * (test-support/wait.ts, real time), or after `timeoutMs` when one is given.
 */
export function until(predicate: () => boolean, what?: string): Promise<void>;
export function until(predicate: () => boolean, timeoutMs: number | undefined, what?: string): Promise<void>;
export function until(predicate: () => boolean, a?: number | string, b?: string): Promise<void> {
  const timeoutMs = typeof a === 'number' ? a : undefined;
  const what = (typeof a === 'string' ? a : b) ?? 'condition';
  return waitFor(predicate, what, { intervalMs: 10, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}

/** Resolves once `ms` of the boards' time has passed (on the board clock: however long that takes). */
export function elapse(ms: number): Promise<void> {
  const end = Date.now() + ms;
  return until(() => Date.now() >= end, `${ms} ms of the boards' time`);
}

export type { MiningJob };
export { decodeHeader };
