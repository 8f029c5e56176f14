import { randomBytes } from 'node:crypto';
import { link, mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  buildSubmission,
  type Coord,
  decodeHeader,
  describe,
  formatPublicKey,
  generateKeyPair,
  type HexSubmissionInput,
  type KeyPair,
  keyPairFromSecret,
  type ProofWire,
  parseProof,
  type SignedRequestHeaders,
  signatureToWire,
  signProof,
  signRequest,
  signSubmission,
  toHex,
} from '@tensormine/protocol';
import { InvalidInputError, KeyFileError } from './errors.js';

/**
 * The miner's identity: an ed25519 key pair. It signs signed requests (register, stake, ...),
 * v4.0 proofs and v4.1 block submissions, so that nobody has to assemble the signed bytes.
 *
 * The secret key stays inside: it is never logged, never in an error message, and not in the
 * signer's `toString()`, `util.inspect` or `JSON.stringify` (which show the public key only).
 * It leaves the process only through {@link Signer.save}, into a file of mode 0600.
 */

/** The key file format: `{"type":"ed25519","public_key":hex,"secret_key":hex}`. */
export interface KeyFile {
  readonly type: 'ed25519';
  /** 64 lowercase hex digits. */
  readonly public_key: string;
  /** 64 lowercase hex digits: the 32-byte ed25519 seed. */
  readonly secret_key: string;
}

export interface LoadKeyFileOptions {
  /**
   * Load a key file that group or others can access (mode bits 0o077). Off by default: such a
   * file is refused, because anyone who can read it can mine, stake and spend as this key.
   */
  readonly allowInsecurePermissions?: boolean;
}

export interface SaveKeyFileOptions {
  /** Replace an existing file (default false: an existing file is never overwritten). */
  readonly overwrite?: boolean;
}

/** What {@link Signer.buildHexSubmission} needs: a solved v4.1 challenge. */
export interface HexSubmissionParts {
  readonly challengeId: string;
  /** The challenge's `challenge_hash`, 32 bytes. */
  readonly challengeHash: Uint8Array;
  readonly coord: Coord;
  readonly nonce: number;
}

/** What {@link Signer.signRequest} signs: the request exactly as it will be sent. */
export interface RequestToSign {
  readonly method: string;
  /** The request target: path and query string, e.g. `/stake` or `/devices?limit=5`. */
  readonly path: string;
  /** The exact body text (or bytes) that will be sent; absent for a request without a body. */
  readonly body?: string | Uint8Array | undefined;
}

const HEX64 = /^[0-9a-f]{64}$/;

export class Signer {
  readonly #secretKey: Uint8Array;
  readonly #publicKey: Uint8Array;
  /** The public key, 64 lowercase hex digits (the `pubkey` of the API). */
  readonly publicKeyHex: string;

