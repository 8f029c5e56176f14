import * as noble from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../src/bytes.js';
import { keyPairFromSecret } from '../src/ed25519.js';
import { sha256 } from '../src/hash.js';
import { REQUEST_REPLAY_WINDOW_MS, ReplayCache } from '../src/replay-cache.js';
import {
  REQUEST_SIGNATURE_TAG,
  signedRequestMessage,
  signRequest,
  verifySignedRequest,
} from '../src/signed-request.js';
import vectors from '../vectors/signed-requests.vectors.json' with { type: 'json' };

/** The message layout written out with Buffer operations, independently of signedRequestMessage. */
function layout(v: (typeof vectors.requests)[number]): string {
  const lp = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16LE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const timestamp = Buffer.alloc(8);
  timestamp.writeBigUInt64LE(BigInt(v.timestamp));
  return Buffer.concat([
    Buffer.from('PTM/request/v1\u0000', 'ascii'),
    lp(v.method.toUpperCase()),
    lp(v.path),
    sha256(Buffer.from(v.body_hex, 'hex')),
    timestamp,
    Buffer.from(v.nonce, 'hex'),
    Buffer.from(v.public_key, 'hex'),
  ]).toString('hex');
}

describe('signed-request vectors', () => {
  it('states the tag and the window', () => {
    expect(vectors.tag).toBe(REQUEST_SIGNATURE_TAG);
    expect(vectors.window_ms).toBe(REQUEST_REPLAY_WINDOW_MS);
  });

  it('reproduces every message, signature and header set', () => {
    expect(vectors.requests.length).toBe(3);
    for (const v of vectors.requests) {
      const key = keyPairFromSecret(fromHex(v.secret_key, 32));
      expect(toHex(key.publicKey)).toBe(v.public_key);
      const body = fromHex(v.body_hex);
      expect(toHex(sha256(body))).toBe(v.body_sha256);
      const common = {
        method: v.method,
        path: v.path,
        body,
        timestamp: v.timestamp,
        nonce: fromHex(v.nonce, 16),
      };
      expect(toHex(signedRequestMessage({ ...common, publicKey: key.publicKey }))).toBe(v.message_hex);
      expect(layout(v)).toBe(v.message_hex);
      const headers = signRequest({ ...common, secretKey: key.secretKey });
      expect(headers).toEqual(v.headers);
      expect(headers['x-tm-signature']).toBe(v.signature);
    }
  });

  it('derives each public key again from its cache, as copies the caller may change', async () => {
    for (const v of vectors.requests) {
      const secret = fromHex(v.secret_key, 32);
      const first = keyPairFromSecret(secret);
      first.publicKey.fill(0);
      first.secretKey.fill(0);
      const again = keyPairFromSecret(secret);
      expect(toHex(again.publicKey)).toBe(v.public_key);
      expect(toHex(again.secretKey)).toBe(v.secret_key);
      expect(toHex(await noble.getPublicKeyAsync(secret))).toBe(v.public_key);
    }
  });

  it('has signatures that an independent ed25519 implementation accepts', async () => {
    for (const v of vectors.requests) {
      const ok = await noble.verifyAsync(
        fromHex(v.signature, 64),
        fromHex(v.message_hex),
        fromHex(v.public_key, 32),
      );
      expect(ok).toBe(true);
    }
  });

  it('reaches the expected verdict for every verification case', () => {
    expect(vectors.verification.length).toBeGreaterThan(15);
    for (const v of vectors.verification) {
      const verdict = verifySignedRequest({
        method: v.method,
        path: v.path,
        body: fromHex(v.body_hex),
        headers: v.headers,
        now: v.now,
      });
      const outcome = verdict.ok
        ? { ok: true, public_key: verdict.publicKey }
        : { ok: false, code: verdict.code };
      expect({ name: v.name, ...outcome }).toEqual({ name: v.name, ...v.expected });
    }
  });

  it('reproduces the replay sequence with one cache', () => {
    const cache = new ReplayCache();
    for (const step of vectors.replay_sequence.steps) {
      const r = vectors.requests[step.request]!;
      const verdict = verifySignedRequest({
        method: r.method,
        path: r.path,
        body: fromHex(r.body_hex),
        headers: r.headers,
        now: step.now,
        replayCache: cache,
      });
      expect(verdict.ok ? { ok: true } : { ok: false, code: verdict.code }).toEqual(step.expected);
    }
  });
});
