import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { genesisWith, hex, manualClock, signedPost, signedSend } from './economy-helpers.js';
import { register, testKey, testValidator } from './helpers.js';

/**
 * The order of checks of docs/api.md "Refusals": when several refusals apply, the first one in
 * that order is the answer.
 */

const alice = testKey('refusals-alice');
const bob = testKey('refusals-bob');
const poor = testKey('refusals-poor');

async function setup() {
  const clock = manualClock(Date.now());
  const v = await testValidator({
    now: clock.now,
    genesis: genesisWith([
      { key: alice, token: 'PTM', amount: '100' },
      { key: alice, token: 'USDC', amount: '100' },
    ]),
  });
  return { v, clock };
}

const code = (res: { json(): { code?: string } }) => res.json().code;

describe('which refusal wins', () => {
  it('a swap of "0" on a pair with no pool: amount_too_small (the amount is checked first)', async () => {
    const { v } = await setup();
    const body = { from_token: 'SOL', to_token: 'SOL', amount: '0', min_received: '0', pubkey: hex(alice) };
    expect(code(await signedSend(v, alice, '/swap/execute', body))).toBe('amount_too_small');
    expect(code(await signedSend(v, alice, '/swap/execute', { ...body, amount: '1' }))).toBe(
      'validation_failed',
    );
    const quote = await v.inject({
      method: 'POST',
      url: '/swap/quote',
      payload: { from_token: 'PTM', to_token: 'USDC', amount: '0' },
    });
    expect(code(quote)).toBe('amount_too_small');
  });

  it('a nonce reused with another body: idempotency_conflict after an executed economy request, request_replayed after another signed request', async () => {
    const { v, clock } = await setup();
    const nonce = new Uint8Array(randomBytes(16));
    const first = signedPost(
      alice,
      '/transfer',
      { from: hex(alice), to: hex(bob), token: 'PTM', amount: '1' },
      {
        nonce,
        timestamp: clock.now(),
      },
    );
    expect((await first.send(v)).statusCode).toBe(200);
    const other = signedPost(
      alice,
      '/transfer',
      { from: hex(alice), to: hex(bob), token: 'PTM', amount: '2' },
      {
        nonce,
        timestamp: clock.now(),
      },
    );
    expect(code(await other.send(v))).toBe('idempotency_conflict');
    // The nonce of a pool leave (not an exactly-once economy operation) is only in the replay window.
    await register(v, bob);
    const second = new Uint8Array(randomBytes(16));
    const leave = signedPost(
      bob,
      '/pool/leave',
      { pubkey: hex(bob) },
      { nonce: second, timestamp: clock.now() },
    );
    expect(code(await leave.send(v))).toBe('pool_not_member');
    const stake = signedPost(
      bob,
      '/stake',
      { amount: '1', lock_period_days: 0, pubkey: hex(bob) },
      {
        nonce: second,
        timestamp: clock.now(),
      },
    );
    expect(code(await stake.send(v))).toBe('request_replayed');
  });

  it('an order that is dust and unfunded: order_below_minimum (before the transaction)', async () => {
    const { v } = await setup();
    const res = await signedSend(v, poor, '/marketplace/order', {
      type: 'buy',
      token: 'PTM',
      amount: '0.000000001',
      price: '1',
      pubkey: hex(poor),
    });
    expect(code(res)).toBe('order_below_minimum');
    const funded = await signedSend(v, poor, '/marketplace/order', {
      type: 'buy',
      token: 'PTM',
      amount: '1',
      price: '1',
      pubkey: hex(poor),
    });
    expect(code(funded)).toBe('insufficient_balance');
  });

  it('a transfer signed by another key with amount 0: pubkey_mismatch', async () => {
    const { v } = await setup();
    const res = await signedSend(v, bob, '/transfer', {
      from: hex(alice),
      to: hex(bob),
      token: 'PTM',
      amount: '0',
    });
    expect(code(res)).toBe('pubkey_mismatch');
    const zero = await signedSend(v, alice, '/transfer', {
      from: hex(alice),
      to: hex(alice),
      token: 'PTM',
      amount: '0',
    });
    expect(code(zero)).toBe('validation_failed');
  });
});
