import { ACTIVATIONS, type Activation, OPERATIONS, type Operation } from '@tensormine/protocol';
import { SerialError } from '../errors.js';
import { encodeFrame, type Frame } from './frame.js';

/**
 * The messages of docs/serial-protocol.md section 4, typed, with their encoders and decoders.
 * Decoding checks every length and field and throws SerialError (`malformed_payload`,
 * `unknown_type`), never anything else; encoding checks ranges and throws `invalid_message`.
 * All integers are little-endian; the hexchain target is 256-bit big-endian.
 */

export const MESSAGE_TYPES = {
  HELLO_REQ: 0x01,
  SET_BAUD: 0x02,
  JOB_HEX: 0x03,
  JOB_TENSOR: 0x04,
  CANCEL: 0x05,
  REBOOT: 0x06,
  BOOT: 0x40,
  HELLO: 0x41,
  PROGRESS: 0x42,
  RESULT: 0x43,
  JOB_DONE: 0x44,
  ERROR: 0x45,
  ACK: 0x7f,
} as const;

export type MessageName = keyof typeof MESSAGE_TYPES;

/** Message types answered by an ACK (section 3). */
export const ACKED: ReadonlySet<MessageName> = new Set<MessageName>([
  'SET_BAUD',
  'JOB_HEX',
  'JOB_TENSOR',
  'CANCEL',
  'REBOOT',
  'RESULT',
]);

/** ERROR.code and ACK.status values (section 5). */
export const ERROR_CODES = {
  ok: 0,
  unknown_type: 1,
  malformed_payload: 2,
  unsupported_job: 3,
  unsupported_baud: 4,
  busy: 5,
  internal_error: 6,
} as const;

export const ERROR_NAMES: Readonly<Record<number, string>> = {
  0: 'ok',
  1: 'unknown message type',
  2: 'malformed payload',
  3: 'unsupported job',
  4: 'unsupported baud rate',
  5: 'busy',
  6: 'internal error',
};

/** HELLO capability bits; relu is always present. */
export const CAPABILITIES = { hexchain: 1, matmul: 2, conv: 4, sigmoid: 8, tanh: 16 } as const;

/** BOOT reset reasons. */
export const RESET_REASONS = ['power-on', 'software', 'watchdog', 'brownout', 'other'] as const;

/** JOB_DONE reasons. */
export const JOB_DONE_REASONS = ['exhausted', 'cancelled', 'replaced'] as const;

export const JOB_HEX_BYTES = 128;
export const JOB_TENSOR_BYTES = 102;
export const RESULT_HEX_BYTES = 45;
export const RESULT_TENSOR_BYTES = 90;
const U32_MAX = 0xffff_ffff;

// Host to device

export interface HelloReqMessage {
  readonly name: 'HELLO_REQ';
  readonly version: number;
}
export interface SetBaudMessage {
  readonly name: 'SET_BAUD';
  readonly baudRate: number;
}
export interface JobHexMessage {
  readonly name: 'JOB_HEX';
  /** Non-zero u32. */
  readonly jobId: number;
  /** The 80 header bytes before the nonce. */
  readonly headerPrefix: Uint8Array;
  readonly target: bigint;
  readonly firstNonce: number;
  /** u32. */
  readonly nonceCount: number;
}
export interface JobTensorMessage {
  readonly name: 'JOB_TENSOR';
  readonly jobId: number;
  readonly challengeHash: Uint8Array;
  readonly operation: Operation;
  readonly activation: Activation;
  readonly dim: number;
  /** Conv filters; 0 for matmul. */
  readonly filters: number;
  readonly minerPublicKey: Uint8Array;
  /** 8 bytes. */
  readonly pathTarget: Uint8Array;
  readonly mmlThresholdQ16: number;
  readonly pathDistanceMax: number;
  readonly firstNonce: number;
  readonly nonceCount: number;
}
export interface CancelMessage {
  readonly name: 'CANCEL';
  /** 0 cancels every job. */
  readonly jobId: number;
}
export interface RebootMessage {
  readonly name: 'REBOOT';
}
export interface AckMessage {
  readonly name: 'ACK';
  readonly ackSeq: number;
  /** 0 ok, else an ERROR_CODES value. */
  readonly status: number;
}

// Device to host

