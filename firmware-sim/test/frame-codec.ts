/**
 * A tiny frame codec for the simulator tests, written from docs/serial-protocol.md section 2.
 * Test-only: the real host codec is @tensormine/serial's, which these tests deliberately do not
 * use, so that the two sides are checked against the document independently.
 */
import { crc32 } from 'node:zlib';

export const MSG = {
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

export interface Frame {
  readonly type: number;
  readonly seq: number;
  readonly payload: Buffer;
  /** The whole frame as received. */
  readonly bytes: Buffer;
  /** performance.now() when it was decoded. */
  readonly at: number;
}

/** magic, version 1, type, seq, length, payload, CRC-32 of version..payload (all little-endian). */
export function encodeFrame(type: number, seq: number, payload: Uint8Array = new Uint8Array()): Buffer {
  const frame = Buffer.alloc(12 + payload.length);
  frame[0] = 0xa5;
  frame[1] = 0x5a;
  frame[2] = 1;
  frame[3] = type;
  frame.writeUInt16LE(seq & 0xffff, 4);
  frame.writeUInt16LE(payload.length, 6);
  frame.set(payload, 8);
  frame.writeUInt32LE(crc32(frame.subarray(2, 8 + payload.length)), 8 + payload.length);
  return frame;
}

/** Resynchronising decoder: steps 1 to 4 of section 2 (the tests need no timeout). */
export class FrameDecoder {
  private buffer = Buffer.alloc(0);
  garbage = 0;

  push(chunk: Buffer): Frame[] {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const frames: Frame[] = [];
    for (;;) {
      let start = 0;
      while (
        start < this.buffer.length &&
        !(
          this.buffer[start] === 0xa5 &&
          (start + 1 === this.buffer.length || this.buffer[start + 1] === 0x5a)
        )
      ) {
        start++;
      }
      this.garbage += start;
      this.buffer = this.buffer.subarray(start);
      if (this.buffer.length < 8) return frames;
      const length = this.buffer.readUInt16LE(6);
      if (this.buffer[2] !== 1 || length > 1024) {
        this.skip();
        continue;
      }
      if (this.buffer.length < 12 + length) return frames;
      const crc = this.buffer.readUInt32LE(8 + length);
      if (crc32(this.buffer.subarray(2, 8 + length)) !== crc) {
        this.skip();
        continue;
      }
      const bytes = Buffer.from(this.buffer.subarray(0, 12 + length));
      frames.push({
        type: bytes[3]!,
        seq: bytes.readUInt16LE(4),
        payload: bytes.subarray(8, 8 + length),
        bytes,
        at: performance.now(),
      });
      this.buffer = this.buffer.subarray(12 + length);
    }
  }

  private skip(): void {
    this.garbage++;
    this.buffer = this.buffer.subarray(1);
  }
}

// ---- Payloads ----

export function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value);
  return b;
}

export function ackPayload(seq: number, status = 0): Buffer {
  const b = Buffer.alloc(3);
  b.writeUInt16LE(seq);
  b[2] = status;
  return b;
}

export interface HexJob {
  jobId: number;
  /** The 80-byte header without its nonce. */
  prefix: Uint8Array;
  /** 32 bytes, big-endian. */
  target: Uint8Array;
  first: bigint;
  count: number;
}

export function jobHexPayload(job: HexJob): Buffer {
  const b = Buffer.alloc(128);
  b.writeUInt32LE(job.jobId, 0);
  b.set(job.prefix, 4);
  b.set(job.target, 84);
  b.writeBigUInt64LE(job.first, 116);
  b.writeUInt32LE(job.count, 124);
  return b;
}

export interface TensorJob {
  jobId: number;
  challengeHash: Uint8Array;
  operation: number;
  activation: number;
  dim: number;
  filters: number;
  minerPublicKey: Uint8Array;
  pathTarget: Uint8Array;
  mmlThresholdQ16: number;
  pathDistanceMax: number;
  first: bigint;
  count: number;
}

