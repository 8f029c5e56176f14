import { randomBytes } from 'node:crypto';
import { concatBytes, describe, fromHex, lpString, toHex, u64le, utf8 } from './bytes.js';
import { keyPairFromSecret, sign, verify } from './ed25519.js';
import { type ErrorCode, OK, reject, type Verdict } from './error-codes.js';
import { ProtocolError } from './errors.js';
import { sha256 } from './hash.js';
import { checkRequestTimestamp, type ReplayCache } from './replay-cache.js';

/**
 * Signed requests: every operation that acts for a public key (stake, unstake, claim, swap
 * execute, vault deposit/withdraw, marketplace order, pool join/leave, device registration)
 * carries four headers that prove the holder of the key sent exactly this method, path, query and
 * body, recently, once. See docs/protocol.md "Signed requests" for the byte layout.
 */

/** The domain tag that starts every signed-request message. */
export const REQUEST_SIGNATURE_TAG = 'PTM/request/v1';

/** Bytes of a request nonce (32 hex digits on the wire). */
export const REQUEST_NONCE_BYTES = 16;

/** The header names, lowercase (HTTP header names are case-insensitive). */
export const SIGNED_REQUEST_HEADERS = Object.freeze({
  publicKey: 'x-tm-pubkey',
  timestamp: 'x-tm-timestamp',
  nonce: 'x-tm-nonce',
  signature: 'x-tm-signature',
} as const);

/**
 * The four headers of a signed request, as {@link signRequest} returns them (a type alias, not an
 * interface, so that it is assignable to `Record<string, string>` such as fetch's `HeadersInit`).
 */
export type SignedRequestHeaders = {
  /** The signer's ed25519 public key: 64 lowercase hex digits. */
  readonly 'x-tm-pubkey': string;
  /** Unix time in milliseconds, a decimal integer. */
  readonly 'x-tm-timestamp': string;
  /** 16 random bytes: 32 lowercase hex digits. */
  readonly 'x-tm-nonce': string;
  /** The ed25519 signature of the message: 128 lowercase hex digits. */
  readonly 'x-tm-signature': string;
};

/** A request body: raw bytes, or a string that is sent as its UTF-8 encoding. */
export type RequestBody = Uint8Array | string;

/** Inputs of {@link signedRequestMessage}. */
export interface SignedRequestMessageInput {
  /** The HTTP method (ASCII letters; signed in uppercase). */
  readonly method: string;
  /** The request target exactly as sent: path and query string, e.g. `/stake?x=1`. */
  readonly path: string;
  /** The raw body; absent or empty for a request without a body. */
  readonly body?: RequestBody | undefined;
  /** The signer's 32-byte public key. */
  readonly publicKey: Uint8Array;
  /** Unix time in milliseconds. */
  readonly timestamp: number;
  /** 16 random bytes. */
  readonly nonce: Uint8Array;
}

const METHOD_RE = /^[A-Za-z]+$/;
const MAX_PATH_BYTES = 0xffff;
const TIMESTAMP_RE = /^(?:0|[1-9][0-9]{0,15})$/;
const PUBKEY_RE = /^[0-9a-f]{64}$/;
const NONCE_RE = /^[0-9a-f]{32}$/;
const SIGNATURE_RE = /^[0-9a-f]{128}$/;

/**
 * The bytes a signed request signs:
 * `utf8("PTM/request/v1") || 0x00 || lpString(METHOD) || lpString(path) || sha256(body)
 *  || u64le(timestamp) || nonce (16) || publicKey (32)`.
 * @throws ProtocolError `validation_failed` for a method that is not ASCII letters, a path that does
 * not start with `/` or is longer than 65535 UTF-8 bytes, a timestamp that is not a non-negative safe
 * integer, or a nonce or public key of the wrong length.
 */