export interface BootMessage {
  readonly name: 'BOOT';
  /** 0 power-on, 1 software, 2 watchdog, 3 brownout, 4 other (RESET_REASONS). */
  readonly reason: number;
}
export interface HelloMessage {
  readonly name: 'HELLO';
  readonly version: number;
  /** 8 bytes (ESP32: the eFuse MAC, zero-padded). */
  readonly chipId: Uint8Array;
  readonly firmware: string;
  readonly board: string;
  /** CAPABILITIES bits. */
  readonly capabilities: number;
  readonly maxDim: number;
  readonly maxFilters: number;
  /** Hexchain nonces per second. */
  readonly hexRate: number;
  /** Tensor nonces per second at maxDim. */
  readonly tensorRate: number;
  readonly maxBaud: number;
}
export interface ProgressMessage {
  readonly name: 'PROGRESS';
  /** 0 when idle. */
  readonly jobId: number;
  readonly noncesDone: bigint;
  readonly hashesSinceBoot: bigint;
  /** Nonces per second. */
  readonly rate: number;
}
interface ResultBase {
  readonly name: 'RESULT';
  readonly jobId: number;
  readonly nonce: number;
}
export interface HexResultMessage extends ResultBase {
  readonly kind: 'hex';
  readonly powHash: Uint8Array;
}
export interface TensorResultMessage extends ResultBase {
  readonly kind: 'tensor';
  readonly tensorResultHash: Uint8Array;
  readonly mmlScoreQ16: number;
  readonly pathSignature: Uint8Array;
  readonly pathDistance: number;
  readonly computationHash: Uint8Array;
}
export type ResultMessage = HexResultMessage | TensorResultMessage;
export interface JobDoneMessage {
  readonly name: 'JOB_DONE';
  readonly jobId: number;
  readonly noncesDone: bigint;
  /** 0 range exhausted, 1 cancelled, 2 replaced (JOB_DONE_REASONS). */
  readonly reason: number;
}
export interface ErrorMessage {
  readonly name: 'ERROR';
  readonly code: number;
  readonly jobId: number;
  readonly message: string;
}

export type HostMessage =
  | HelloReqMessage
  | SetBaudMessage
  | JobHexMessage
  | JobTensorMessage
  | CancelMessage
  | RebootMessage
  | AckMessage;
export type DeviceMessage =
  | BootMessage
  | HelloMessage
  | ProgressMessage
  | ResultMessage
  | JobDoneMessage
  | ErrorMessage
  | AckMessage;
export type SerialMessage = HostMessage | DeviceMessage;

