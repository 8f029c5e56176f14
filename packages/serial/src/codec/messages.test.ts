import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SerialError } from '../errors.js';
import { FrameDecoder } from './decoder.js';
import {
  decodeMessage,
  encodeMessage,
  encodeMessageFrame,
  JOB_HEX_BYTES,
  JOB_TENSOR_BYTES,
  type JobHexMessage,
  MESSAGE_TYPES,
  RESULT_HEX_BYTES,
  RESULT_TENSOR_BYTES,
  type SerialMessage,
} from './messages.js';

const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

const examples: SerialMessage[] = [
  { name: 'HELLO_REQ', version: 1 },
  { name: 'SET_BAUD', baudRate: 921_600 },
  {
    name: 'JOB_HEX',
    jobId: 0xdeadbeef,
    headerPrefix: bytes(80),
    target: 2n ** 252n - 1n,
    firstNonce: Number.MAX_SAFE_INTEGER - 10,
    nonceCount: 0xffff_ffff,
  },
  {
    name: 'JOB_TENSOR',
    jobId: 7,
    challengeHash: bytes(32, 2),
    operation: 'conv',
    activation: 'tanh',
    dim: 32,
    filters: 4,
    minerPublicKey: bytes(32, 3),
    pathTarget: bytes(8, 4),
    mmlThresholdQ16: 65536,
    pathDistanceMax: 29,
    firstNonce: 123_456_789,
    nonceCount: 500,
  },
  { name: 'CANCEL', jobId: 0 },
  { name: 'REBOOT' },
  { name: 'ACK', ackSeq: 65535, status: 5 },
  { name: 'BOOT', reason: 2 },
  {
    name: 'HELLO',
    version: 1,
    chipId: Uint8Array.of(0x3c, 0x61, 0x05, 0x3f, 0x6a, 0x28, 0, 0),
    firmware: 'tm-fw 0.1.0',
    board: 'esp32-devkitc ✓',
    capabilities: 0x1f,
    maxDim: 32,
    maxFilters: 4,
    hexRate: 250_000,
    tensorRate: 1200,
    maxBaud: 921_600,
  },
  { name: 'PROGRESS', jobId: 9, noncesDone: 2n ** 40n, hashesSinceBoot: 2n ** 63n + 5n, rate: 57_000 },
  { name: 'RESULT', kind: 'hex', jobId: 9, nonce: 47, powHash: bytes(32, 5) },
  {
    name: 'RESULT',
    kind: 'tensor',
    jobId: 10,
    nonce: 2 ** 53 - 1,
    tensorResultHash: bytes(32, 6),
    mmlScoreQ16: 22016,
    pathSignature: bytes(8, 7),
    pathDistance: 39,
    computationHash: bytes(32, 8),
  },
  { name: 'JOB_DONE', jobId: 9, noncesDone: 1000n, reason: 1 },
  { name: 'ERROR', code: 5, jobId: 9, message: 'result buffer full' },
];

