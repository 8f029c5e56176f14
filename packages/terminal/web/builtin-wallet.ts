import { buffer, concatBytes, fromBase64, fromHex, toBase64, toHex, toWallet, utf8 } from './bytes.js';
import type { PageWallet } from './page-wallet.js';

/**
 * The page's own wallet, for people without a browser wallet: an ed25519 key made in the page
 * (WebCrypto), kept in this browser only encrypted with a passphrase (PBKDF2-SHA-256, 600 000
 * iterations, then AES-256-GCM; the public key is authenticated with it), and exportable to and
 * importable from the key file of `miner keys` (`{"type":"ed25519","public_key","secret_key"}`).
 * Unlocked, the key lives in memory as a non-extractable CryptoKey; the secret itself is held
 * only while it is sealed, exported or imported.
 */

/** The key as stored in the browser: nothing in it reveals the secret without the passphrase. */
export interface SealedKey {
  readonly version: 1;
  /** The public key, 64 hex digits (authenticated by the cipher). */
  readonly public_key: string;
  readonly kdf: {
    readonly name: 'PBKDF2';
    readonly hash: 'SHA-256';
    readonly iterations: number;
    readonly salt: string;
  };
  readonly cipher: { readonly name: 'AES-GCM'; readonly iv: string };
  /** The 32-byte secret and the GCM tag, base64. */
  readonly ciphertext: string;
}

export const KDF_ITERATIONS = 600_000;
export const MIN_PASSPHRASE = 8;

/** PKCS #8 of an Ed25519 private key (RFC 8410) before its 32 bytes: what WebCrypto imports. */
const PKCS8_PREFIX = fromHex('302e020100300506032b657004220420', 16, 'prefix');

export class WrongPassphraseError extends Error {
  override readonly name = 'WrongPassphraseError';
}

/** The signing key and the public key of a 32-byte secret. */
export async function keyFromSecret(
  secret: Uint8Array,
): Promise<{ privateKey: CryptoKey; publicKey: Uint8Array }> {
  if (secret.length !== 32) throw new Error('a secret key is 32 bytes');
  const pkcs8 = concatBytes(PKCS8_PREFIX, secret);
  try {
    // Extractable once, to read its public half; the key kept is not.
    const readable = await crypto.subtle.importKey('pkcs8', buffer(pkcs8), { name: 'Ed25519' }, true, [
      'sign',
    ]);
    const jwk = await crypto.subtle.exportKey('jwk', readable);
    const publicKey = fromBase64((jwk.x ?? '').replace(/-/g, '+').replace(/_/g, '/'));
    const privateKey = await crypto.subtle.importKey('pkcs8', buffer(pkcs8), { name: 'Ed25519' }, false, [
      'sign',
    ]);
    return { privateKey, publicKey };
  } finally {
    pkcs8.fill(0);
  }
}

async function aesKey(passphrase: string, salt: Uint8Array, iterations: number): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey('raw', buffer(utf8(passphrase)), 'PBKDF2', false, [
    'deriveKey',
  ]);
  return crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt: buffer(salt), iterations },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/** Encrypts `secret` with `passphrase` for keeping in the browser. */
export async function seal(
  secret: Uint8Array,
  passphrase: string,
  iterations = KDF_ITERATIONS,
): Promise<SealedKey> {
  if (passphrase.length < MIN_PASSPHRASE)
    throw new Error(`the passphrase needs at least ${MIN_PASSPHRASE} characters`);
  const { publicKey } = await keyFromSecret(secret);
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const publicHex = toHex(publicKey);
  const key = await aesKey(passphrase, salt, iterations);
  const ciphertext = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv: buffer(iv), additionalData: buffer(utf8(publicHex)) },
    key,
    buffer(secret),
  );
  return {
    version: 1,
    public_key: publicHex,
    kdf: { name: 'PBKDF2', hash: 'SHA-256', iterations, salt: toBase64(salt) },
    cipher: { name: 'AES-GCM', iv: toBase64(iv) },
    ciphertext: toBase64(new Uint8Array(ciphertext)),
  };
}

/** The secret of a sealed key. @throws WrongPassphraseError when the passphrase does not open it. */
export async function unseal(sealed: SealedKey, passphrase: string): Promise<Uint8Array> {
  const key = await aesKey(passphrase, fromBase64(sealed.kdf.salt), sealed.kdf.iterations);
  let secret: Uint8Array;
  try {
    secret = new Uint8Array(
      await crypto.subtle.decrypt(
        {
          name: 'AES-GCM',
          iv: buffer(fromBase64(sealed.cipher.iv)),
          additionalData: buffer(utf8(sealed.public_key)),
        },
        key,
        buffer(fromBase64(sealed.ciphertext)),
      ),
    );
  } catch {
    throw new WrongPassphraseError('wrong passphrase');
  }
  return secret;
}

/** Whether a stored value is a sealed key this page can open. */
export function isSealedKey(value: unknown): value is SealedKey {
  const v = value as Partial<SealedKey> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.version === 1 &&
    typeof v.public_key === 'string' &&
    /^[0-9a-f]{64}$/.test(v.public_key) &&
    v.kdf?.name === 'PBKDF2' &&
    Number.isSafeInteger(v.kdf.iterations) &&
    typeof v.kdf.salt === 'string' &&
    v.cipher?.name === 'AES-GCM' &&
    typeof v.cipher.iv === 'string' &&
    typeof v.ciphertext === 'string'
  );
}

/** The key file of `miner keys` for a secret (JSON text, with a final newline). */
export async function keyFileText(secret: Uint8Array): Promise<string> {
  const { publicKey } = await keyFromSecret(secret);
  return `${JSON.stringify({ type: 'ed25519', public_key: toHex(publicKey), secret_key: toHex(secret) })}\n`;
}

/**
 * The secret of what a person imports: a key file of `miner keys` (its public_key must belong
 * to its secret_key) or a secret key alone, 64 hex digits (what `miner keys import` reads).
 * Error messages never contain the input.
 */
export async function parseSecret(text: string): Promise<Uint8Array> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let file: Record<string, unknown>;
    try {
      file = JSON.parse(trimmed) as Record<string, unknown>;
    } catch {
      throw new Error('not a key file: the text is not JSON');
    }
    if (file.type !== 'ed25519' || typeof file.secret_key !== 'string') {
      throw new Error('not a key file: expected {"type":"ed25519","public_key":hex,"secret_key":hex}');
    }
    const secret = fromHex(file.secret_key, 32, 'secret_key');
    const { publicKey } = await keyFromSecret(secret);
    if (file.public_key !== undefined && file.public_key !== toHex(publicKey)) {
      throw new Error('not a key file: its public_key does not belong to its secret_key');
    }
    return secret;
  }
  return fromHex(trimmed.replace(/^0x/i, ''), 32, 'secret key');
}

/** A new random secret. */
export const newSecret = (): Uint8Array => crypto.getRandomValues(new Uint8Array(32));

/** The built-in wallet, unlocked: signs with a key that cannot be read back. */
export async function builtinWallet(secret: Uint8Array): Promise<PageWallet> {
  const { privateKey, publicKey } = await keyFromSecret(secret);
  return {
    kind: 'builtin',
    name: 'Built-in wallet',
    address: toWallet(publicKey),
    publicKey,
    async signMessage(message) {
      return new Uint8Array(await crypto.subtle.sign('Ed25519', privateKey, buffer(message)));
    },
  };
}