/** Encodes a message's payload; returns the frame type and payload. */
export function encodeMessage(message: SerialMessage): {
  readonly type: number;
  readonly payload: Uint8Array;
} {
  const w = new Writer();
  switch (message.name) {
    case 'HELLO_REQ':
      w.u8(message.version, 'version');
      break;
    case 'SET_BAUD':
      w.u32(message.baudRate, 'baudRate');
      break;
    case 'JOB_HEX':
      w.jobId(message.jobId);
      w.bytes(message.headerPrefix, 80, 'headerPrefix');
      w.target(message.target);
      w.u64(message.firstNonce, 'firstNonce');
      w.u32(message.nonceCount, 'nonceCount');
      break;
    case 'JOB_TENSOR':
      w.jobId(message.jobId);
      w.bytes(message.challengeHash, 32, 'challengeHash');
      w.u8(code(OPERATIONS, message.operation, 'operation'), 'operation');
      w.u8(code(ACTIVATIONS, message.activation, 'activation'), 'activation');
      w.u8(message.dim, 'dim');
      w.u8(message.filters, 'filters');
      w.bytes(message.minerPublicKey, 32, 'minerPublicKey');
      w.bytes(message.pathTarget, 8, 'pathTarget');
      w.u32(message.mmlThresholdQ16, 'mmlThresholdQ16');
      w.u8(message.pathDistanceMax, 'pathDistanceMax');
      w.u64(message.firstNonce, 'firstNonce');
      w.u32(message.nonceCount, 'nonceCount');
      w.bytes(new Uint8Array(5), 5, 'reserved');
      break;
    case 'CANCEL':
      w.u32(message.jobId, 'jobId');
      break;
    case 'REBOOT':
      break;
    case 'ACK':
      w.u16(message.ackSeq, 'ackSeq');
      w.u8(message.status, 'status');
      break;
    case 'BOOT':
      w.u8(message.reason, 'reason');
      break;
    case 'HELLO':
      w.u8(message.version, 'version');
      w.bytes(message.chipId, 8, 'chipId');
      w.lpstr(message.firmware, 'firmware');
      w.lpstr(message.board, 'board');
      w.u16(message.capabilities, 'capabilities');
      w.u8(message.maxDim, 'maxDim');
      w.u8(message.maxFilters, 'maxFilters');
      w.u32(message.hexRate, 'hexRate');
      w.u32(message.tensorRate, 'tensorRate');
      w.u32(message.maxBaud, 'maxBaud');
      break;
    case 'PROGRESS':
      w.u32(message.jobId, 'jobId');
      w.u64(message.noncesDone, 'noncesDone');
      w.u64(message.hashesSinceBoot, 'hashesSinceBoot');
      w.u32(message.rate, 'rate');
      break;
    case 'RESULT':
      w.u32(message.jobId, 'jobId');
      w.u8(message.kind === 'hex' ? 0 : 1, 'kind');
      w.u64(message.nonce, 'nonce');
      if (message.kind === 'hex') {
        w.bytes(message.powHash, 32, 'powHash');
      } else {
        w.bytes(message.tensorResultHash, 32, 'tensorResultHash');
        w.u32(message.mmlScoreQ16, 'mmlScoreQ16');
        w.bytes(message.pathSignature, 8, 'pathSignature');
        w.u8(message.pathDistance, 'pathDistance');
        w.bytes(message.computationHash, 32, 'computationHash');
      }
      break;
    case 'JOB_DONE':
      w.u32(message.jobId, 'jobId');
      w.u64(message.noncesDone, 'noncesDone');
      w.u8(message.reason, 'reason');
      break;
    case 'ERROR':
      w.u16(message.code, 'code');
      w.u32(message.jobId, 'jobId');
      w.lpstr(message.message, 'message');
      break;
    default:
      throw new SerialError(
        'invalid_message',
        `name: expected a message of section 4, got ${String((message as { name: unknown }).name)}`,
      );
  }
  return { type: MESSAGE_TYPES[message.name], payload: w.finish() };
}

/** Encodes a message as one whole frame with the given sequence number. */
export function encodeMessageFrame(message: SerialMessage, seq: number): Uint8Array {
  return encodeFrame({ ...encodeMessage(message), seq });
}

const NAMES_BY_TYPE = new Map<number, MessageName>(
  Object.entries(MESSAGE_TYPES).map(([name, type]) => [type, name as MessageName]),
);

/** The name of a frame type, or undefined for a type section 4 does not define. */
export function messageName(type: number): MessageName | undefined {
  return NAMES_BY_TYPE.get(type);
}

/**
 * Decodes a frame's payload into its typed message.
 * @throws SerialError `unknown_type` for a type section 4 does not define; `malformed_payload`
 *   for a wrong length or a bad field (the message says which and what arrived).
 */
