import { fromHex, toHex, utf8 } from '../../src/bytes.js';
import { sha256 } from '../../src/hash.js';
import { REQUEST_REPLAY_WINDOW_MS, ReplayCache } from '../../src/replay-cache.js';
import {
  REQUEST_SIGNATURE_TAG,
  type RequestHeaders,
  type SignedRequestHeaders,
  signedRequestMessage,
  signRequest,
  verifySignedRequest,
} from '../../src/signed-request.js';
import { testKey } from './_keys.js';

const TIMESTAMP = 1_700_000_000_000;

/**
 * Signed-request vectors: fixed test keys, timestamps and nonces, so the messages and (ed25519 being
 * deterministic) the signatures are fixed. `verification` lists headers and clocks with the
 * expected outcome; `replay_sequence` is one replay cache fed requests in order.
 */
export function generate() {
  const alice = testKey('alice');
  const alicePub = toHex(alice.publicKey);
  const stakeBody = `{"amount":"12.5","lock_period_days":30,"pubkey":"${alicePub}"}`;
  const cases = [
    {
      name: 'POST /stake with a JSON body',
      method: 'POST',
      path: '/stake',
      body: utf8(stakeBody),
      timestamp: TIMESTAMP,
      nonce: '000102030405060708090a0b0c0d0e0f',
    },
    {
      name: 'GET with a query string and no body',
      method: 'GET',
      path: `/stake/${alicePub}?include=closed&limit=10`,
      body: new Uint8Array(0),
      timestamp: TIMESTAMP + 1,
      nonce: 'f0e0d0c0b0a090807060504030201000',
    },
    {
      name: 'lowercase method, percent-encoded query and a non-ASCII body',
      method: 'post',
      path: '/marketplace/order?note=caf%C3%A9',
      body: utf8(
        `{"type":"buy","token":"USDC","amount":"2","price":"0.5","note":"café","pubkey":"${alicePub}"}`,
      ),
      timestamp: TIMESTAMP + 2,
      nonce: 'ffffffffffffffffffffffffffffffff',
    },
  ];
  const requests = cases.map((c) => {
    const nonce = fromHex(c.nonce, 16);
    const headers = signRequest({
      method: c.method,
      path: c.path,
      body: c.body,
      secretKey: alice.secretKey,
      timestamp: c.timestamp,
      nonce,
    });
    const message = signedRequestMessage({
      method: c.method,
      path: c.path,
      body: c.body,
      publicKey: alice.publicKey,
      timestamp: c.timestamp,
      nonce,
    });
    return {
      name: c.name,
      secret_key: toHex(alice.secretKey),
      public_key: alicePub,
      method: c.method,
      path: c.path,
      body_hex: toHex(c.body),
      body_sha256: toHex(sha256(c.body)),
      timestamp: c.timestamp,
      nonce: c.nonce,
      message_hex: toHex(message),
      signature: headers['x-tm-signature'],
      headers,
    };
  });

  const base = requests[0]!;
  const h = base.headers;
  const W = REQUEST_REPLAY_WINDOW_MS;
  const bob = toHex(testKey('bob').publicKey);
  const checks: Array<{
    name: string;
    now?: number;
    headers?: RequestHeaders;
    method?: string;
    path?: string;
    body?: Uint8Array;
  }> = [
    { name: 'accepted at the signing time' },
    { name: `accepted ${W} ms later (window edge)`, now: TIMESTAMP + W },
    { name: `accepted ${W} ms earlier (window edge)`, now: TIMESTAMP - W },
    { name: 'expired 1 ms after the window', now: TIMESTAMP + W + 1 },
    { name: 'from the future 1 ms beyond the window', now: TIMESTAMP - W - 1 },
    { name: 'header names in mixed case', headers: mixedCase(h) },
    { name: 'signature header missing', headers: without(h, 'x-tm-signature') },
    { name: 'no headers', headers: {} },
    { name: 'uppercase hex public key', headers: { ...h, 'x-tm-pubkey': h['x-tm-pubkey'].toUpperCase() } },
    { name: 'timestamp in seconds', headers: { ...h, 'x-tm-timestamp': String(TIMESTAMP / 1000) } },
    { name: 'nonce of 15 bytes', headers: { ...h, 'x-tm-nonce': h['x-tm-nonce'].slice(2) } },
    {
      name: 'two signature values',
      headers: { ...h, 'x-tm-signature': [h['x-tm-signature'], h['x-tm-signature']] },
    },
    { name: 'another public key', headers: { ...h, 'x-tm-pubkey': bob } },
    { name: 'timestamp changed by 1 ms', headers: { ...h, 'x-tm-timestamp': String(TIMESTAMP + 1) } },
    { name: 'nonce changed', headers: { ...h, 'x-tm-nonce': '000102030405060708090a0b0c0d0e10' } },
    { name: 'query string added to the path', path: '/stake?x=1' },
    { name: 'method changed', method: 'PUT' },
    { name: 'body changed', body: utf8(stakeBody.replace('12.5', '125')) },
    { name: 'method in lowercase (same signature)', method: 'post' },
  ];
  const verification = checks.map((c) => {
    const input = {
      method: c.method ?? base.method,
      path: c.path ?? base.path,
      body: c.body ?? fromHex(base.body_hex),
      headers: c.headers ?? h,
      now: c.now ?? TIMESTAMP,
    };
    const verdict = verifySignedRequest(input);
    return {
      name: c.name,
      method: input.method,
      path: input.path,
      body_hex: toHex(input.body),
      headers: input.headers,
      now: input.now,
      expected: verdict.ok ? { ok: true, public_key: verdict.publicKey } : { ok: false, code: verdict.code },
    };
  });

  const cache = new ReplayCache();
  const sequence = [
    { request: 0, now: TIMESTAMP },
    { request: 1, now: TIMESTAMP + 10 },
    { request: 0, now: TIMESTAMP + 1_000 },
    { request: 0, now: TIMESTAMP + W },
    { request: 0, now: TIMESTAMP + W + 1 },
  ].map((step) => {
    const r = requests[step.request]!;
    const verdict = verifySignedRequest({
      method: r.method,
      path: r.path,
      body: fromHex(r.body_hex),
      headers: r.headers,
      now: step.now,
      replayCache: cache,
    });
    return { ...step, expected: verdict.ok ? { ok: true } : { ok: false, code: verdict.code } };
  });

  return {
    description:
      'Signed requests. message = utf8(tag) || 0x00 || lpString(uppercase method) || lpString(path with query) || ' +
      'sha256(body) || u64le(timestamp ms) || nonce (16 bytes) || public key (32 bytes); lpString = u16le byte length || ' +
      'UTF-8 bytes. signature = ed25519(message). Accepted while |now - timestamp| <= window_ms; a (public key, nonce) ' +
      'pair is accepted once.',
    tag: REQUEST_SIGNATURE_TAG,
    window_ms: W,
    requests,
    verification,
    replay_sequence: { description: 'One replay cache; `request` indexes `requests`.', steps: sequence },
  };
}

function mixedCase(headers: SignedRequestHeaders): RequestHeaders {
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [
      k.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase()),
      v,
    ]),
  );
}

function without(headers: SignedRequestHeaders, name: string): RequestHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));
}