export function signedRequestMessage(input: SignedRequestMessageInput): Uint8Array {
  const { method, path, body, publicKey, timestamp, nonce } = input;
  const invalid = (message: string) => new ProtocolError('validation_failed', message);
  if (typeof method !== 'string' || !METHOD_RE.test(method)) {
    throw invalid(`method: expected an HTTP method of ASCII letters such as "POST", got ${describe(method)}`);
  }
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw invalid(
      `path: expected the request target as sent, starting with "/" (e.g. "/stake?x=1"), got ${describe(path)}`,
    );
  }
  const pathBytes = utf8(path).length;
  if (pathBytes > MAX_PATH_BYTES) {
    throw invalid(`path: expected at most ${MAX_PATH_BYTES} UTF-8 bytes, got ${pathBytes}`);
  }
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw invalid(
      `timestamp: expected Unix time in milliseconds as a non-negative safe integer, got ${describe(timestamp)}`,
    );
  }
  if (!(nonce instanceof Uint8Array) || nonce.length !== REQUEST_NONCE_BYTES) {
    throw invalid(
      `nonce: expected ${REQUEST_NONCE_BYTES} bytes, got ${nonce instanceof Uint8Array ? nonce.length : describe(nonce)}`,
    );
  }
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) {
    throw invalid(
      `public key: expected 32 bytes, got ${publicKey instanceof Uint8Array ? publicKey.length : describe(publicKey)}`,
    );
  }
  return concatBytes(
    utf8(REQUEST_SIGNATURE_TAG),
    Uint8Array.of(0),
    lpString(method.toUpperCase()),
    lpString(path),
    sha256(bodyBytes(body)),
    u64le(timestamp),
    nonce,
    publicKey,
  );
}

/** Inputs of {@link signRequest}. */
export interface SignRequestInput {
  readonly method: string;
  /** The request target exactly as it will be sent: path and query string. */
  readonly path: string;
  /** The exact body bytes that will be sent (a string is sent as UTF-8). */
  readonly body?: RequestBody | undefined;
  /** The signer's 32-byte ed25519 secret key (seed); the public key is derived from it. */
  readonly secretKey: Uint8Array;
  /** Unix time in milliseconds; default `Date.now()`. */
  readonly timestamp?: number | undefined;
  /** 16 bytes; default 16 fresh random bytes. Never reuse a nonce. */
  readonly nonce?: Uint8Array | undefined;
}

/**
 * Signs a request for the key of `secretKey` and returns the four headers to send with it.
 * Send the body bytes exactly as signed: re-serialising JSON after signing breaks the signature.
 */
export function signRequest(input: SignRequestInput): SignedRequestHeaders {
  const { publicKey } = keyPairFromSecret(input.secretKey);
  const timestamp = input.timestamp ?? Date.now();
  const nonce = input.nonce ?? new Uint8Array(randomBytes(REQUEST_NONCE_BYTES));
  const message = signedRequestMessage({
    method: input.method,
    path: input.path,
    body: input.body,
    publicKey,
    timestamp,
    nonce,
  });
  return {
    'x-tm-pubkey': toHex(publicKey),
    'x-tm-timestamp': String(timestamp),
    'x-tm-nonce': toHex(nonce),
    'x-tm-signature': toHex(sign(message, input.secretKey)),
  };
}

/** Request headers as Node and most frameworks give them: names in any case, repeated values as arrays. */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Inputs of {@link verifySignedRequest}. */
export interface VerifySignedRequestInput {
  /** The HTTP method as received. */
  readonly method: string;
  /** The request target exactly as received (path and query string, not decoded or normalised). */
  readonly path: string;
  /** The raw body bytes as received (before JSON parsing). */
  readonly body?: RequestBody | undefined;
  readonly headers: RequestHeaders;
  /** The validator clock, Unix ms. */
  readonly now: number;
  /** Where accepted nonces are remembered. Without it, replays are not detected. */
  readonly replayCache?: ReplayCache | undefined;
}

/** A failed {@link Verdict}. */
type Rejection = Extract<Verdict, { readonly ok: false }>;

/**
 * The result of {@link verifySignedRequest}: on success, the verified signer's public key, the
 * request nonce (both lowercase hex) and the timestamp (Unix ms), for a caller that records the
 * pair itself (in the transaction of the request's effect, as the validator does).
 */
export type SignedRequestVerdict =
  | { readonly ok: true; readonly publicKey: string; readonly nonce: string; readonly timestamp: number }
  | Rejection;

/**
 * Verifies a signed request, in this order (the first failure is returned):
 * 1. all four headers present, else `signature_required` naming the missing ones;
 * 2. each well-formed, else `validation_failed` saying which and what was expected;
 * 3. `|now - timestamp| <= 60 000 ms`, else `request_expired` with the skew;
 * 4. the signature verifies, else `signature_invalid`;
 * 5. the (public key, nonce) pair is new, else `request_replayed` (recorded only now, after the
 *    signature verified, so nobody can burn another key's nonces; `rate_limited` if the cache is full).
 * Never throws.
 */
