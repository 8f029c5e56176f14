import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import {
  buildSubmission,
  encodeHeader,
  fromHex,
  keyPairFromSecret,
  proofMessage,
  signatureFromWire,
  submissionMessage,
  verify,
  verifySignedRequest,
} from '@tensormine/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError, KeyFileError } from '../src/errors.js';
import { Signer } from '../src/signer.js';

const SECRET = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'; // RFC 8032 test 1

/** A solved v4.1 challenge, as `buildHexSubmission` takes it. */
const HEX_PARTS = {
  challengeId: 'h-1',
  challengeHash: new Uint8Array(32).fill(7),
  coord: { q: 1, r: -1, s: 0 },
  nonce: 42,
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tensormine-signer-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Signer', () => {
  it('derives the public key of a secret key (RFC 8032 test vector 1), from hex or bytes', () => {
    expect(Signer.fromSecretKey(SECRET).publicKeyHex).toBe(PUBLIC);
    expect(Signer.fromSecretKey(fromHex(SECRET)).publicKeyHex).toBe(PUBLIC);
    expect(Signer.fromSecretKey(SECRET.toUpperCase()).publicKeyHex).toBe(PUBLIC);
  });

  it('generates a fresh key each time', () => {
    expect(Signer.generate().publicKeyHex).not.toBe(Signer.generate().publicKeyHex);
  });

  it('never shows the secret: not in toString, inspect, JSON or String()', () => {
    const signer = Signer.fromSecretKey(SECRET);
    const shown = [
      signer.toString(),
      String(signer),
      `${signer}`,
      inspect(signer),
      inspect({ nested: { signer } }, { depth: 10, showHidden: true }),
      JSON.stringify(signer),
      JSON.stringify({ signer }),
    ];
    for (const text of shown) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(SECRET.slice(0, 16));
    }
    expect(signer.toString()).toBe(`Signer(ed25519:${PUBLIC})`);
    expect(JSON.parse(JSON.stringify(signer))).toEqual({ type: 'ed25519', public_key: PUBLIC });
    expect(Object.keys(signer)).toEqual(['publicKeyHex']);
  });

  it('refuses a malformed secret key without quoting it', () => {
    const almost = `${SECRET.slice(0, 62)}zz`;
    const error = (() => {
      try {
        Signer.fromSecretKey(almost);
      } catch (e) {
        return e as InvalidInputError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error!.shortMessage).toBe(
      'secretKey: expected 64 hex digits (32 bytes), got a string of 64 characters',
    );
    expect(error!.message).not.toContain(almost.slice(0, 16));
    expect(() => Signer.fromSecretKey(new Uint8Array(31))).toThrow(
      'secretKey: expected 32 bytes, got 31 bytes',
    );
  });

  it('signs requests that the validator’s verifier accepts', () => {
    const signer = Signer.fromSecretKey(SECRET);
    const body = '{"pubkey":"x"}';
    const headers = signer.signRequest({ method: 'POST', path: '/stake', body });
    expect(headers['x-tm-pubkey']).toBe(PUBLIC);
    expect(
      verifySignedRequest({ method: 'POST', path: '/stake', body, headers, now: Date.now() }),
    ).toMatchObject({
      ok: true,
      publicKey: PUBLIC,
    });
    expect(verifySignedRequest({ method: 'POST', path: '/unstake', body, headers, now: Date.now() }).ok).toBe(
      false,
    );
  });

  it('builds the same signed hexchain submission as the protocol package', () => {
    const signer = Signer.fromSecretKey(SECRET);
    const parts = HEX_PARTS;
    const submission = signer.buildHexSubmission(parts);
    expect(submission).toEqual(buildSubmission({ ...parts, keyPair: keyPairFromSecret(fromHex(SECRET)) }));
    const header = encodeHeader({
      coord: parts.coord,
      challengeHash: parts.challengeHash,
      minerPublicKey: fromHex(PUBLIC),
      nonce: 42,
    });
    expect(
      verify(signatureFromWire(submission.signature), submissionMessage('h-1', header), fromHex(PUBLIC)),
    ).toBe(true);
  });

  it('signs a header built already as it is: the signature buildHexSubmission makes, only for its own key', () => {
    const signer = Signer.fromSecretKey(SECRET);
    const parts = HEX_PARTS;
    const header = encodeHeader({ ...parts, minerPublicKey: fromHex(PUBLIC) });
    const signature = signer.signSubmission('h-1', header);
    expect(signature).toEqual(signer.buildHexSubmission(parts).signature);
    expect(verify(Uint8Array.from(signature), submissionMessage('h-1', header), fromHex(PUBLIC))).toBe(true);
    const theirs = encodeHeader({ ...parts, minerPublicKey: new Uint8Array(32).fill(0xab) });
    expect(() => signer.signSubmission('h-1', theirs)).toThrow(
      `header.miner_pubkey: expected this signer's public key ${PUBLIC}, got a string of 64 characters`,
    );
    const short = (() => {
      try {
        signer.signSubmission('h-1', header.subarray(0, 87));
      } catch (error) {
        return error;
      }
    })();
    expect(short).toBeInstanceOf(InvalidInputError);
    expect((short as InvalidInputError).problems).toEqual([
      { path: 'header', message: 'header: expected 88 bytes, got 87' },
    ]);
  });

  it('signs a v4.0 proof over its canonical bytes, and only its own', () => {
    const signer = Signer.fromSecretKey(SECRET);
    const proof = {
      challenge_id: 'c-1',
      challenge_hash: '11'.repeat(32),
      tensor_result_hash: '22'.repeat(32),
      mml_score: 0.5,
      path_signature: '33'.repeat(8),
      path_distance: 3,
      computation_nonce: 9,
      computation_hash: '44'.repeat(32),
      miner_pubkey: PUBLIC,
    };
    const signature = signer.signProof(proof);
    expect(signature).toHaveLength(64);
    const message = proofMessage({
      challengeId: 'c-1',
      challengeHash: fromHex(proof.challenge_hash),
      tensorResultHash: fromHex(proof.tensor_result_hash),
      mmlScoreQ16: 32768,
      pathSignature: fromHex(proof.path_signature),
      pathDistance: 3,
      nonce: 9,
      computationHash: fromHex(proof.computation_hash),
      minerPublicKey: fromHex(PUBLIC),
    });
    expect(verify(Uint8Array.from(signature), message, fromHex(PUBLIC))).toBe(true);
    expect(() => signer.signProof({ ...proof, miner_pubkey: 'ab'.repeat(32) })).toThrow(
      `proof.miner_pubkey: expected this signer's public key ${PUBLIC}, got a string of 64 characters`,
    );
  });
});

