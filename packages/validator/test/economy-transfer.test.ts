import { createHash } from 'node:crypto';
import { signRequest, transferId } from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import { pruneStoredResults } from '../src/services/economy/requests.js';
import { conservation, genesisWith, hex, manualClock, signedPost, signedSend } from './economy-helpers.js';
import { testKey, testValidator } from './helpers.js';

const alice = testKey('alice');
const bob = testKey('bob');
const carol = testKey('carol');

async function setup() {
  return testValidator({
    genesis: genesisWith([
      { key: alice, token: 'PTM', amount: '100' },
      { key: alice, token: 'USDC', amount: '50' },
    ]),
  });
}

describe('POST /transfer', () => {
  it('serves the transfer_id a client computes from what it signed (docs/economy.md)', async () => {
    const v = await setup();
    const body = JSON.stringify({ from: hex(alice), to: hex(bob), token: 'USDC', amount: '1' });
    const headers = signRequest({
      method: 'POST',
      path: '/transfer',
      body,
      secretKey: alice.secretKey,
      timestamp: v.context.now(),
    });
    const res = await v.inject({
      method: 'POST',
      url: '/transfer',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    // The formula of the doc, written out here with node:crypto.
    const expected = `t-${createHash('sha256')
      .update(`transfer:${hex(alice)}:${headers['x-tm-nonce']}:${headers['x-tm-timestamp']}`)
      .digest('hex')
      .slice(0, 32)}`;
    expect(res.json().transfer_id).toBe(expected);
    expect(
      transferId({ from: hex(alice), nonce: headers['x-tm-nonce'], timestamp: headers['x-tm-timestamp'] }),
    ).toBe(expected);
    expect((await v.inject(`/transfers/${expected}`)).statusCode).toBe(200);
  });

  it('moves the amount, writes a transfer entry on both keys and serves the transfer by id', async () => {
    const v = await setup();
    const res = await signedSend(v, alice, '/transfer', {
      from: hex(alice),
      to: hex(bob),
      token: 'PTM',
      amount: '12.5',
      memo: 'rent for the rig',
    });
    expect(res.statusCode, res.body).toBe(200);
    const t = res.json();
    expect(t).toMatchObject({
      from: hex(alice),
      to: hex(bob),
      token: 'PTM',
      amount: '12.5',
      memo: 'rent for the rig',
    });
    expect(t.transfer_id).toMatch(/^t-[0-9a-f]{32}$/);
    expect(typeof t.timestamp).toBe('number');

    const got = await v.inject(`/transfers/${t.transfer_id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(t);

    const balances = (await v.inject(`/balances/${hex(bob)}`)).json();
    expect(balances.balances.find((b: { token: string }) => b.token === 'PTM')).toMatchObject({
      available: '12.5',
      total: '12.5',
    });
    const a = (await v.inject(`/balances/${hex(alice)}`)).json();
    expect(a.balances.map((b: { token: string; available: string }) => [b.token, b.available])).toEqual([
      ['PTM', '87.5'],
      ['SOL', '0'],
      ['USDC', '50'],
    ]);
    expect((await v.inject(`/miners/${hex(bob)}`)).json().balances).toEqual([
      { token: 'PTM', amount: '12.5' },
    ]);

    for (const [key, amount] of [
      [alice, '-12.5'],
      [bob, '12.5'],
    ] as const) {
      const page = (await v.inject(`/ledger/entries?pubkey=${hex(key)}&type=transfer`)).json();
      expect(page.entries).toHaveLength(1);
      expect(page.entries[0]).toMatchObject({ type: 'transfer', amount, token: 'PTM', ref: t.transfer_id });
    }
    const { supply, issued } = await conservation(v);
    expect(supply).toEqual(issued);
  });

  it('answers a retry of the identical signed request with the original result and moves nothing again', async () => {
    const v = await setup();
    const request = signedPost(alice, '/transfer', {
      from: hex(alice),
      to: hex(bob),
      token: 'PTM',
      amount: '10',
    });
    const first = await request.send(v);
    expect(first.statusCode).toBe(200);
    const again = await request.send(v);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['x-tm-idempotent-replay']).toBe('true');
    // Two copies racing each other: one execution.
    const racing = signedPost(alice, '/transfer', {
      from: hex(alice),
      to: hex(bob),
      token: 'PTM',
      amount: '1',
    });
    const [r1, r2] = await Promise.all([racing.send(v), racing.send(v)]);
    expect([r1.statusCode, r2.statusCode].filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    const bobPtm = (await v.inject(`/balances/${hex(bob)}`)).json().balances[0].available;
    expect(bobPtm).toBe('11');
    expect((await v.inject(`/ledger/entries?pubkey=${hex(bob)}`)).json().entries).toHaveLength(2);
  });

  it('refuses an overdraft with insufficient_balance saying what is available, and moves nothing', async () => {
    const v = await setup();
    const res = await signedSend(v, alice, '/transfer', {
      from: hex(alice),
      to: hex(bob),
      token: 'USDC',
      amount: '50.000001',
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      code: 'insufficient_balance',
      details: { token: 'USDC', available: '50', required: '50.000001' },
    });
    expect(res.json().message).toContain('50 USDC');
    expect((await v.inject(`/ledger/entries?pubkey=${hex(bob)}`)).json().entries).toEqual([]);
  });

  it('lets exactly one of two concurrent spends of the same balance succeed', async () => {
    const v = await setup();
    const results = await Promise.all(
      [bob, carol].map((to) =>
        signedSend(v, alice, '/transfer', { from: hex(alice), to: hex(to), token: 'PTM', amount: '60' }),
      ),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const ptm = (await v.inject(`/balances/${hex(alice)}`)).json().balances[0].available;
    expect(ptm).toBe('40');
  });

  it('refuses a transfer signed by another key than from, to oneself, of zero, an unknown token or a bad memo', async () => {
    const v = await setup();
    const base = { from: hex(alice), to: hex(bob), token: 'PTM', amount: '1' };
    const cases: [unknown, number, string][] = [
      [{ ...base, amount: '0' }, 422, 'amount_too_small'],
      [{ ...base, to: hex(alice) }, 400, 'validation_failed'],
      [{ ...base, token: 'DOGE' }, 400, 'unknown_token'],
      [{ ...base, amount: '1.0000000001' }, 400, 'invalid_amount'],
      [{ ...base, memo: 'x'.repeat(65) }, 400, 'validation_failed'],
      [{ ...base, memo: 'tab\there' }, 400, 'validation_failed'],
    ];
    for (const [body, status, code] of cases) {
      const res = await signedSend(v, alice, '/transfer', body);
      expect([res.statusCode, res.json().code], JSON.stringify(body)).toEqual([status, code]);
    }
    const stolen = await signedSend(v, bob, '/transfer', base);
    expect([stolen.statusCode, stolen.json().code]).toEqual([403, 'pubkey_mismatch']);
    const unsigned = await v.inject({ method: 'POST', url: '/transfer', payload: base });
    expect([unsigned.statusCode, unsigned.json().code]).toEqual([401, 'signature_required']);
  });

  it('keeps stored results 7 days; an identical retry after that is refused as expired, never executed', async () => {
    const clock = manualClock();
    const v = await testValidator({
      now: clock.now,
      genesis: genesisWith([{ key: alice, token: 'PTM', amount: '10' }]),
    });
    const request = signedPost(
      alice,
      '/transfer',
      { from: hex(alice), to: hex(bob), token: 'PTM', amount: '4' },
      { timestamp: clock.now() },
    );
    expect((await request.send(v)).statusCode).toBe(200);
    clock.advance(6 * 86_400);
    expect(await pruneStoredResults(v.context)).toBe(0);
    expect((await request.send(v)).statusCode).toBe(200);
    clock.advance(2 * 86_400);
    expect(await pruneStoredResults(v.context)).toBe(1);
    const late = await request.send(v);
    expect([late.statusCode, late.json().code]).toEqual([401, 'request_expired']);
    expect((await v.inject(`/balances/${hex(alice)}`)).json().balances[0].available).toBe('6');
  });

  it('answers an unknown transfer id with transfer_not_found', async () => {
    const v = await setup();
    const res = await v.inject('/transfers/t-0000');
    expect([res.statusCode, res.json().code]).toEqual([404, 'transfer_not_found']);
  });
});