export function verifySignedRequest(input: VerifySignedRequestInput): SignedRequestVerdict {
  const { headers, now } = input;
  const names = Object.values(SIGNED_REQUEST_HEADERS);
  const values = new Map<string, string[]>(names.map((name) => [name, headerValues(headers, name)]));
  const missing = names.filter((name) => values.get(name)!.length === 0);
  if (missing.length > 0) {
    return refuse(
      'signature_required',
      `missing signed-request header${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: ` +
        'operations that act for a public key must be signed by it',
      { missing },
    );
  }

  const problems: string[] = [];
  const single = (name: string): string => {
    const all = values.get(name)!;
    if (all.length > 1) problems.push(`${name}: expected exactly one value, got ${all.length}`);
    return all[0]!;
  };
  const pubkeyText = single(SIGNED_REQUEST_HEADERS.publicKey);
  const timestampText = single(SIGNED_REQUEST_HEADERS.timestamp);
  const nonceText = single(SIGNED_REQUEST_HEADERS.nonce);
  const signatureText = single(SIGNED_REQUEST_HEADERS.signature);
  if (problems.length === 0) {
    if (!PUBKEY_RE.test(pubkeyText)) {
      problems.push(
        `x-tm-pubkey: expected 64 lowercase hex digits (a 32-byte ed25519 public key), got ${describe(pubkeyText)}`,
      );
    }
    if (!TIMESTAMP_RE.test(timestampText) || !Number.isSafeInteger(Number(timestampText))) {
      problems.push(
        `x-tm-timestamp: expected Unix time in milliseconds as a decimal integer, got ${describe(timestampText)}`,
      );
    }
    if (!NONCE_RE.test(nonceText)) {
      problems.push(
        `x-tm-nonce: expected 32 lowercase hex digits (16 random bytes), got ${describe(nonceText)}`,
      );
    }
    if (!SIGNATURE_RE.test(signatureText)) {
      problems.push(
        `x-tm-signature: expected 128 lowercase hex digits (a 64-byte ed25519 signature), got ${describe(signatureText)}`,
      );
    }
  }
  if (problems.length > 0) return refuse('validation_failed', problems.join('; '));

  const timestamp = Number(timestampText);
  const window = checkRequestTimestamp(timestamp, now);
  if (!window.ok) return window;

  const publicKey = fromHex(pubkeyText, 32);
  const nonce = fromHex(nonceText, REQUEST_NONCE_BYTES);
  let message: Uint8Array;
  try {
    message = signedRequestMessage({
      method: input.method,
      path: input.path,
      body: input.body,
      publicKey,
      timestamp,
      nonce,
    });
  } catch (error) {
    if (error instanceof ProtocolError) return refuse('validation_failed', error.message);
    throw error;
  }
  if (!verify(fromHex(signatureText, 64), message, publicKey)) {
    return refuse(
      'signature_invalid',
      `x-tm-signature does not verify for public key ${pubkeyText} over this method, path, body, timestamp and nonce`,
      {
        public_key: pubkeyText,
        method: input.method.toUpperCase(),
        path: input.path,
        body_sha256: toHex(sha256(bodyBytes(input.body))),
        timestamp,
        nonce: nonceText,
      },
    );
  }

  if (input.replayCache !== undefined) {
    const fresh = input.replayCache.check(pubkeyText, nonceText, timestamp, now);
    if (!fresh.ok) return fresh;
  }
  return { ok: true, publicKey: pubkeyText, nonce: nonceText, timestamp };
}

/**
 * Checks that the public key named in the body (`pubkey`, or `miner_pubkey` in a proof) is the key
 * that signed the request: `validation_failed` when the body value is not 64 lowercase hex digits,
 * `pubkey_mismatch` when it names another key.
 * @param field the body field name, for messages; default `"pubkey"`.
 */
export function assertBodyPubkey(verifiedPubkeyHex: string, bodyPubkey: unknown, field = 'pubkey'): Verdict {
  if (typeof bodyPubkey !== 'string' || !PUBKEY_RE.test(bodyPubkey)) {
    return reject(
      'validation_failed',
      `${field}: expected 64 lowercase hex digits, got ${describe(bodyPubkey)}`,
    );
  }
  if (bodyPubkey !== verifiedPubkeyHex) {
    return reject(
      'pubkey_mismatch',
      `${field}: the body names ${bodyPubkey} but the request was signed by ${verifiedPubkeyHex}`,
      { body_pubkey: bodyPubkey, signer_pubkey: verifiedPubkeyHex },
    );
  }
  return OK;
}

function refuse(code: ErrorCode, message: string, details?: Record<string, unknown>): Rejection {
  return reject(code, message, details) as Rejection;
}

function bodyBytes(body: RequestBody | undefined): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  return typeof body === 'string' ? utf8(body) : body;
}

/** Every value of header `name` (lowercase), whatever the case of the record's keys. */
function headerValues(headers: RequestHeaders, name: string): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    if (typeof value === 'string') out.push(value);
    else out.push(...value);
  }
  return out;
}
