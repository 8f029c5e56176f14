import type { KeyObject } from 'node:crypto';
import {
  createPrivateKey,
  createPublicKey,
  sign as cryptoSign,
  verify as cryptoVerify,
  hash,
  randomBytes,
} from 'node:crypto';
import { fromHex, toHex } from './bytes.js';
import { ProtocolError } from './errors.js';

/**
 * ed25519 keys and signatures. Public keys travel as 64 lowercase hex digits; signatures as
 * 64 bytes (the seed's `signature`: an array of byte integers). Implemented on node:crypto,
 * which verifies several times faster than a JavaScript implementation; the tests cross-check
 * it against @noble/ed25519.
 */

export const PUBLIC_KEY_BYTES = 32;
export const SECRET_KEY_BYTES = 32;
export const SIGNATURE_BYTES = 64;

const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);
const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

/**
 * Importing a raw key into a KeyObject costs about as much as the signature itself, and a
 * validator verifies the same miners' keys over and over: keep the most recent ones.
 */
class KeyObjectCache {
  readonly #entries = new Map<string, KeyObject>();
  constructor(
    private readonly max: number,
    private readonly idOf: (bytes: Uint8Array) => string,
  ) {}
  get(bytes: Uint8Array, make: () => KeyObject): KeyObject {
    const id = this.idOf(bytes);
    let key = this.#entries.get(id);
    if (key) {
      this.#entries.delete(id);
    } else {
      key = make();
      if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as string);
    }
    this.#entries.set(id, key);
    return key;
  }
}
const publicKeys = new KeyObjectCache(4096, (bytes) => Buffer.from(bytes).toString('base64'));
// Secret keys are looked up by a digest, so the cache never holds a secret as a string.
const privateKeys = new KeyObjectCache(64, (bytes) => hash('sha256', bytes, 'base64'));

/**
 * The public key of each cached private key object (as long as the cache keeps it): deriving
 * it (createPublicKey, then the SPKI export) cost about 200 µs, more than the signature, and
 * `signRequest` derives it for every request it signs.
 */
const publicOfPrivate = new WeakMap<KeyObject, Uint8Array>();

export interface KeyPair {
  /** The 32-byte seed. Never log it, never send it. */
  readonly secretKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

export function generateKeyPair(): KeyPair {
  return keyPairFromSecret(new Uint8Array(randomBytes(SECRET_KEY_BYTES)));
}

export function keyPairFromSecret(secretKey: Uint8Array): KeyPair {
  if (secretKey.length !== SECRET_KEY_BYTES) {
    throw new ProtocolError(
      'invalid_secret_key',
      `secret key: expected ${SECRET_KEY_BYTES} bytes, got ${secretKey.length}`,
    );
  }
  const priv = privateKeyObject(secretKey);
  let publicKey = publicOfPrivate.get(priv);
  if (publicKey === undefined) {
    const spki = createPublicKey(priv).export({ format: 'der', type: 'spki' });
    publicKey = new Uint8Array(spki.subarray(SPKI_PREFIX.length));
    publicOfPrivate.set(priv, publicKey);
  }
  return { secretKey: Uint8Array.from(secretKey), publicKey: Uint8Array.from(publicKey) };
}

export function sign(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return new Uint8Array(cryptoSign(null, message, privateKeyObject(secretKey)));
}

/** True when `signature` is a valid ed25519 signature of `message` by `publicKey`. Never throws. */
export function verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_BYTES || publicKey.length !== PUBLIC_KEY_BYTES) return false;
  let key: KeyObject;
  try {
    key = publicKeys.get(publicKey, () =>
      createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' }),
    );
  } catch {
    return false;
  }
  try {
    return cryptoVerify(null, message, key, signature);
  } catch {
    return false;
  }
}

/** Parses a public key from its wire form (64 hex digits). */
export function parsePublicKey(hex: string): Uint8Array {
  return fromHex(hex, PUBLIC_KEY_BYTES, 'public key');
}

export function formatPublicKey(publicKey: Uint8Array): string {
  return toHex(publicKey);
}

/**
 * Parses a signature in its wire form: an array of 64 integers in [0, 255].
 * @throws ProtocolError `invalid_signature_encoding`
 */
export function signatureFromWire(value: unknown): Uint8Array {
  if (!Array.isArray(value) || value.length !== SIGNATURE_BYTES) {
    throw new ProtocolError(
      'invalid_signature_encoding',
      `signature: expected an array of ${SIGNATURE_BYTES} byte integers, got ${Array.isArray(value) ? `an array of ${value.length}` : typeof value}`,
    );
  }
  const out = new Uint8Array(SIGNATURE_BYTES);
  for (let i = 0; i < SIGNATURE_BYTES; i++) {
    const b = value[i];
    if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255) {
      throw new ProtocolError(
        'invalid_signature_encoding',
        `signature[${i}]: expected an integer in [0, 255], got ${JSON.stringify(b)}`,
      );
    }
    out[i] = b;
  }
  return out;
}

export function signatureToWire(signature: Uint8Array): number[] {
  return Array.from(signature);
}

function privateKeyObject(secretKey: Uint8Array): KeyObject {
  if (secretKey.length !== SECRET_KEY_BYTES) {
    throw new ProtocolError(
      'invalid_secret_key',
      `secret key: expected ${SECRET_KEY_BYTES} bytes, got ${secretKey.length}`,
    );
  }
  return privateKeys.get(secretKey, () =>
    createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, secretKey]), format: 'der', type: 'pkcs8' }),
  );
}
