import { toHex } from '@tensormine/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { register, testKey, testValidator } from './helpers.js';
import { expectError, issue, mine } from './mining-fixtures.js';

/** Every 4xx has the ErrorResponse shape; nothing a client sends is a 5xx. */
function expectClientError(res: LightMyRequestResponse, what: string): { code: string; message: string } {
  expect(res.statusCode, `${what}: ${res.body}`).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, `${what}: ${res.body}`).toBeLessThan(500);
  const body = res.json();
  expect(
    Object.keys(body)
      .sort()
      .filter((k) => k !== 'details'),
    what,
  ).toEqual(['code', 'error', 'message', 'statusCode']);
  expect(body.statusCode, what).toBe(res.statusCode);
  expect(typeof body.message, what).toBe('string');
  return body;
}

const KEY = 'a'.repeat(64);

describe('bad input to the v4.0 mining endpoints', () => {
  it('answers every malformed challenge request with validation_failed', async () => {
    const v = await testValidator();
    const bodies: [string, unknown][] = [
      ['empty object', {}],
      ['missing slot_hash', { slot: 1 }],
      ['missing slot', { slot_hash: 'h' }],
      ['slot as a string', { slot: '1', slot_hash: 'h' }],
      ['negative slot', { slot: -1, slot_hash: 'h' }],
      ['fractional slot', { slot: 1.5, slot_hash: 'h' }],
      ['slot above 2^53 - 1', { slot: 9007199254740992, slot_hash: 'h' }],
      ['huge slot', { slot: 1e308, slot_hash: 'h' }],
      ['empty slot_hash', { slot: 1, slot_hash: '' }],
      ['slot_hash of 129 characters', { slot: 1, slot_hash: 'x'.repeat(129) }],
      ['slot_hash with a control character', { slot: 1, slot_hash: 'a\nb' }],
      ['slot_hash as a number', { slot: 1, slot_hash: 5 }],
      ['unknown device_type', { slot: 1, slot_hash: 'h', device_type: 'gpu' }],
      ['non-hex miner_pubkey', { slot: 1, slot_hash: 'h', miner_pubkey: 'z'.repeat(64) }],
      ['uppercase miner_pubkey', { slot: 1, slot_hash: 'h', miner_pubkey: 'A'.repeat(64) }],
      ['short miner_pubkey', { slot: 1, slot_hash: 'h', miner_pubkey: 'a'.repeat(63) }],
      ['an array body', [1, 2]],
      ['a string body', 'slot'],
      ['null', null],
    ];
    for (const [what, body] of bodies) {
      const res = await v.inject({
        method: 'POST',
        url: '/challenge',
        payload: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      const err = expectClientError(res, what);
      expect(err.code, what).toBe(body === null ? 'validation_failed' : 'validation_failed');
    }
  });

  it('answers every malformed proof envelope with a 4xx', async () => {
    const v = await testValidator({ maxTensorDim: 8 });
    const alice = testKey('alice');
    await register(v, alice);
    const { proof, signature } = mine(await issue(v), alice);
    const bodies: [string, unknown][] = [
      ['no proof', { signature }],
      ['proof as a string', { proof: 'x', signature }],
      ['missing computation_nonce', { proof: { ...proof, computation_nonce: undefined }, signature }],
      ['non-hex challenge_hash', { proof: { ...proof, challenge_hash: 'g'.repeat(64) }, signature }],
      ['short tensor_result_hash', { proof: { ...proof, tensor_result_hash: 'a'.repeat(63) }, signature }],
      ['mml_score not a multiple of 1/65536', { proof: { ...proof, mml_score: 0.3 }, signature }],
      ['mml_score above 1', { proof: { ...proof, mml_score: 2 }, signature }],
      ['mml_score as a string', { proof: { ...proof, mml_score: '0.5' }, signature }],
      ['path_signature not hex', { proof: { ...proof, path_signature: 'xyz' }, signature }],
      ['path_distance 65', { proof: { ...proof, path_distance: 65 }, signature }],
      ['negative path_distance', { proof: { ...proof, path_distance: -1 }, signature }],
      ['negative nonce', { proof: { ...proof, computation_nonce: -1 }, signature }],
      ['nonce 2^53', { proof: { ...proof, computation_nonce: 9007199254740992 }, signature }],
      ['huge nonce', { proof: { ...proof, computation_nonce: 1e308 }, signature }],
      ['nonce as a string', { proof: { ...proof, computation_nonce: '5' }, signature }],
      [
        'uppercase miner_pubkey',
        { proof: { ...proof, miner_pubkey: proof.miner_pubkey.toUpperCase() }, signature },
      ],
      ['challenge_id with a slash', { proof: { ...proof, challenge_id: 'c/1' }, signature }],
      ['challenge_id of 129 characters', { proof: { ...proof, challenge_id: 'c'.repeat(129) }, signature }],
      ['signature of 63 bytes', { proof, signature: signature.slice(0, 63) }],
      ['signature with a 256', { proof, signature: [...signature.slice(0, 63), 256] }],
      ['signature with a negative byte', { proof, signature: [...signature.slice(0, 63), -1] }],
      ['signature as hex', { proof, signature: toHex(Uint8Array.from(signature)) }],
      ['signature of strings', { proof, signature: signature.map(String) }],
    ];
    for (const [what, body] of bodies) {
      const res = await v.inject({
        method: 'POST',
        url: '/submit',
        payload: body as Record<string, unknown>,
      });
      expect(expectClientError(res, what).code, what).toBe('validation_failed');
    }
    // After all that, the proof itself is still good.
    expect(
      (await v.inject({ method: 'POST', url: '/submit', payload: { proof, signature } })).statusCode,
    ).toBe(200);
  });

  it('a signature with a 256 says which byte is wrong', async () => {
    const v = await testValidator();
    const res = await v.inject({
      method: 'POST',
      url: '/submit',
      payload: {
        proof: {
          challenge_id: 'c-1',
          challenge_hash: 'a'.repeat(64),
          tensor_result_hash: 'a'.repeat(64),
          mml_score: 0.5,
          path_signature: 'a'.repeat(16),
          path_distance: 3,
          computation_nonce: 1,
          computation_hash: 'a'.repeat(64),
          miner_pubkey: KEY,
        },
        signature: [...Array(63).fill(1), 256],
      },
    });
    expectError(res, 400, 'validation_failed', 'body/signature/63: must be <= 255');
  });

  it('answers transport errors with their own codes', async () => {
    const v = await testValidator();
    const big = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: JSON.stringify({ slot: 1, slot_hash: 'h', padding: 'x'.repeat(70_000) }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(big, 413, 'body_too_large');
    const broken = await v.inject({
      method: 'POST',
      url: '/submit',
      payload: '{"proof": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(broken, 400, 'invalid_json');
    const text = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: 'slot=1',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(text, 415, 'unsupported_media_type');
    const empty = await v.inject({
      method: 'POST',
      url: '/submit',
      headers: { 'content-type': 'application/json' },
    });
    expectClientError(empty, 'empty body');
  });

  it('answers malformed query strings and path keys with validation_failed', async () => {
    const v = await testValidator();
    const urls = [
      '/miners/xyz',
      `/miners/${'A'.repeat(64)}`,
      `/miners/${'a'.repeat(65)}`,
      '/devices?limit=0',
      '/devices?limit=501',
      '/devices?limit=abc',
      '/devices?device_type=gpu',
      '/devices?cursor=',
      '/ledger/entries?limit=-1',
      '/ledger/entries?type=bogus',
      '/ledger/entries?token=ptm',
      '/ledger/entries?pubkey=123',
      `/ledger/entries?cursor=${'x'.repeat(201)}`,
    ];
    for (const url of urls)
      expect(expectClientError(await v.inject(url), url).code, url).toBe('validation_failed');
    expectError(
      await v.inject('/ledger/entries?token=ABC'),
      400,
      'unknown_token',
      'token: expected one of PTM, SOL, USDC, got "ABC"',
    );
  });
});
