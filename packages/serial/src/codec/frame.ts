import { crc32 } from 'node:zlib';
import { SerialError } from '../errors.js';

/**
 * Frames of the device serial protocol (docs/serial-protocol.md section 2):
 *
 * | offset | size | field   |
 * |--------|------|---------|
 * | 0      | 2    | magic `A5 5A` |
 * | 2      | 1    | version (1) |
 * | 3      | 1    | type |
 * | 4      | 2    | seq, u16le |
 * | 6      | 2    | payload length N, u16le, 0..1024 |
 * | 8      | N    | payload |
 * | 8+N    | 4    | CRC-32 (zlib's) of bytes 2 .. 8+N, u32le |
 */
export const MAGIC_0 = 0xa5;
export const MAGIC_1 = 0x5a;
export const FRAME_VERSION = 1;
export const HEADER_BYTES = 8;
export const CRC_BYTES = 4;
/** Bytes a frame adds to its payload: 12. */
export const FRAME_OVERHEAD = HEADER_BYTES + CRC_BYTES;
export const MAX_PAYLOAD = 1024;
export const MAX_FRAME_BYTES = FRAME_OVERHEAD + MAX_PAYLOAD;

export interface Frame {
  readonly type: number;
  /** The sender's sequence number, u16. */
  readonly seq: number;
  readonly payload: Uint8Array;
}

/**
 * Encodes one frame.
 * @throws SerialError `invalid_frame` for a type outside u8, a seq outside u16 or a payload over 1024 bytes.
 */
export function encodeFrame(frame: Frame): Uint8Array {
  const { type, seq, payload } = frame;
  if (!Number.isInteger(type) || type < 0 || type > 0xff) {
    throw new SerialError('invalid_frame', `type: expected an integer in [0, 255], got ${type}`);
  }
  if (!Number.isInteger(seq) || seq < 0 || seq > 0xffff) {
    throw new SerialError('invalid_frame', `seq: expected an integer in [0, 65535], got ${seq}`);
  }
  if (!(payload instanceof Uint8Array) || payload.length > MAX_PAYLOAD) {
    throw new SerialError(
      'invalid_frame',
      `payload: expected at most ${MAX_PAYLOAD} bytes, got ${payload instanceof Uint8Array ? payload.length : typeof payload}`,
    );
  }
  const out = new Uint8Array(FRAME_OVERHEAD + payload.length);
  const view = new DataView(out.buffer);
  out[0] = MAGIC_0;
  out[1] = MAGIC_1;
  out[2] = FRAME_VERSION;
  out[3] = type;
  view.setUint16(4, seq, true);
  view.setUint16(6, payload.length, true);
  out.set(payload, HEADER_BYTES);
  view.setUint32(HEADER_BYTES + payload.length, frameCrc(out, payload.length), true);
  return out;
}

/** The CRC of a frame whose header starts at `at` in `bytes`: CRC-32 of version .. payload end. */
export function frameCrc(bytes: Uint8Array, payloadLength: number, at = 0): number {
  return crc32(bytes.subarray(at + 2, at + HEADER_BYTES + payloadLength));
}
