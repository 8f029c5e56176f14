import { sha256, signRequest, toHex } from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import { post, register, signedInject, testKey, testValidator } from './helpers.js';
import { expectError, issue } from './mining-fixtures.js';

const alice = testKey('alice');
const bob = testKey('bob');
const ALICE = toHex(alice.publicKey);
const BOB = toHex(bob.publicKey);

describe('POST /devices/register', () => {
  it('registers a key with a stable device id and keeps registered_at on re-registration', async () => {
    let clock = Date.now();
    const v = await testValidator({ now: () => clock });
    const first = await signedInject(
      v,
      alice,
      'POST',
      '/devices/register',
      { pubkey: ALICE, device_type: 'esp32', port: 8080 },
      { timestamp: clock },
    );
    expect(first.statusCode, first.body).toBe(200);
    const registeredAt = Math.floor(clock / 1000);
    const deviceId = `dev-${toHex(sha256(alice.publicKey)).slice(0, 16)}`;
    expect(first.json()).toEqual({
      registered: true,
      pubkey: ALICE,
      device_type: 'esp32',
      port: 8080,
      registered_at: registeredAt,
      device_id: deviceId,
      callbacks: 'on', // inject() comes from 127.0.0.1: a local address
    });

    clock += 50_000;
    const again = await signedInject(
      v,
      alice,
      'POST',
      '/devices/register',
      { pubkey: ALICE, device_type: 'esp8266' },
      { timestamp: clock },
    );
    expect(again.json()).toEqual({
      registered: true,
      pubkey: ALICE,
      device_type: 'esp8266',
      port: null,
      registered_at: registeredAt,
      device_id: deviceId,
      callbacks: 'none',
    });
    const miner = (await v.inject(`/miners/${ALICE}`)).json();
    expect(miner).toMatchObject({ registered: true, device_type: 'esp8266', registered_at: registeredAt });
  });

  it('signature_required without the signed-request headers', async () => {
    const v = await testValidator();
    expectError(
      await post(v, '/devices/register', { pubkey: ALICE, device_type: 'native' }),
      401,
      'signature_required',
      'missing signed-request headers x-tm-pubkey, x-tm-timestamp, x-tm-nonce, x-tm-signature: operations that act for a public key must be signed by it',
    );
  });

  it('signature_invalid when the signed body is not the body sent', async () => {
    const v = await testValidator();
    const headers = signRequest({
      method: 'POST',
      path: '/devices/register',
      body: JSON.stringify({ pubkey: ALICE, device_type: 'native' }),
      secretKey: alice.secretKey,
    });
    const res = await v.inject({
      method: 'POST',
      url: '/devices/register',
      payload: JSON.stringify({ pubkey: ALICE, device_type: 'esp32' }),
      headers: { ...headers, 'content-type': 'application/json' },
    });
    expectError(
      res,
      401,
      'signature_invalid',
      `x-tm-signature does not verify for public key ${ALICE} over this method, path, body, timestamp and nonce`,
    );
    expect((await v.inject(`/miners/${ALICE}`)).json().registered).toBe(false);
  });

  it("pubkey_mismatch when a key registers someone else's key", async () => {
    const v = await testValidator();
    expectError(
      await signedInject(v, alice, 'POST', '/devices/register', { pubkey: BOB, device_type: 'native' }),
      403,
      'pubkey_mismatch',
      `pubkey: the body names ${BOB} but the request was signed by ${ALICE}`,
    );
    expect((await v.inject(`/miners/${BOB}`)).json().registered).toBe(false);
  });

  it('request_replayed when the same signed request is sent twice', async () => {
    const v = await testValidator();
    const payload = JSON.stringify({ pubkey: ALICE, device_type: 'native' });
    const headers = {
      ...signRequest({
        method: 'POST',
        path: '/devices/register',
        body: payload,
        secretKey: alice.secretKey,
      }),
      'content-type': 'application/json',
    };
    expect((await v.inject({ method: 'POST', url: '/devices/register', payload, headers })).statusCode).toBe(
      200,
    );
    const res = await v.inject({ method: 'POST', url: '/devices/register', payload, headers });
    expectError(
      res,
      409,
      'request_replayed',
      `x-tm-nonce ${headers['x-tm-nonce']} was already accepted for this public key inside the replay window; sign each request with a fresh random nonce`,
    );
  });

  it('validation_failed for an unknown device type or a port out of range', async () => {
    const v = await testValidator();
    for (const body of [
      { pubkey: ALICE, device_type: 'gpu' },
      { pubkey: ALICE, device_type: 'native', port: 0 },
      { pubkey: ALICE, device_type: 'native', port: 70_000 },
      { pubkey: ALICE },
    ]) {
      const res = await signedInject(v, alice, 'POST', '/devices/register', body);
      expectError(res, 400, 'validation_failed');
    }
  });
});

