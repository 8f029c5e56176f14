import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { concatBytes, fromHex, toHex, utf8 } from '../src/bytes.js';
import { keyPairFromSecret } from '../src/ed25519.js';
import { ProtocolError } from '../src/errors.js';
import { sha256 } from '../src/hash.js';
import { REQUEST_REPLAY_WINDOW_MS, ReplayCache } from '../src/replay-cache.js';
import {
  assertBodyPubkey,
  type RequestHeaders,
  type SignedRequestHeaders,
  signedRequestMessage,
  signRequest,
  verifySignedRequest,
} from '../src/signed-request.js';

const alice = keyPairFromSecret(sha256(utf8('signed-request test key alice')));
const bob = keyPairFromSecret(sha256(utf8('signed-request test key bob')));
const ALICE = toHex(alice.publicKey);
const BOB = toHex(bob.publicKey);
const T = 1_700_000_000_000;
const NONCE = fromHex('00112233445566778899aabbccddeeff');
const BODY = `{"amount":"12.5","lock_period_days":30,"pubkey":"${ALICE}"}`;

function signed(overrides: { body?: string; path?: string; method?: string; nonce?: Uint8Array } = {}) {
  return signRequest({
    method: overrides.method ?? 'POST',
    path: overrides.path ?? '/stake',
    body: overrides.body ?? BODY,
    secretKey: alice.secretKey,
    timestamp: T,
    nonce: overrides.nonce ?? NONCE,
  });
}

function verifyStake(headers: RequestHeaders, extra: { now?: number; replayCache?: ReplayCache } = {}) {
  return verifySignedRequest({
    method: 'POST',
    path: '/stake',
    body: BODY,
    headers,
    now: extra.now ?? T,
    ...extra,
  });
}

function thrown(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof ProtocolError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a ProtocolError, but none was thrown');
}

afterEach(() => {
  vi.useRealTimers();
});

