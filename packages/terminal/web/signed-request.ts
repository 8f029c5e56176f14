import { buffer, concatBytes, toHex, utf8 } from './bytes.js';

/**
 * The signed-request message of docs/protocol.md ("Signed requests"), built in the browser:
 * `utf8("PTM/request/v1") || 0x00 || lpString(METHOD) || lpString(path) || sha256(body)
 *  || u64le(timestamp ms) || nonce (16) || publicKey (32)`, lpString = u16le length || UTF-8.
 * The page's second implementation of the protocol's signedRequestMessage, held to the same
 * shared vectors (packages/protocol/vectors/signed-requests.vectors.json) by its test.
 */

export const REQUEST_SIGNATURE_TAG = 'PTM/request/v1';

export interface RequestToSign {
  readonly method: string;
  readonly path: string;
  readonly body: string;
  readonly publicKey: Uint8Array;
  /** Unix time in milliseconds. */
  readonly timestamp: number;
  /** 16 bytes. */
  readonly nonce: Uint8Array;
}

function lpString(text: string): Uint8Array {
  const bytes = utf8(text);
  if (bytes.length > 0xffff) throw new Error('a signed-request field is longer than 65535 bytes');
  const out = new Uint8Array(2 + bytes.length);
  new DataView(out.buffer).setUint16(0, bytes.length, true);
  out.set(bytes, 2);
  return out;
}

function u64le(value: number): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error('timestamp: expected a safe non-negative integer');
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value), true);
  return out;
}

export async function signedRequestMessage(request: RequestToSign): Promise<Uint8Array> {
  if (request.nonce.length !== 16) throw new Error('nonce: expected 16 bytes');
  if (request.publicKey.length !== 32) throw new Error('public key: expected 32 bytes');
  const bodyHash = new Uint8Array(await crypto.subtle.digest('SHA-256', buffer(utf8(request.body))));
  return concatBytes(
    utf8(REQUEST_SIGNATURE_TAG),
    Uint8Array.of(0),
    lpString(request.method.toUpperCase()),
    lpString(request.path),
    bodyHash,
    u64le(request.timestamp),
    request.nonce,
    request.publicKey,
  );
}

/** A fresh 16-byte nonce, as 32 hex digits and as bytes. */
export function newNonce(): { hex: string; bytes: Uint8Array } {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return { hex: toHex(bytes), bytes };
}
