import { base58 } from '@scure/base';

/** Byte helpers of the page (no Node: the browser's TextEncoder, DataView and WebCrypto). */

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Bytes of a hex string of `length` bytes; throws on anything else. */
export function fromHex(text: string, length: number, what: string): Uint8Array {
  const clean = text.trim().toLowerCase();
  if (!new RegExp(`^[0-9a-f]{${length * 2}}$`).test(clean)) {
    throw new Error(`${what}: expected ${length * 2} hex digits`);
  }
  return Uint8Array.from(clean.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A wallet address: the base58 form of a 32-byte public key. */
export const toWallet = (publicKey: Uint8Array): string => base58.encode(publicKey);

/** The 32-byte public key of a wallet address; undefined when it is not one. */
export function walletKey(address: string): Uint8Array | undefined {
  try {
    const bytes = base58.decode(address);
    return bytes.length === 32 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A fresh copy in an ArrayBuffer of its own (what WebCrypto takes). */
export const buffer = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer as ArrayBuffer;

export const toBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
export const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