describe('signedRequestMessage', () => {
  it('lays out tag, method, path, body hash, timestamp, nonce and public key', () => {
    const body = utf8('{"a":1}');
    const expected = concatBytes(
      utf8('PTM/request/v1'),
      Uint8Array.of(0x00),
      Uint8Array.of(4, 0),
      utf8('POST'),
      Uint8Array.of(10, 0),
      utf8('/stake?x=1'),
      sha256(body),
      fromHex('0068e5cf8b010000'), // 1_700_000_000_000 = 0x18bcfe56800, little-endian in 8 bytes
      NONCE,
      alice.publicKey,
    );
    const message = signedRequestMessage({
      method: 'post',
      path: '/stake?x=1',
      body,
      publicKey: alice.publicKey,
      timestamp: T,
      nonce: NONCE,
    });
    expect(toHex(message)).toBe(toHex(expected));
    expect(message.length).toBe(15 + 6 + 12 + 32 + 8 + 16 + 32);
  });

  it('hashes the empty string when there is no body', () => {
    const base = { method: 'GET', path: '/stake', publicKey: alice.publicKey, timestamp: T, nonce: NONCE };
    const withoutBody = signedRequestMessage(base);
    expect(toHex(withoutBody)).toBe(toHex(signedRequestMessage({ ...base, body: new Uint8Array(0) })));
    expect(toHex(withoutBody)).toBe(toHex(signedRequestMessage({ ...base, body: '' })));
    expect(toHex(withoutBody)).toContain('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('signs a string body as its UTF-8 bytes', () => {
    const base = { method: 'POST', path: '/x', publicKey: alice.publicKey, timestamp: T, nonce: NONCE };
    expect(toHex(signedRequestMessage({ ...base, body: 'café' }))).toBe(
      toHex(signedRequestMessage({ ...base, body: Uint8Array.of(0x63, 0x61, 0x66, 0xc3, 0xa9) })),
    );
  });

  it('rejects inputs it cannot encode, saying what was expected', () => {
    const base = { method: 'POST', path: '/stake', publicKey: alice.publicKey, timestamp: T, nonce: NONCE };
    const cases: Array<[Partial<Parameters<typeof signedRequestMessage>[0]>, string]> = [
      [{ method: 'PO ST' }, 'method: expected an HTTP method of ASCII letters such as "POST", got "PO ST"'],
      [{ method: '' }, 'method: expected an HTTP method of ASCII letters such as "POST", got ""'],
      [
        { path: 'stake' },
        'path: expected the request target as sent, starting with "/" (e.g. "/stake?x=1"), got "stake"',
      ],
      [{ path: `/${'a'.repeat(65_535)}` }, 'path: expected at most 65535 UTF-8 bytes, got 65536'],
      [
        { timestamp: -1 },
        'timestamp: expected Unix time in milliseconds as a non-negative safe integer, got -1',
      ],
      [
        { timestamp: 1.5 },
        'timestamp: expected Unix time in milliseconds as a non-negative safe integer, got 1.5',
      ],
      [{ nonce: new Uint8Array(15) }, 'nonce: expected 16 bytes, got 15'],
      [{ publicKey: new Uint8Array(31) }, 'public key: expected 32 bytes, got 31'],
    ];
    for (const [override, message] of cases) {
      expect(thrown(() => signedRequestMessage({ ...base, ...override }))).toEqual({
        code: 'validation_failed',
        message,
      });
    }
  });
});

describe('signRequest', () => {
  it('returns the four headers, verifiable by the public key derived from the secret', () => {
    const headers = signed();
    expect(Object.keys(headers)).toEqual(['x-tm-pubkey', 'x-tm-timestamp', 'x-tm-nonce', 'x-tm-signature']);
    expect(headers['x-tm-pubkey']).toBe(ALICE);
    expect(headers['x-tm-timestamp']).toBe('1700000000000');
    expect(headers['x-tm-nonce']).toBe('00112233445566778899aabbccddeeff');
    expect(headers['x-tm-signature']).toMatch(/^[0-9a-f]{128}$/);
    expect(verifyStake(headers)).toMatchObject({ ok: true, publicKey: ALICE });
  });

  it('defaults to the current time and a fresh random nonce', () => {
    vi.useFakeTimers({ now: T + 1234 });
    const a = signRequest({ method: 'POST', path: '/claim', body: '{}', secretKey: alice.secretKey });
    const b = signRequest({ method: 'POST', path: '/claim', body: '{}', secretKey: alice.secretKey });
    expect(a['x-tm-timestamp']).toBe(String(T + 1234));
    expect(a['x-tm-nonce']).toMatch(/^[0-9a-f]{32}$/);
    expect(a['x-tm-nonce']).not.toBe(b['x-tm-nonce']);
    const verdict = verifySignedRequest({ method: 'POST', path: '/claim', body: '{}', headers: a, now: T });
    expect(verdict).toMatchObject({ ok: true, publicKey: ALICE });
  });

  it('signs the same message for a lowercase method', () => {
    expect(signed({ method: 'post' })).toEqual(signed({ method: 'POST' }));
  });
});

describe('verifySignedRequest', () => {
  it('reads header names in any case', () => {
    const h = signed();
    const headers = {
      'X-TM-PUBKEY': h['x-tm-pubkey'],
      'X-Tm-Timestamp': h['x-tm-timestamp'],
      'x-tm-NONCE': h['x-tm-nonce'],
      'x-tm-signature': h['x-tm-signature'],
    };
    expect(verifyStake(headers)).toMatchObject({ ok: true, publicKey: ALICE });
  });

  it('accepts a body given as bytes or as the same text', () => {
    const headers = signed();
    const verdict = verifySignedRequest({
      method: 'POST',
      path: '/stake',
      body: utf8(BODY),
      headers,
      now: T,
    });
    expect(verdict).toMatchObject({ ok: true, publicKey: ALICE });
  });

  it('requires all four headers, naming the missing ones', () => {
    expect(verifyStake({})).toEqual({
      ok: false,
      code: 'signature_required',
      message:
        'missing signed-request headers x-tm-pubkey, x-tm-timestamp, x-tm-nonce, x-tm-signature: ' +
        'operations that act for a public key must be signed by it',
      details: { missing: ['x-tm-pubkey', 'x-tm-timestamp', 'x-tm-nonce', 'x-tm-signature'] },
    });
    const { 'x-tm-nonce': _nonce, ...withoutNonce } = signed();
    expect(verifyStake({ ...withoutNonce, 'x-tm-signature': undefined })).toEqual({
      ok: false,
      code: 'signature_required',
      message:
        'missing signed-request headers x-tm-nonce, x-tm-signature: ' +
        'operations that act for a public key must be signed by it',
      details: { missing: ['x-tm-nonce', 'x-tm-signature'] },
    });
    expect(verifyStake({ ...withoutNonce, 'x-tm-nonce': [] })).toEqual({
      ok: false,
      code: 'signature_required',
      message:
        'missing signed-request header x-tm-nonce: operations that act for a public key must be signed by it',
      details: { missing: ['x-tm-nonce'] },
    });
  });

  it('rejects malformed header values, saying which and what was expected', () => {
    const h = signed();
    const cases: Array<[Partial<Record<keyof SignedRequestHeaders, string>>, string]> = [
      [
        { 'x-tm-pubkey': ALICE.toUpperCase() },
        'x-tm-pubkey: expected 64 lowercase hex digits (a 32-byte ed25519 public key), got a string of 64 characters',
      ],
      [
        { 'x-tm-pubkey': ALICE.slice(2) },
        'x-tm-pubkey: expected 64 lowercase hex digits (a 32-byte ed25519 public key), got a string of 62 characters',
      ],
      [
        { 'x-tm-timestamp': '1.7e12' },
        'x-tm-timestamp: expected Unix time in milliseconds as a decimal integer, got "1.7e12"',
      ],
      [
        { 'x-tm-timestamp': '01700000000000' },
        'x-tm-timestamp: expected Unix time in milliseconds as a decimal integer, got "01700000000000"',
      ],
      [
        { 'x-tm-timestamp': '9007199254740992' },
        'x-tm-timestamp: expected Unix time in milliseconds as a decimal integer, got "9007199254740992"',
      ],
      [
        { 'x-tm-timestamp': '' },
        'x-tm-timestamp: expected Unix time in milliseconds as a decimal integer, got ""',
      ],
      [{ 'x-tm-nonce': 'abc' }, 'x-tm-nonce: expected 32 lowercase hex digits (16 random bytes), got "abc"'],
      [
        { 'x-tm-signature': 'zz' },
        'x-tm-signature: expected 128 lowercase hex digits (a 64-byte ed25519 signature), got "zz"',
      ],
      [
        { 'x-tm-nonce': 'abc', 'x-tm-timestamp': 'now' },
        'x-tm-timestamp: expected Unix time in milliseconds as a decimal integer, got "now"; ' +
          'x-tm-nonce: expected 32 lowercase hex digits (16 random bytes), got "abc"',
      ],
    ];
    for (const [override, message] of cases) {
      expect(verifyStake({ ...h, ...override })).toEqual({ ok: false, code: 'validation_failed', message });
    }
  });

  it('rejects a header given twice', () => {
    const h = signed();
    expect(verifyStake({ ...h, 'x-tm-signature': [h['x-tm-signature'], h['x-tm-signature']] })).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'x-tm-signature: expected exactly one value, got 2',
    });
    expect(verifyStake({ ...h, 'X-TM-Nonce': h['x-tm-nonce'] })).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'x-tm-nonce: expected exactly one value, got 2',
    });
  });

  it('accepts timestamps up to 60 000 ms from the clock, either way', () => {
    const h = signed();
    expect(verifyStake(h, { now: T + REQUEST_REPLAY_WINDOW_MS }).ok).toBe(true);
    expect(verifyStake(h, { now: T - REQUEST_REPLAY_WINDOW_MS }).ok).toBe(true);
  });

  it('rejects an old request, giving the skew', () => {
    expect(verifyStake(signed(), { now: T + 60_001 })).toEqual({
      ok: false,
      code: 'request_expired',
      message:
        'x-tm-timestamp 1700000000000 is 60001 ms behind the validator clock (1700000060001); ' +
        'at most 60000 ms of skew is accepted',
      details: { timestamp: T, now: T + 60_001, skew_ms: -60_001, window_ms: 60_000 },
    });
  });

  it('rejects a request from the future, giving the skew', () => {
    expect(verifyStake(signed(), { now: T - 90_000 })).toEqual({
      ok: false,
      code: 'request_expired',
      message:
        'x-tm-timestamp 1700000000000 is 90000 ms ahead of the validator clock (1699999910000); ' +
        'at most 60000 ms of skew is accepted',
      details: { timestamp: T, now: T - 90_000, skew_ms: 90_000, window_ms: 60_000 },
    });
  });

  it('points out a timestamp sent in seconds', () => {
    const verdict = verifyStake({ ...signed(), 'x-tm-timestamp': '1700000000' });
    expect(verdict).toMatchObject({
      ok: false,
      code: 'request_expired',
      message:
        'x-tm-timestamp 1700000000 is 1698300000000 ms behind the validator clock (1700000000000) ' +
        '(it looks like seconds; it must be milliseconds); at most 60000 ms of skew is accepted',
    });
  });

  it('rejects a signature by another key, with what it was checked over', () => {
    const forged = { ...signed(), 'x-tm-pubkey': BOB };
    expect(verifyStake(forged)).toEqual({
      ok: false,
      code: 'signature_invalid',
      message: `x-tm-signature does not verify for public key ${BOB} over this method, path, body, timestamp and nonce`,
      details: {
        public_key: BOB,
        method: 'POST',
        path: '/stake',
        body_sha256: toHex(sha256(utf8(BODY))),
        timestamp: T,
        nonce: '00112233445566778899aabbccddeeff',
      },
    });
  });

  it('rejects a method or path it cannot encode as validation_failed instead of throwing', () => {
    const verdict = verifySignedRequest({
      method: 'POST',
      path: 'stake',
      body: BODY,
      headers: signed(),
      now: T,
    });
    expect(verdict).toEqual({
      ok: false,
      code: 'validation_failed',
      message:
        'path: expected the request target as sent, starting with "/" (e.g. "/stake?x=1"), got "stake"',
    });
  });

  it('is invalidated by any change to method, path, query, body, timestamp, nonce or public key', () => {
    const tamper = fc.oneof(
      fc.record({
        field: fc.constant('method' as const),
        method: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'POSTX'),
      }),
      fc.record({ field: fc.constant('path' as const), path: fc.stringMatching(/^\/[a-z/]{0,12}$/) }),
      fc.record({ field: fc.constant('query' as const), query: fc.stringMatching(/^\?[a-z=&0-9]{0,12}$/) }),
      fc.record({ field: fc.constant('body' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ field: fc.constant('extra-byte' as const), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({
        field: fc.constant('timestamp' as const),
        delta: fc.integer({ min: -60_000, max: 60_000 }),
      }),
      fc.record({
        field: fc.constant('nonce' as const),
        at: fc.integer({ min: 0, max: 15 }),
        bit: fc.integer({ min: 0, max: 7 }),
      }),
      fc.record({
        field: fc.constant('pubkey' as const),
        seed: fc.uint8Array({ minLength: 32, maxLength: 32 }),
      }),
    );
    const headers = signed();
    const body = utf8(BODY);
    fc.assert(
      fc.property(tamper, (t) => {
        let method = 'POST';
        let path = '/stake';
        let sent = body;
        let h: Record<string, string> = { ...headers };
        switch (t.field) {
          case 'method':
            method = t.method;
            break;
          case 'path':
            fc.pre(t.path !== '/stake');
            path = t.path;
            break;
          case 'query':
            path = `/stake${t.query}`;
            break;
          case 'body': {
            sent = Uint8Array.from(body);
            const at = t.at % sent.length;
            sent[at] = sent[at]! ^ (1 << t.bit);
            break;
          }
          case 'extra-byte':
            sent = concatBytes(body, Uint8Array.of(t.byte));
            break;
          case 'timestamp':
            fc.pre(t.delta !== 0);
            h = { ...h, 'x-tm-timestamp': String(T + t.delta) };
            break;
          case 'nonce': {
            const nonce = Uint8Array.from(NONCE);
            nonce[t.at] = nonce[t.at]! ^ (1 << t.bit);
            h = { ...h, 'x-tm-nonce': toHex(nonce) };
            break;
          }
          case 'pubkey': {
            const other = toHex(keyPairFromSecret(t.seed).publicKey);
            fc.pre(other !== ALICE);
            h = { ...h, 'x-tm-pubkey': other };
            break;
          }
        }
        const verdict = verifySignedRequest({ method, path, body: sent, headers: h, now: T });
        expect(verdict.ok).toBe(false);
        expect(!verdict.ok && verdict.code).toBe('signature_invalid');
      }),
    );
  });

  it('accepts a nonce once and rejects the replay', () => {
    const cache = new ReplayCache();
    const h = signed();
    expect(verifyStake(h, { replayCache: cache })).toMatchObject({ ok: true, publicKey: ALICE });
    expect(verifyStake(h, { replayCache: cache, now: T + 30_000 })).toEqual({
      ok: false,
      code: 'request_replayed',
      message:
        'x-tm-nonce 00112233445566778899aabbccddeeff was already accepted for this public key inside the replay ' +
        'window; sign each request with a fresh random nonce',
      details: { public_key: ALICE, nonce: '00112233445566778899aabbccddeeff' },
    });
  });

  it('rejects a second request that reuses a nonce, even with another body', () => {
    const cache = new ReplayCache();
    expect(verifyStake(signed(), { replayCache: cache }).ok).toBe(true);
    const other = signRequest({
      method: 'POST',
      path: '/claim',
      body: '{}',
      secretKey: alice.secretKey,
      timestamp: T,
      nonce: NONCE,
    });
    const verdict = verifySignedRequest({
      method: 'POST',
      path: '/claim',
      body: '{}',
      headers: other,
      now: T,
      replayCache: cache,
    });
    expect(verdict).toMatchObject({ ok: false, code: 'request_replayed' });
  });

  it('does not let a forged request burn the signer nonce', () => {
    const cache = new ReplayCache();
    const genuine = signed();
    const forged = { ...genuine, 'x-tm-signature': '00'.repeat(64) };
    expect(verifyStake(forged, { replayCache: cache })).toMatchObject({
      ok: false,
      code: 'signature_invalid',
    });
    expect(cache.size).toBe(0);
    expect(verifyStake(genuine, { replayCache: cache })).toMatchObject({ ok: true, publicKey: ALICE });
  });

  it('does not record the nonce of an expired request', () => {
    const cache = new ReplayCache();
    expect(verifyStake(signed(), { replayCache: cache, now: T + 60_001 })).toMatchObject({
      code: 'request_expired',
    });
    expect(cache.size).toBe(0);
  });
});

describe('assertBodyPubkey', () => {
  it('accepts the key that signed the request', () => {
    expect(assertBodyPubkey(ALICE, ALICE)).toEqual({ ok: true });
  });

  it('rejects a body that names another key', () => {
    expect(assertBodyPubkey(ALICE, BOB)).toEqual({
      ok: false,
      code: 'pubkey_mismatch',
      message: `pubkey: the body names ${BOB} but the request was signed by ${ALICE}`,
      details: { body_pubkey: BOB, signer_pubkey: ALICE },
    });
    expect(assertBodyPubkey(ALICE, BOB, 'miner_pubkey')).toMatchObject({
      code: 'pubkey_mismatch',
      message: `miner_pubkey: the body names ${BOB} but the request was signed by ${ALICE}`,
    });
  });

  it('rejects a body key that is not 64 lowercase hex digits', () => {
    expect(assertBodyPubkey(ALICE, ALICE.toUpperCase())).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'pubkey: expected 64 lowercase hex digits, got a string of 64 characters',
    });
    expect(assertBodyPubkey(ALICE, undefined)).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'pubkey: expected 64 lowercase hex digits, got undefined',
    });
  });
});
