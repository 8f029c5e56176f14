import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatPublicKey, type KeyPair, keyPairFromSecret, signRequest, toHex } from '@tensormine/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { signedInject, testKey, testValidator } from './helpers.js';
import { expectError } from './mining-fixtures.js';

/**
 * Issue 9, items 4 and 5: a signed request is accepted once, also across a restart, and
 * nobody can fill the replay store so that another key's signed request fails.
 */

const alice = testKey('alice');
const ALICE = toHex(alice.publicKey);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function registration(key: KeyPair, deviceType: string, timestamp: number) {
  const payload = JSON.stringify({ pubkey: formatPublicKey(key.publicKey), device_type: deviceType });
  const headers = {
    ...signRequest({
      method: 'POST',
      path: '/devices/register',
      body: payload,
      secretKey: key.secretKey,
      timestamp,
    }),
    'content-type': 'application/json',
  };
  return { method: 'POST' as const, url: '/devices/register', payload, headers };
}

describe('replay protection of signed requests', () => {
  it('refuses a registration replayed after a restart, so it cannot undo a later change', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tensormine-replay-'));
    dirs.push(dataDir);
    let clock = Date.now();
    const now = () => clock;
    const first = await testValidator({ dataDir, now });
    const old = registration(alice, 'esp8266', clock);
    expect((await first.inject(old)).statusCode).toBe(200);
    clock += 2_000;
    const change = registration(alice, 'native', clock);
    expect((await first.inject(change)).statusCode).toBe(200);
    await first.close();

    clock += 4_000; // 6 s after the first request: well inside its 60 s window
    const second = await testValidator({ dataDir, now });
    expectError(await second.inject(old), 409, 'request_replayed');
    expect((await second.inject(`/miners/${ALICE}`)).json().device_type).toBe('native');
    // A fresh request of the same key is accepted.
    expect((await second.inject(registration(alice, 'esp32', clock))).statusCode).toBe(200);
  });

  it('refuses a request replayed to another validator sharing the database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tensormine-replay-'));
    dirs.push(dataDir);
    const a = await testValidator({ dataDir });
    const b = await testValidator({ dataDir }); // a second connection to the same database file
    const request = registration(alice, 'esp32', Date.now());
    expect((await a.inject(request)).statusCode).toBe(200);
    expectError(await b.inject(request), 409, 'request_replayed');
  });

  it('records nothing for a request that fails a check, so the owner can still send it', async () => {
    const v = await testValidator();
    const bob = testKey('bob');
    // Signed by alice but naming bob: refused before anything is recorded.
    const mismatch = await signedInject(v, alice, 'POST', '/devices/register', {
      pubkey: toHex(bob.publicKey),
      device_type: 'native',
    });
    expectError(mismatch, 403, 'pubkey_mismatch');
    expect(await v.context.storage.read((tx) => tx.requestNonces.count())).toBe(0);
    // A forged signature over alice's nonce does not burn it either.
    const genuine = registration(alice, 'native', Date.now());
    const forged = { ...genuine, headers: { ...genuine.headers, 'x-tm-signature': '00'.repeat(64) } };
    expectError(await v.inject(forged), 401, 'signature_invalid');
    expect((await v.inject(genuine)).statusCode).toBe(200);
    expect(await v.context.storage.read((tx) => tx.requestNonces.count())).toBe(1);
  });

  it('a flood of throwaway keys cannot make another key’s signed request fail', async () => {
    const v = await testValidator();
    // The old in-memory cache refused every signed request once 100,000 pairs were live. The
    // store has no bound shared between keys (what limits a flood is the per-address and
    // per-key rate limits, which are per source): every throwaway key's request is accepted
    // and recorded, and alice's still is.
    const flood = 600;
    for (let i = 0; i < flood; i++) {
      const key = keyPairFromSecret(
        new Uint8Array(32).fill(0).map((_, j) => (j === 0 ? i & 0xff : j === 1 ? i >> 8 : 7)),
      );
      const res = await v.inject(registration(key, 'esp8266', Date.now()));
      expect(res.statusCode).toBe(200);
    }
    expect(await v.context.storage.read((tx) => tx.requestNonces.count())).toBe(flood);
    expect((await v.inject(registration(alice, 'native', Date.now()))).statusCode).toBe(200);
  });

  it('forgets pairs whose window has closed', async () => {
    let clock = Date.now();
    const v = await testValidator({ now: () => clock });
    for (let i = 0; i < 5; i++) {
      expect((await v.inject(registration(testKey(`k${i}`), 'native', clock))).statusCode).toBe(200);
    }
    clock += 2 * 60_000 + 1; // one window, plus one window of margin against clock steps
    expect((await v.inject(registration(alice, 'native', clock))).statusCode).toBe(200);
    expect(await v.context.storage.read((tx) => tx.requestNonces.count())).toBe(1);
  });
});

describe('admin authentication', () => {
  it('answers 401 before looking at the body', async () => {
    const v = await testValidator();
    for (const payload of [{ difficulty: 'not a number' }, { difficulty: 5 }, {}]) {
      const res = await v.inject({ method: 'POST', url: '/admin/config', payload });
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json()).toMatchObject({ code: 'unauthorized' });
      expect(res.json().details).toBeUndefined();
    }
    const wrong = await v.inject({
      method: 'POST',
      url: '/admin/config',
      headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(wrong.statusCode).toBe(401);
  });
});
