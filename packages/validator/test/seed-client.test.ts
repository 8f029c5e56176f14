/**
 * The seed system's own miner client, replayed: the requests it sends, in its order and with its
 * values (a challenge asked for with `"device_type": "cpu"`, the read-only commands, then its
 * proof), answered with bodies it can use, and its proof (which does not do our work) refused
 * with a documented code, never a 5xx.
 */
import { ERROR_CODES, formatPublicKey, isErrorCode } from '@tensormine/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { register, testKey, testValidator } from './helpers.js';

/** A 4xx with the documented error shape and a code of the error table, with its status. */
function expectDocumentedRefusal(res: LightMyRequestResponse, what: string): string {
  expect(res.statusCode, `${what}: ${res.body}`).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, `${what}: ${res.body}`).toBeLessThan(500);
  const body = res.json();
  expect(isErrorCode(body.code), `${what}: ${body.code}`).toBe(true);
  expect(ERROR_CODES[body.code as keyof typeof ERROR_CODES].status, what).toBe(res.statusCode);
  expect(body.statusCode, what).toBe(res.statusCode);
  expect(typeof body.message, what).toBe('string');
  return body.code;
}

describe("the seed's miner client", () => {
  it('gets a challenge with device_type cpu (an alias of native) and every read it makes', async () => {
    const v = await testValidator();
    const key = testKey('seed-client');
    const pubkey = formatPublicKey(key.publicKey);

    const health = await v.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({
      status: 'ok',
      service: expect.any(String),
      version: expect.any(String),
    });

    const status = await v.inject({ method: 'GET', url: '/status' });
    expect(status.statusCode).toBe(200);
    expect(status.json()).toMatchObject({
      node_id: expect.any(String),
      difficulty: expect.any(Number),
      max_tensor_dim: expect.any(Number),
      peer_network_mode: 'local_only',
      stats: { total_challenges_issued: 0, total_proofs_valid: 0 },
      network: { peers: [], synced: true },
    });

    // Its challenge request exactly: slot, slot_hash and "cpu".
    const res = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: {
        slot: 184_467,
        slot_hash: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
        device_type: 'cpu',
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const challenge = res.json();
    // What it reads (challenge_id, or id in its example; hash; the work and its thresholds).
    expect(challenge).toMatchObject({
      challenge_id: expect.any(String),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      device_type: 'native',
      operation_type: expect.stringMatching(/^(matmul|conv)$/),
      input_tensor: { shape: expect.any(Array), dtype: 'int8', data: expect.any(Array) },
      difficulty: expect.any(Number),
      mml_threshold: expect.any(Number),
      path_distance_max: expect.any(Number),
    });
    expect(challenge.id).toBe(challenge.challenge_id);
    // A CPU is sized like native: the same tensor side as asking for native.
    const native = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: {
        slot: 184_467,
        slot_hash: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
        device_type: 'native',
      },
    });
    expect(native.json().input_tensor.shape).toEqual(challenge.input_tensor.shape);

    const pool = await v.inject({ method: 'GET', url: '/pool' });
    expect(pool.statusCode).toBe(200);
    expect(pool.json()).toMatchObject({ type: expect.any(String), miners: expect.any(Number) });
    expect(pool.json()).toHaveProperty('stake');
    expect(pool.json()).toHaveProperty('minimum_stake');

    const peers = await v.inject({ method: 'GET', url: '/network/peers' });
    expect(peers.statusCode).toBe(200);
    expect(peers.json()).toMatchObject({ peers: [] });

    const devices = await v.inject({ method: 'GET', url: '/devices' });
    expect(devices.statusCode).toBe(200);
    expect(devices.json()).toMatchObject({ devices: [], total: 0 });

    const miner = await v.inject({ method: 'GET', url: `/miners/${pubkey}` });
    expect(miner.statusCode).toBe(200);
    expect(miner.json()).toMatchObject({ pubkey, registered: false });
  });

  it('registers a device as cpu and lists it as native, also when filtered by cpu', async () => {
    const v = await testValidator();
    const key = testKey('seed-client-device');
    await register(v, key, 'cpu');
    const listed = await v.inject({ method: 'GET', url: '/devices?device_type=cpu' });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().devices).toEqual([
      expect.objectContaining({ pubkey: formatPublicKey(key.publicKey), device_type: 'native' }),
    ]);
    expect(listed.json().by_type).toMatchObject({ native: 1 });
    const miner = await v.inject({ method: 'GET', url: `/miners/${formatPublicKey(key.publicKey)}` });
    expect(miner.json()).toMatchObject({ registered: true, device_type: 'native' });
  });

  it('refuses a device type it does not know, listing every value it accepts', async () => {
    const v = await testValidator();
    const res = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: { slot: 1, slot_hash: 'h', device_type: 'gpu' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      statusCode: 400,
      code: 'validation_failed',
      error: 'Bad Request',
      message: 'body/device_type: must be one of native, esp32, esp8266, cpu',
      details: {
        errors: [
          {
            path: 'body/device_type',
            message: 'must be one of native, esp32, esp8266, cpu',
            allowed: ['native', 'esp32', 'esp8266', 'cpu'],
          },
        ],
      },
    });
  });

  it('refuses its proofs with documented codes, never a 5xx', async () => {
    const v = await testValidator();
    const key = testKey('seed-client-proof');
    const pubkey = formatPublicKey(key.publicKey);
    const issued = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: { slot: 7, slot_hash: 'seed-slot', device_type: 'cpu' },
    });
    const challenge = issued.json();
    // Its proof: its own numbers (a float score, a self-computed hash), unsigned, or signed with
    // a byte array that is no signature of ours, from a key that never registered.
    const proof = {
      challenge_id: challenge.challenge_id,
      challenge_hash: challenge.hash,
      tensor_result_hash: 'ab'.repeat(32),
      mml_score: 0.4231,
      path_signature: '0123456789abcdef',
      path_distance: 3,
      computation_nonce: 48_213,
      computation_hash: 'cd'.repeat(32),
      miner_pubkey: pubkey,
    };
    const envelopes: [string, unknown][] = [
      ['its proof as sent (a float score)', { proof }],
      ['with a score on the 1/65536 grid, unsigned', { proof: { ...proof, mml_score: 0.5 } }],
      [
        'with a score on the grid and its signature bytes',
        { proof: { ...proof, mml_score: 0.5 }, signature: Array.from({ length: 64 }, (_, i) => i) },
      ],
    ];
    const codes: string[] = [];
    for (const [what, body] of envelopes) {
      const res = await v.inject({
        method: 'POST',
        url: '/submit',
        payload: body as Record<string, unknown>,
      });
      codes.push(expectDocumentedRefusal(res, what));
    }
    expect(codes).toEqual(['validation_failed', 'miner_not_registered', 'miner_not_registered']);

    // Registered, its proof is refused for what it is: unsigned, then signed with bytes that
    // are no signature of the proof.
    await register(v, key, 'cpu');
    const after: string[] = [];
    for (const [what, body] of envelopes.slice(1)) {
      const res = await v.inject({
        method: 'POST',
        url: '/submit',
        payload: body as Record<string, unknown>,
      });
      after.push(expectDocumentedRefusal(res, `registered, ${what}`));
    }
    expect(after).toEqual(['signature_required', 'signature_invalid']);
  });
});