export function decodeMessage(frame: Pick<Frame, 'type' | 'payload'>): SerialMessage {
  const name = NAMES_BY_TYPE.get(frame.type);
  if (name === undefined) {
    throw new SerialError(
      'unknown_type',
      `frame type 0x${frame.type.toString(16).padStart(2, '0')}: not a message of the serial protocol`,
      { type: frame.type },
    );
  }
  const r = new Reader(frame.payload, name);
  let message: SerialMessage;
  switch (name) {
    case 'HELLO_REQ':
      r.length(1);
      message = { name, version: r.u8() };
      break;
    case 'SET_BAUD':
      r.length(4);
      message = { name, baudRate: r.u32() };
      break;
    case 'JOB_HEX': {
      r.length(JOB_HEX_BYTES);
      const jobId = r.jobId();
      message = {
        name,
        jobId,
        headerPrefix: r.bytes(80),
        target: r.target(),
        firstNonce: r.nonce('first nonce'),
        nonceCount: r.u32(),
      };
      break;
    }
    case 'JOB_TENSOR': {
      r.length(JOB_TENSOR_BYTES);
      const jobId = r.jobId();
      const challengeHash = r.bytes(32);
      const operation = r.enumeration(OPERATIONS, 'operation');
      const activation = r.enumeration(ACTIVATIONS, 'activation');
      message = {
        name,
        jobId,
        challengeHash,
        operation,
        activation,
        dim: r.u8(),
        filters: r.u8(),
        minerPublicKey: r.bytes(32),
        pathTarget: r.bytes(8),
        mmlThresholdQ16: r.u32(),
        pathDistanceMax: r.u8(),
        firstNonce: r.nonce('first nonce'),
        nonceCount: r.u32(),
      };
      r.bytes(5); // reserved
      break;
    }
    case 'CANCEL':
      r.length(4);
      message = { name, jobId: r.u32() };
      break;
    case 'REBOOT':
      r.length(0);
      message = { name };
      break;
    case 'ACK':
      r.length(3);
      message = { name, ackSeq: r.u16(), status: r.u8() };
      break;
    case 'BOOT':
      r.length(1);
      message = { name, reason: r.u8() };
      break;
    case 'HELLO': {
      r.atLeast(27);
      const version = r.u8();
      const chipId = r.bytes(8);
      const firmware = r.lpstr('firmware version');
      const board = r.lpstr('board name');
      r.remaining(16, 'capabilities .. max baud');
      message = {
        name,
        version,
        chipId,
        firmware,
        board,
        capabilities: r.u16(),
        maxDim: r.u8(),
        maxFilters: r.u8(),
        hexRate: r.u32(),
        tensorRate: r.u32(),
        maxBaud: r.u32(),
      };
      break;
    }
    case 'PROGRESS':
      r.length(24);
      message = { name, jobId: r.u32(), noncesDone: r.u64(), hashesSinceBoot: r.u64(), rate: r.u32() };
      break;
    case 'RESULT': {
      r.atLeast(13);
      const kind = frame.payload[4];
      if (kind === 0) {
        r.length(RESULT_HEX_BYTES);
        const jobId = r.u32();
        r.u8();
        message = { name, kind: 'hex', jobId, nonce: r.nonce('nonce'), powHash: r.bytes(32) };
      } else if (kind === 1) {
        r.length(RESULT_TENSOR_BYTES);
        const jobId = r.u32();
        r.u8();
        message = {
          name,
          kind: 'tensor',
          jobId,
          nonce: r.nonce('nonce'),
          tensorResultHash: r.bytes(32),
          mmlScoreQ16: r.u32(),
          pathSignature: r.bytes(8),
          pathDistance: r.u8(),
          computationHash: r.bytes(32),
        };
      } else {
        throw r.fail(`kind: expected 0 (hex) or 1 (tensor), got ${kind}`);
      }
      break;
    }
    case 'JOB_DONE':
      r.length(13);
      message = { name, jobId: r.u32(), noncesDone: r.u64(), reason: r.u8() };
      break;
    case 'ERROR': {
      r.atLeast(7);
      const errorCode = r.u16();
      const jobId = r.u32();
      const text = r.lpstr('message');
      r.remaining(0, 'nothing after the message');
      message = { name, code: errorCode, jobId, message: text };
      break;
    }
  }
  return message;
}

/** Whether a message (by name) is sent by the host (section 4, "Host to device"). ACK is both. */
export function isHostMessage(message: SerialMessage): message is HostMessage {
  return MESSAGE_TYPES[message.name] < 0x40 || message.name === 'ACK';
}

function code<T extends string>(list: readonly T[], value: T, what: string): number {
  const index = list.indexOf(value);
  if (index < 0) {
    throw new SerialError(
      'invalid_message',
      `${what}: expected one of ${list.join(', ')}, got ${String(value)}`,
    );
  }
  return index;
}

class Writer {
  private readonly parts: number[] = [];

  finish(): Uint8Array {
    return Uint8Array.from(this.parts);
  }

  u8(value: number, what: string): void {
    this.uint(value, 1, what);
  }

  u16(value: number, what: string): void {
    this.uint(value, 2, what);
  }

  u32(value: number, what: string): void {
    this.uint(value, 4, what);
  }

  jobId(value: number): void {
    if (value === 0) throw new SerialError('invalid_message', 'jobId: expected a non-zero u32, got 0');
    this.u32(value, 'jobId');
  }

  u64(value: number | bigint, what: string): void {
    let v: bigint;
    if (typeof value === 'bigint') v = value;
    else if (Number.isSafeInteger(value)) v = BigInt(value);
    else
      throw new SerialError('invalid_message', `${what}: expected an integer in [0, 2^53 - 1], got ${value}`);
    if (v < 0n || v >= 1n << 64n) {
      throw new SerialError('invalid_message', `${what}: expected a u64, got ${v}`);
    }
    for (let i = 0; i < 8; i++) {
      this.parts.push(Number(v & 0xffn));
      v >>= 8n;
    }
  }