export function jobTensorPayload(job: TensorJob): Buffer {
  const b = Buffer.alloc(102);
  b.writeUInt32LE(job.jobId, 0);
  b.set(job.challengeHash, 4);
  b[36] = job.operation;
  b[37] = job.activation;
  b[38] = job.dim;
  b[39] = job.filters;
  b.set(job.minerPublicKey, 40);
  b.set(job.pathTarget, 72);
  b.writeUInt32LE(job.mmlThresholdQ16, 80);
  b[84] = job.pathDistanceMax;
  b.writeBigUInt64LE(job.first, 85);
  b.writeUInt32LE(job.count, 93);
  return b;
}

export interface Hello {
  protocolVersion: number;
  chipId: string;
  firmware: string;
  board: string;
  capabilities: number;
  maxN: number;
  maxF: number;
  hexRate: number;
  tensorRate: number;
  maxBaud: number;
}

export function parseHello(p: Buffer): Hello {
  let o = 0;
  const protocolVersion = p[o++]!;
  const chipId = p.subarray(o, o + 8).toString('hex');
  o += 8;
  const lpstr = () => {
    const n = p[o++]!;
    const s = p.subarray(o, o + n).toString('utf8');
    o += n;
    return s;
  };
  const firmware = lpstr();
  const board = lpstr();
  const capabilities = p.readUInt16LE(o);
  const maxN = p[o + 2]!;
  const maxF = p[o + 3]!;
  const hexRate = p.readUInt32LE(o + 4);
  const tensorRate = p.readUInt32LE(o + 8);
  const maxBaud = p.readUInt32LE(o + 12);
  if (o + 16 !== p.length) throw new Error(`HELLO: expected ${o + 16} bytes, got ${p.length}`);
  return { protocolVersion, chipId, firmware, board, capabilities, maxN, maxF, hexRate, tensorRate, maxBaud };
}

export type Result =
  | { jobId: number; kind: 0; nonce: bigint; powHash: string }
  | {
      jobId: number;
      kind: 1;
      nonce: bigint;
      tensorResultHash: string;
      mmlScoreQ16: number;
      pathSignature: string;
      pathDistance: number;
      computationHash: string;
    };

export function parseResult(p: Buffer): Result {
  const jobId = p.readUInt32LE(0);
  const kind = p[4];
  const nonce = p.readBigUInt64LE(5);
  if (kind === 0) {
    if (p.length !== 45) throw new Error(`RESULT hex: expected 45 bytes, got ${p.length}`);
    return { jobId, kind, nonce, powHash: p.subarray(13, 45).toString('hex') };
  }
  if (kind !== 1 || p.length !== 90) throw new Error(`RESULT: kind ${kind}, ${p.length} bytes`);
  return {
    jobId,
    kind,
    nonce,
    tensorResultHash: p.subarray(13, 45).toString('hex'),
    mmlScoreQ16: p.readUInt32LE(45),
    pathSignature: p.subarray(49, 57).toString('hex'),
    pathDistance: p[57]!,
    computationHash: p.subarray(58, 90).toString('hex'),
  };
}

export function parseProgress(p: Buffer) {
  return {
    jobId: p.readUInt32LE(0),
    done: p.readBigUInt64LE(4),
    hashes: p.readBigUInt64LE(12),
    rate: p.readUInt32LE(20),
  };
}

export function parseJobDone(p: Buffer) {
  return { jobId: p.readUInt32LE(0), done: p.readBigUInt64LE(4), reason: p[12]! };
}

export function parseAck(p: Buffer) {
  return { seq: p.readUInt16LE(0), status: p[2]! };
}

export function parseError(p: Buffer) {
  return {
    code: p.readUInt16LE(0),
    jobId: p.readUInt32LE(2),
    message: p.subarray(7, 7 + p[6]!).toString('utf8'),
  };
}