  private constructor(keyPair: KeyPair) {
    this.#secretKey = Uint8Array.from(keyPair.secretKey);
    this.#publicKey = Uint8Array.from(keyPair.publicKey);
    this.publicKeyHex = formatPublicKey(this.#publicKey);
  }

  /** A new random key pair. */
  static generate(): Signer {
    return new Signer(generateKeyPair());
  }

  /**
   * A signer for an existing secret key: 32 bytes, or 64 hex digits.
   * @throws InvalidInputError for anything else (the message never contains the key).
   */
  static fromSecretKey(secretKey: Uint8Array | string): Signer {
    if (typeof secretKey === 'string') {
      const hex = secretKey.toLowerCase();
      if (!HEX64.test(hex)) {
        throw new InvalidInputError([
          {
            path: 'secretKey',
            message: `secretKey: expected 64 hex digits (32 bytes), got ${shapeOf(secretKey)}`,
          },
        ]);
      }
      return new Signer(keyPairFromSecret(new Uint8Array(Buffer.from(hex, 'hex'))));
    }
    if (!(secretKey instanceof Uint8Array) || secretKey.length !== 32) {
      throw new InvalidInputError([
        { path: 'secretKey', message: `secretKey: expected 32 bytes, got ${shapeOf(secretKey)}` },
      ]);
    }
    return new Signer(keyPairFromSecret(secretKey));
  }

  /**
   * Loads a key file (see {@link KeyFile}). Refuses, with a KeyFileError, a file that group or
   * others can access unless `allowInsecurePermissions` is set (POSIX systems only), a file that
   * is not a key file, and a file whose public_key does not belong to its secret_key.
   */
  static async load(path: string, options: LoadKeyFileOptions = {}): Promise<Signer> {
    let text: string;
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      handle = await open(path, 'r');
      const stat = await handle.stat();
      const loose = stat.mode & 0o077;
      if (loose !== 0 && process.platform !== 'win32' && options.allowInsecurePermissions !== true) {
        const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
        throw new KeyFileError(
          'key_file_permissions',
          path,
          `key file ${path} is accessible by group or others (mode ${mode}): run "chmod 600 ${path}", or load it with { allowInsecurePermissions: true }`,
        );
      }
      text = await handle.readFile({ encoding: 'utf8' });
    } catch (error) {
      if (error instanceof KeyFileError) throw error;
      const code = (error as { code?: unknown }).code;
      if (code === 'ENOENT') {
        throw new KeyFileError(
          'key_file_not_found',
          path,
          `key file ${path} does not exist: create one with Signer.generate().save(path)`,
          { cause: error },
        );
      }
      throw new KeyFileError('key_file_io', path, `could not read key file ${path}: ${String(code)}`, {
        cause: error,
      });
    } finally {
      await handle?.close();
    }
    return new Signer(parseKeyFile(text, path));
  }

  /**
   * A signer for the text of a key file (see {@link KeyFile}), e.g. one exported by the web
   * terminal's built-in wallet; `origin` names it in errors (never the key).
   * @throws KeyFileError `key_file_invalid`
   */
  static fromKeyFile(text: string, origin = 'input'): Signer {
    return new Signer(parseKeyFile(text, origin));
  }