describe('key files', () => {
  it('saves a key file with mode 0600 and loads the same key back', async () => {
    const path = join(dir, 'keys', 'miner.key');
    const signer = Signer.fromSecretKey(SECRET);
    await signer.save(path);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'keys'))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
      type: 'ed25519',
      public_key: PUBLIC,
      secret_key: SECRET,
    });
    expect((await Signer.load(path)).publicKeyHex).toBe(PUBLIC);
  });

  it('never overwrites an existing file unless asked', async () => {
    const path = join(dir, 'miner.key');
    await Signer.generate().save(path);
    const error = await Signer.fromSecretKey(SECRET)
      .save(path)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyFileError);
    expect(error).toMatchObject({ code: 'key_file_exists', path });
    expect((error as KeyFileError).shortMessage).toBe(
      `key file ${path} already exists: pass { overwrite: true } to replace it`,
    );
    await Signer.fromSecretKey(SECRET).save(path, { overwrite: true });
    expect((await Signer.load(path)).publicKeyHex).toBe(PUBLIC);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it.skipIf(process.platform === 'win32')(
    'refuses a key file that group or others can read, unless allowed',
    async () => {
      const path = join(dir, 'miner.key');
      await Signer.fromSecretKey(SECRET).save(path);
      await chmod(path, 0o644);
      const error = (await Signer.load(path).catch((e: unknown) => e)) as KeyFileError;
      expect(error).toBeInstanceOf(KeyFileError);
      expect(error.code).toBe('key_file_permissions');
      expect(error.shortMessage).toBe(
        `key file ${path} is accessible by group or others (mode 0644): run "chmod 600 ${path}", or load it with { allowInsecurePermissions: true }`,
      );
      expect((await Signer.load(path, { allowInsecurePermissions: true })).publicKeyHex).toBe(PUBLIC);
    },
  );

  it('says clearly when the file is missing', async () => {
    const path = join(dir, 'nope.key');
    await expect(Signer.load(path)).rejects.toMatchObject({
      name: 'KeyFileError',
      code: 'key_file_not_found',
      shortMessage: `key file ${path} does not exist: create one with Signer.generate().save(path)`,
    });
  });

  it.each([
    [
      'not JSON',
      `secret ${SECRET}`,
      'expected JSON {"type":"ed25519","public_key":hex,"secret_key":hex}, got text that is not JSON',
    ],
    ['an array', '[1, 2]', 'expected a JSON object, got an array'],
    [
      'another key type',
      JSON.stringify({ type: 'rsa', public_key: PUBLIC, secret_key: SECRET }),
      '"type": expected "ed25519", got "rsa"',
    ],
    [
      'a short secret',
      JSON.stringify({ type: 'ed25519', public_key: PUBLIC, secret_key: SECRET.slice(0, 60) }),
      '"secret_key": expected 64 lowercase hex digits, got a string of 60 characters',
    ],
    [
      'a public key of another secret',
      JSON.stringify({ type: 'ed25519', public_key: 'ab'.repeat(32), secret_key: SECRET }),
      `"public_key": expected ${PUBLIC}, the public key of its secret_key, got a string of 64 characters`,
    ],
  ])('refuses a key file that is %s, without quoting the secret', async (_what, contents, problem) => {
    const path = join(dir, 'bad.key');
    await writeFile(path, contents, { mode: 0o600 });
    const error = (await Signer.load(path).catch((e: unknown) => e)) as KeyFileError;
    expect(error).toBeInstanceOf(KeyFileError);
    expect(error.code).toBe('key_file_invalid');
    expect(error.shortMessage).toBe(`key file ${path} is not an ed25519 key file: ${problem}`);
    expect(error.message).not.toContain(SECRET.slice(0, 16));
    expect(error.cause).toBeUndefined();
  });
});