describe('GET /devices', () => {
  it('lists the fleet oldest first, with counts per type, filtered and paginated', async () => {
    let clock = Date.now();
    const v = await testValidator({ now: () => clock });
    const fleet = [
      ['n1', 'native'],
      ['e1', 'esp32'],
      ['e2', 'esp8266'],
      ['n2', 'native'],
      ['e3', 'esp32'],
    ] as const;
    for (const [name, type] of fleet) {
      clock += 1000;
      const key = testKey(name);
      const res = await signedInject(
        v,
        key,
        'POST',
        '/devices/register',
        { pubkey: toHex(key.publicKey), device_type: type },
        { timestamp: clock },
      );
      expect(res.statusCode, res.body).toBe(200);
    }
    const all = (await v.inject('/devices')).json();
    expect(all.total).toBe(5);
    expect(all.by_type).toEqual({ native: 2, esp32: 2, esp8266: 1 });
    expect(all.devices.map((d: { pubkey: string }) => d.pubkey)).toEqual(
      fleet.map(([name]) => toHex(testKey(name).publicKey)),
    );
    expect(all.next_cursor).toBeNull();
    expect(all.devices[0]).toEqual({
      device_id: `dev-${toHex(sha256(testKey('n1').publicKey)).slice(0, 16)}`,
      pubkey: toHex(testKey('n1').publicKey),
      device_type: 'native',
      port: null,
      registered_at: all.devices[0].registered_at,
      last_seen: all.devices[0].registered_at,
      hashrate_reported: null,
      hashrate_1h: null,
      blocks_1h: 0,
      work: null,
      callback: {
        state: 'none',
        sent: 0,
        delivered: 0,
        refused: 0,
        failed: 0,
        coalesced: 0,
        last_attempt_at: null,
        last_delivered_at: null,
        retry_at: null,
        last_error: null,
      },
    });

    const esp32 = (await v.inject('/devices?device_type=esp32')).json();
    expect(esp32.devices.map((d: { device_type: string }) => d.device_type)).toEqual(['esp32', 'esp32']);
    expect(esp32.total).toBe(5);

    const seen: string[] = [];
    let url = '/devices?limit=2';
    for (let page = 0; page < 5; page++) {
      const body = (await v.inject(url)).json();
      seen.push(...body.devices.map((d: { pubkey: string }) => d.pubkey));
      if (body.next_cursor === null) break;
      expect(body.devices).toHaveLength(2);
      url = `/devices?limit=2&cursor=${body.next_cursor}`;
    }
    expect(seen).toEqual(all.devices.map((d: { pubkey: string }) => d.pubkey));
  });

  it('updates last_seen when a device fetches work', async () => {
    let clock = Date.now();
    const v = await testValidator({ now: () => clock });
    await register(v, alice, 'esp8266');
    clock += 30_000;
    const c = await issue(v, { miner_pubkey: ALICE });
    const devices = (await v.inject('/devices')).json();
    expect(devices.devices[0].last_seen).toBe(c.issued_at);
  });

  it('refuses a cursor it did not make', async () => {
    const v = await testValidator();
    expectError(
      await v.inject('/devices?cursor=bm9wZQ'),
      400,
      'validation_failed',
      'cursor: expected the next_cursor of a previous GET /devices page, got "bm9wZQ"',
    );
    const ledgerCursor = Buffer.from('ledger:5').toString('base64url');
    expectError(await v.inject(`/devices?cursor=${ledgerCursor}`), 400, 'validation_failed');
  });
});