  /**
   * Writes the key file with mode 0600 (its folder is created with mode 0700 if missing). The
   * file is written under a temporary name and then moved in place, so a crash never leaves a
   * half-written key; an existing file is kept unless `overwrite` is set.
   */
  async save(path: string, options: SaveKeyFileOptions = {}): Promise<void> {
    const contents: KeyFile = {
      type: 'ed25519',
      public_key: this.publicKeyHex,
      secret_key: toHex(this.#secretKey),
    };
    const temporary = `${path}.${toHex(new Uint8Array(randomBytes(6)))}.tmp`;
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.chmod(0o600);
        await handle.writeFile(`${JSON.stringify(contents, null, 2)}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (options.overwrite === true) {
        await rename(temporary, path);
      } else {
        // link() fails with EEXIST instead of replacing: no race between a check and the write.
        await link(temporary, path);
        await unlink(temporary);
      }
    } catch (error) {
      await unlink(temporary).catch(() => {});
      const code = (error as { code?: unknown }).code;
      if (code === 'EEXIST') {
        throw new KeyFileError(
          'key_file_exists',
          path,
          `key file ${path} already exists: pass { overwrite: true } to replace it`,
          { cause: error },
        );
      }
      throw new KeyFileError('key_file_io', path, `could not write key file ${path}: ${String(code)}`, {
        cause: error,
      });
    }
  }

  /** A copy of the 32-byte public key. */
  get publicKey(): Uint8Array {
    return Uint8Array.from(this.#publicKey);
  }

  /** The four x-tm-* headers of a signed request (docs/protocol.md, signed requests). */
  signRequest(request: RequestToSign): SignedRequestHeaders {
    return signRequest({
      method: request.method,
      path: request.path,
      body: request.body,
      secretKey: this.#secretKey,
    });
  }

  /**
   * The `signature` of a v4.0 proof envelope: ed25519 over the proof's canonical bytes, as an array
   * of 64 byte integers.
   * @throws InvalidInputError when the proof is not this signer's (`miner_pubkey`).
   */
  signProof(proof: ProofWire): number[] {
    this.#assertOwn(proof.miner_pubkey, 'proof.miner_pubkey');
    const parsed = parseProof(proof);
    if (!parsed.ok) {
      const message = parsed.verdict.ok ? 'invalid proof' : parsed.verdict.message;
      throw new InvalidInputError([{ path: 'proof', message: `proof.${message}` }]);
    }
    return signProof(parsed.bytes, this.#secretKey);
  }

  /**
   * The `signature` of a v4.1 block submission whose 88-byte header is built already (a miner's
   * result): ed25519 over `submissionMessage(challengeId, header)`, as 64 byte integers. Nothing
   * is recomputed: the header is signed as it is.
   * @throws InvalidInputError when the header is not 88 bytes or not this signer's (its key).
   */
  signSubmission(challengeId: string, header: Uint8Array): number[] {
    let minerKey: Uint8Array;
    try {
      minerKey = decodeHeader(header).minerPublicKey;
    } catch (error) {
      throw new InvalidInputError(
        [{ path: 'header', message: (error as Error).message }],
        {},
        { cause: error },
      );
    }
    this.#assertOwn(formatPublicKey(minerKey), 'header.miner_pubkey');
    return signatureToWire(signSubmission(challengeId, header, this.#secretKey));
  }

  /** The signed body of POST /api/hexchain/submit for a solved v4.1 challenge. */
  buildHexSubmission(parts: HexSubmissionParts): HexSubmissionInput {
    return buildSubmission({
      challengeId: parts.challengeId,
      challengeHash: parts.challengeHash,
      coord: parts.coord,
      nonce: parts.nonce,
      keyPair: { publicKey: this.#publicKey, secretKey: this.#secretKey },
    });
  }

  /** `Signer(ed25519:<public key>)`. */
  toString(): string {
    return `Signer(ed25519:${this.publicKeyHex})`;
  }

  /** The public part only: `{"type":"ed25519","public_key":...}`. */
  toJSON(): { type: 'ed25519'; public_key: string } {
    return { type: 'ed25519', public_key: this.publicKeyHex };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  #assertOwn(pubkey: string, what: string): void {
    if (pubkey !== this.publicKeyHex) {
      throw new InvalidInputError([
        {
          path: what,
          message: `${what}: expected this signer's public key ${this.publicKeyHex}, got ${describe(pubkey)}`,
        },
      ]);
    }
  }
}

function parseKeyFile(text: string, path: string): KeyPair {
  const invalid = (problem: string): never => {
    throw new KeyFileError(
      'key_file_invalid',
      path,
      `key file ${path} is not an ed25519 key file: ${problem}`,
    );
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which holds the secret: it is not kept.
    return invalid(
      'expected JSON {"type":"ed25519","public_key":hex,"secret_key":hex}, got text that is not JSON',
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(`expected a JSON object, got ${Array.isArray(value) ? 'an array' : describe(value)}`);
  }
  const file = value as Record<string, unknown>;
  if (file.type !== 'ed25519') invalid(`"type": expected "ed25519", got ${describe(file.type)}`);
  const secret = file.secret_key;
  if (typeof secret !== 'string' || !HEX64.test(secret)) {
    invalid(`"secret_key": expected 64 lowercase hex digits, got ${shapeOf(secret)}`);
  }
  const keyPair = keyPairFromSecret(new Uint8Array(Buffer.from(secret as string, 'hex')));
  const publicKey = formatPublicKey(keyPair.publicKey);
  if (file.public_key !== publicKey) {
    invalid(
      `"public_key": expected ${publicKey}, the public key of its secret_key, got ${describe(file.public_key)}`,
    );
  }
  return keyPair;
}

/** The shape of a value that may be secret: its type and length, never its contents. */
function shapeOf(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  if (value === null) return 'null';
  return Array.isArray(value) ? `an array of ${value.length}` : typeof value;
}
