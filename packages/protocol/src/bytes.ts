import { ProtocolError } from './errors.js';

/** Byte helpers shared by every consensus encoding. All multi-byte integers are little-endian. */

const HEX_RE = /^(?:[0-9a-f]{2})*$/;

/** Lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Parses lowercase or uppercase hex. With `length`, the result must have exactly that many bytes.
 * @throws ProtocolError `invalid_hex` saying what was expected and what arrived.
 */
export function fromHex(hex: string, length?: number, what = 'hex string'): Uint8Array {
  const lower = typeof hex === 'string' ? hex.toLowerCase() : '';
  if (typeof hex !== 'string' || !HEX_RE.test(lower)) {
    throw new ProtocolError(
      'invalid_hex',
      `${what}: expected an even-length hex string, got ${describe(hex)}`,
    );
  }
  if (length !== undefined && lower.length !== length * 2) {
    throw new ProtocolError(
      'invalid_hex',
      `${what}: expected ${length} bytes (${length * 2} hex digits), got ${lower.length / 2} bytes`,
    );
  }
  return new Uint8Array(Buffer.from(lower, 'hex'));
}

export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

export function u8(value: number): Uint8Array {
  assertUint(value, 0xff, 'u8');
  return Uint8Array.of(value);
}

export function u16le(value: number): Uint8Array {
  assertUint(value, 0xffff, 'u16');
  return Uint8Array.of(value & 0xff, value >>> 8);
}

export function u32le(value: number): Uint8Array {
  assertUint(value, 0xffffffff, 'u32');
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value, true);
  return out;
}

export function i32le(value: number): Uint8Array {
  if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) {
    throw new ProtocolError(
      'invalid_integer',
      `i32: expected an integer in [-2^31, 2^31), got ${describe(value)}`,
    );
  }
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, value, true);
  return out;
}

/** u64 little-endian from a non-negative safe integer or a bigint. */
export function u64le(value: number | bigint): Uint8Array {
  const big = typeof value === 'bigint' ? value : BigInt(assertSafeUint(value, 'u64'));
  if (big < 0n || big > 0xffffffffffffffffn) {
    throw new ProtocolError('invalid_integer', `u64: expected an integer in [0, 2^64), got ${big}`);
  }
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, big, true);
  return out;
}

/** A string as a u16-length-prefixed UTF-8 byte string (the only variable-length field encoding). */
export function lpString(text: string): Uint8Array {
  const bytes = utf8(text);
  return concatBytes(u16le(bytes.length), bytes);
}

function assertUint(value: number, max: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new ProtocolError(
      'invalid_integer',
      `${what}: expected an integer in [0, ${max}], got ${describe(value)}`,
    );
  }
}

function assertSafeUint(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ProtocolError(
      'invalid_integer',
      `${what}: expected a non-negative safe integer, got ${describe(value)}`,
    );
  }
  return value;
}

/** A short, safe description of an unexpected value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') {
    return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return typeof value;
}
