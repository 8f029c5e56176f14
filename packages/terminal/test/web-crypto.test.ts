import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromHex, keyPairFromSecret, sign, toHex, utf8, verify } from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import {
  builtinWallet,
  isSealedKey,
  keyFileText,
  keyFromSecret,
  parseSecret,
  seal,
  unseal,
  WrongPassphraseError,
} from '../web/builtin-wallet.js';
import { signedRequestMessage } from '../web/signed-request.js';

/**
 * The page's cryptography, run here on Node's WebCrypto (the browser's API): its signed-request
 * message against the protocol's shared vectors, and the built-in wallet's keys (sealing, the
 * key file of miner keys, signatures the protocol verifies).
 */

interface Vector {
  name: string;
  secret_key: string;
  public_key: string;
  method: string;
  path: string;
  body_hex: string;
  timestamp: number;
  nonce: string;
  message_hex: string;
  signature: string;
}

const vectors = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '..', '..', 'protocol', 'vectors', 'signed-requests.vectors.json'),
    'utf8',
  ),
) as { requests: Vector[] };

/** A low work factor for the tests' own seals (the page uses 600 000). */
const FAST = 1000;

describe("the page's signed-request message", () => {
  it.each(vectors.requests.map((v) => [v.name, v] as const))(
    'matches the shared vector: %s',
    async (_, v) => {
      const message = await signedRequestMessage({
        method: v.method,
        path: v.path,
        body: Buffer.from(v.body_hex, 'hex').toString('utf8'),
        publicKey: fromHex(v.public_key, 32, 'key'),
        timestamp: v.timestamp,
        nonce: fromHex(v.nonce, 16, 'nonce'),
      });
      expect(toHex(message)).toBe(v.message_hex);
      // The built-in wallet's signature of it is the vector's (ed25519 is deterministic).
      const wallet = await builtinWallet(fromHex(v.secret_key, 32, 'secret'));
      expect(toHex(await wallet.signMessage(message))).toBe(v.signature);
    },
  );
});

describe('the built-in wallet', () => {
  const secret = fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 32, 'secret');
  const publicHex = toHex(keyPairFromSecret(secret).publicKey);

  it('derives the public key the protocol derives, and signs what the protocol verifies', async () => {
    const { publicKey } = await keyFromSecret(secret);
    expect(toHex(publicKey)).toBe(publicHex);
    const wallet = await builtinWallet(secret);
    const message = utf8('prove this wallet');
    const signature = await wallet.signMessage(message);
    expect(verify(signature, message, publicKey)).toBe(true);
    expect(toHex(signature)).toBe(toHex(sign(message, secret)));
  });

  it('seals the secret under a passphrase: the right one opens it, a wrong one does not', async () => {
    const sealed = await seal(secret, 'correct horse battery', FAST);
    expect(isSealedKey(sealed)).toBe(true);
    expect(sealed.public_key).toBe(publicHex);
    expect(JSON.stringify(sealed)).not.toContain(toHex(secret));
    expect(toHex(await unseal(sealed, 'correct horse battery'))).toBe(toHex(secret));
    await expect(unseal(sealed, 'correct horse batterY')).rejects.toBeInstanceOf(WrongPassphraseError);
    // The public key is bound to the ciphertext: another key's address cannot be put on it.
    await expect(
      unseal({ ...sealed, public_key: 'ab'.repeat(32) }, 'correct horse battery'),
    ).rejects.toBeInstanceOf(WrongPassphraseError);
    await expect(seal(secret, 'short', FAST)).rejects.toThrow('at least 8 characters');
  });

  it('exports the key file of miner keys and imports it, or a bare secret, back', async () => {
    const text = await keyFileText(secret);
    expect(JSON.parse(text)).toEqual({ type: 'ed25519', public_key: publicHex, secret_key: toHex(secret) });
    expect(toHex(await parseSecret(text))).toBe(toHex(secret));
    expect(toHex(await parseSecret(`0x${toHex(secret).toUpperCase()}\n`))).toBe(toHex(secret));
    const wrongPublic = JSON.stringify({
      type: 'ed25519',
      public_key: 'ab'.repeat(32),
      secret_key: toHex(secret),
    });
    await expect(parseSecret(wrongPublic)).rejects.toThrow(
      'its public_key does not belong to its secret_key',
    );
    // Nothing of the input is repeated in an error.
    const bad = `${toHex(secret).slice(0, 60)}zz`;
    await expect(parseSecret(bad)).rejects.toThrow('secret key: expected 64 hex digits');
    await expect(parseSecret(bad)).rejects.not.toThrow(bad.slice(0, 20));
  });
});