  target(value: bigint): void {
    if (typeof value !== 'bigint' || value < 0n || value >= 1n << 256n) {
      throw new SerialError('invalid_message', `target: expected a 256-bit integer, got ${String(value)}`);
    }
    const hex = value.toString(16).padStart(64, '0');
    for (let i = 0; i < 32; i++) this.parts.push(Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16));
  }

  bytes(value: Uint8Array, length: number, what: string): void {
    if (!(value instanceof Uint8Array) || value.length !== length) {
      throw new SerialError(
        'invalid_message',
        `${what}: expected ${length} bytes, got ${value instanceof Uint8Array ? value.length : typeof value}`,
      );
    }
    for (const b of value) this.parts.push(b);
  }

  lpstr(text: string, what: string): void {
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > 255) {
      throw new SerialError(
        'invalid_message',
        `${what}: expected at most 255 UTF-8 bytes, got ${bytes.length}`,
      );
    }
    this.parts.push(bytes.length);
    for (const b of bytes) this.parts.push(b);
  }

  private uint(value: number, size: number, what: string): void {
    const max = size === 4 ? U32_MAX : 2 ** (8 * size) - 1;
    if (!Number.isInteger(value) || value < 0 || value > max) {
      throw new SerialError('invalid_message', `${what}: expected an integer in [0, ${max}], got ${value}`);
    }
    for (let i = 0; i < size; i++) this.parts.push(Math.floor(value / 2 ** (8 * i)) & 0xff);
  }
}

class Reader {
  private at = 0;
  private readonly view: DataView;

  constructor(
    private readonly payload: Uint8Array,
    private readonly name: MessageName,
  ) {
    this.view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  }

  fail(message: string): SerialError {
    return new SerialError('malformed_payload', `${this.name}: ${message}`, {
      type: MESSAGE_TYPES[this.name],
      length: this.payload.length,
    });
  }

  length(expected: number): void {
    if (this.payload.length !== expected) {
      throw this.fail(`expected a payload of ${expected} bytes, got ${this.payload.length}`);
    }
  }

  atLeast(min: number): void {
    if (this.payload.length < min) {
      throw this.fail(`expected a payload of at least ${min} bytes, got ${this.payload.length}`);
    }
  }

  remaining(expected: number, what: string): void {
    const left = this.payload.length - this.at;
    if (left !== expected) {
      throw this.fail(`expected ${expected} bytes for ${what} at offset ${this.at}, got ${left}`);
    }
  }

  private need(size: number): number {
    if (this.at + size > this.payload.length) {
      throw this.fail(
        `expected ${size} more bytes at offset ${this.at}, got ${this.payload.length - this.at}`,
      );
    }
    const at = this.at;
    this.at += size;
    return at;
  }

  u8(): number {
    return this.view.getUint8(this.need(1));
  }

  u16(): number {
    return this.view.getUint16(this.need(2), true);
  }

  u32(): number {
    return this.view.getUint32(this.need(4), true);
  }

  u64(): bigint {
    return this.view.getBigUint64(this.need(8), true);
  }

  jobId(): number {
    const id = this.u32();
    if (id === 0) throw this.fail('job id: expected a non-zero u32, got 0');
    return id;
  }

  nonce(what: string): number {
    const v = this.u64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw this.fail(`${what}: expected an integer in [0, 2^53 - 1], got ${v}`);
    }
    return Number(v);
  }

  bytes(size: number): Uint8Array {
    const at = this.need(size);
    return this.payload.slice(at, at + size);
  }

  target(): bigint {
    const bytes = this.bytes(32);
    let hex = '';
    for (const b of bytes) hex += b.toString(16).padStart(2, '0');
    return BigInt(`0x${hex}`);
  }

  enumeration<T extends string>(list: readonly T[], what: string): T {
    const v = this.u8();
    const value = list[v];
    if (value === undefined) throw this.fail(`${what}: expected a code in [0, ${list.length - 1}], got ${v}`);
    return value;
  }

  lpstr(what: string): string {
    const n = this.u8();
    const at = this.need(n);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(this.payload.subarray(at, at + n));
    } catch {
      throw this.fail(`${what}: expected UTF-8 text`);
    }
  }
}