describe('messages', () => {
  it.each(examples.map((m) => [m.name, m] as const))('round-trips %s', (_name, message) => {
    const { type, payload } = encodeMessage(message);
    expect(type).toBe(MESSAGE_TYPES[message.name]);
    expect(decodeMessage({ type, payload })).toEqual(message);
  });

  it('has the payload sizes of the document', () => {
    const size = (name: string) => encodeMessage(examples.find((m) => m.name === name)!).payload.length;
    expect(size('JOB_HEX')).toBe(JOB_HEX_BYTES);
    expect(size('JOB_TENSOR')).toBe(JOB_TENSOR_BYTES);
    expect(encodeMessage(examples[10]!).payload.length).toBe(RESULT_HEX_BYTES);
    expect(encodeMessage(examples[11]!).payload.length).toBe(RESULT_TENSOR_BYTES);
    expect(size('PROGRESS')).toBe(24);
    expect(size('JOB_DONE')).toBe(13);
    expect(size('ACK')).toBe(3);
  });

  it('writes the hexchain target big-endian and the nonces little-endian', () => {
    const job = examples[2]!;
    const { payload } = encodeMessage(job);
    expect([...payload.subarray(0, 4)]).toEqual([0xef, 0xbe, 0xad, 0xde]);
    expect(payload[84]).toBe(0x0f);
    expect(payload[115]).toBe(0xff);
    expect([...payload.subarray(116, 124)]).toEqual([0xf5, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0x00]);
  });

  it('rejects a wrong length with a typed error that says what was expected', () => {
    const { payload } = encodeMessage(examples[2]!);
    const decode = () => decodeMessage({ type: MESSAGE_TYPES.JOB_HEX, payload: payload.subarray(0, 127) });
    expect(decode).toThrow(SerialError);
    expect(decode).toThrow('JOB_HEX: expected a payload of 128 bytes, got 127');
    try {
      decode();
    } catch (error) {
      expect((error as SerialError).code).toBe('malformed_payload');
    }
  });

  it('rejects bad fields: result kind, nonce above 2^53 - 1, operation, lpstr past the end', () => {
    const hex = encodeMessage(examples[10]!).payload.slice();
    hex[4] = 2;
    expect(() => decodeMessage({ type: MESSAGE_TYPES.RESULT, payload: hex })).toThrow(
      'RESULT: kind: expected 0 (hex) or 1 (tensor), got 2',
    );
    const big = encodeMessage(examples[10]!).payload.slice();
    big[12] = 0x20;
    expect(() => decodeMessage({ type: MESSAGE_TYPES.RESULT, payload: big })).toThrow(
      'RESULT: nonce: expected an integer in [0, 2^53 - 1], got 2305843009213693999',
    );
    const tensor = encodeMessage(examples[3]!).payload.slice();
    tensor[36] = 7;
    expect(() => decodeMessage({ type: MESSAGE_TYPES.JOB_TENSOR, payload: tensor })).toThrow(
      'JOB_TENSOR: operation: expected a code in [0, 1], got 7',
    );
    const hello = encodeMessage(examples[8]!).payload.slice();
    hello[9] = 200;
    expect(() => decodeMessage({ type: MESSAGE_TYPES.HELLO, payload: hello })).toThrow(/HELLO: expected/);
  });

  it('rejects an unknown type', () => {
    expect(() => decodeMessage({ type: 0x33, payload: new Uint8Array() })).toThrow(
      'frame type 0x33: not a message of the serial protocol',
    );
  });

  it('refuses to encode out-of-range values', () => {
    expect(() => encodeMessage({ ...(examples[2] as JobHexMessage), jobId: 0 })).toThrow(
      'jobId: expected a non-zero u32, got 0',
    );
    expect(() => encodeMessage({ name: 'SET_BAUD', baudRate: 2 ** 32 })).toThrow(
      'baudRate: expected an integer in [0, 4294967295], got 4294967296',
    );
    expect(() => encodeMessage({ name: 'ERROR', code: 1, jobId: 0, message: 'x'.repeat(256) })).toThrow(
      'message: expected at most 255 UTF-8 bytes, got 256',
    );
  });

  it('never throws anything but SerialError on random payloads (property)', () => {
    const types = Object.values(MESSAGE_TYPES);
    fc.assert(
      fc.property(
        fc.constantFrom(...types, 0, 0x46, 0xff),
        fc.uint8Array({ maxLength: 140 }),
        (type, payload) => {
          try {
            decodeMessage({ type, payload });
          } catch (error) {
            expect(error).toBeInstanceOf(SerialError);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('survives the full path: frames, garbage and random splits (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...examples), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat({ max: 120 }), { maxLength: 10 }),
        (messages, cuts) => {
          const parts = messages.map((m, i) => encodeMessageFrame(m, i));
          const stream = new Uint8Array(parts.reduce((n, p) => n + p.length + 3, 0));
          let at = 0;
          for (const p of parts) {
            stream.set([0x0d, 0x0a, 0x3e], at); // "\r\n>" between frames
            stream.set(p, at + 3);
            at += p.length + 3;
          }
          const d = new FrameDecoder();
          const out: SerialMessage[] = [];
          let from = 0;
          for (const cut of cuts) {
            const to = Math.min(stream.length, from + cut);
            for (const f of d.push(stream.subarray(from, to))) out.push(decodeMessage(f));
            from = to;
          }
          for (const f of d.push(stream.subarray(from))) out.push(decodeMessage(f));
          expect(out).toEqual(messages);
        },
      ),
      { numRuns: 200 },
    );
  });
});
