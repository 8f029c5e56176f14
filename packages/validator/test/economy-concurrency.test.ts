import { accruedYield, formatAmount, type KeyPair, parseAmount, signRequest } from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import type { Validator } from '../src/app.js';
import { conservation, genesisWith, hex, manualClock } from './economy-helpers.js';
import { testKey, testValidator } from './helpers.js';

/** Many requests at once over real sockets: the storage serialises them; exactly the right ones win. */

const alice = testKey('alice');
const buyers = Array.from({ length: 12 }, (_, i) => testKey(`buyer-${i}`));

async function post(url: string, key: KeyPair, path: string, body: object, now: number) {
  const text = JSON.stringify(body);
  const headers = signRequest({ method: 'POST', path, body: text, secretKey: key.secretKey, timestamp: now });
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: text,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function serve(v: Validator): Promise<string> {
  return v.listen({ host: '127.0.0.1', port: 0 });
}

describe('concurrent economy requests', () => {
  it('parallel spends of one balance: exactly as many succeed as it covers', async () => {
    const v = await testValidator({ genesis: genesisWith([{ key: alice, token: 'USDC', amount: '100' }]) });
    const url = await serve(v);
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        post(
          url,
          alice,
          '/transfer',
          { from: hex(alice), to: hex(buyers[i % buyers.length]!), token: 'USDC', amount: '10' },
          Date.now(),
        ),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 409 && r.body.code === 'insufficient_balance')).toHaveLength(
      15,
    );
    const left = await v.context.storage.read((tx) => tx.ledger.balance(hex(alice), 'USDC'));
    expect(left).toBe(0n);
    const { supply, issued } = await conservation(v);
    expect(supply).toEqual(issued);
  });

  it('parallel buyers against one resting sell: it fills exactly once over, the rest rest', async () => {
    const v = await testValidator({
      genesis: genesisWith([
        { key: alice, token: 'PTM', amount: '10' },
        ...buyers.map((key) => ({ key, token: 'USDC', amount: '5' })),
      ]),
    });
    const url = await serve(v);
    const sell = await post(
      url,
      alice,
      '/marketplace/order',
      { type: 'sell', token: 'PTM', amount: '10', price: '0.5', pubkey: hex(alice) },
      Date.now(),
    );
    expect(sell.status).toBe(200);
    const buys = await Promise.all(
      buyers.map((key) =>
        post(
          url,
          key,
          '/marketplace/order',
          { type: 'buy', token: 'PTM', amount: '1', price: '0.5', pubkey: hex(key) },
          Date.now(),
        ),
      ),
    );
    expect(buys.every((b) => b.status === 200)).toBe(true);
    expect(buys.filter((b) => b.body.status === 'filled')).toHaveLength(10);
    expect(buys.filter((b) => b.body.status === 'open')).toHaveLength(2);
    const order = await v.context.storage.read((tx) => tx.economy.orders.get(sell.body.order_id as string));
    expect(order).toMatchObject({ status: 'filled', filled: parseAmount('10', 'PTM'), escrow: 0n });
    expect(await v.context.storage.read((tx) => tx.ledger.balance(hex(alice), 'USDC'))).toBe(
      parseAmount('5', 'USDC'),
    );
    const { supply, issued } = await conservation(v);
    expect(supply).toEqual(issued);
  });

  it('parallel claims of one position pay its yield once', async () => {
    const clock = manualClock(Date.now());
    const v = await testValidator({
      now: clock.now,
      genesis: genesisWith([{ key: alice, token: 'PTM', amount: '1000' }]),
    });
    const url = await serve(v);
    const stake = await post(
      url,
      alice,
      '/stake',
      { amount: '1000', lock_period_days: 30, pubkey: hex(alice) },
      clock.now(),
    );
    clock.advance(7 * 86_400);
    const claims = await Promise.all(
      Array.from({ length: 10 }, () =>
        post(url, alice, '/claim', { stake_id: stake.body.stake_id, pubkey: hex(alice) }, clock.now()),
      ),
    );
    expect(claims.every((c) => c.status === 200)).toBe(true);
    const paid = claims.reduce((sum, c) => sum + parseAmount(c.body.claimed as string, 'PTM'), 0n);
    expect(formatAmount(paid, 'PTM')).toBe(
      formatAmount(accruedYield(parseAmount('1000', 'PTM'), 1200n, 0, 7 * 86_400), 'PTM'),
    );
    expect(claims.filter((c) => c.body.claimed !== '0')).toHaveLength(1);
  });

  it('the same signed request sent ten times at once applies once; every answer is its result or a replay refusal', async () => {
    const v = await testValidator({ genesis: genesisWith([{ key: alice, token: 'SOL', amount: '1' }]) });
    const url = await serve(v);
    const text = JSON.stringify({ from: hex(alice), to: hex(buyers[0]!), token: 'SOL', amount: '0.4' });
    const headers = {
      ...signRequest({ method: 'POST', path: '/transfer', body: text, secretKey: alice.secretKey }),
      'content-type': 'application/json',
    };
    const answers = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const res = await fetch(`${url}/transfer`, { method: 'POST', headers, body: text });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      }),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((a) => JSON.stringify(a.body))).size).toBe(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body.code).toBe('request_replayed');
    expect(await v.context.storage.read((tx) => tx.ledger.balance(hex(alice), 'SOL'))).toBe(
      parseAmount('0.6', 'SOL'),
    );
  });

  it('ten different transfers signed with one nonce, sent at once: one applies, every other is idempotency_conflict', async () => {
    const v = await testValidator({ genesis: genesisWith([{ key: alice, token: 'SOL', amount: '1' }]) });
    const url = await serve(v);
    const nonce = new Uint8Array(16).fill(7);
    const answers = await Promise.all(
      buyers.slice(0, 10).map(async (buyer) => {
        const text = JSON.stringify({ from: hex(alice), to: hex(buyer), token: 'SOL', amount: '0.1' });
        const headers = {
          ...signRequest({
            method: 'POST',
            path: '/transfer',
            body: text,
            secretKey: alice.secretKey,
            nonce,
          }),
          'content-type': 'application/json',
        };
        const res = await fetch(`${url}/transfer`, { method: 'POST', headers, body: text });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      }),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body.code).toBe('idempotency_conflict');
    expect(await v.context.storage.read((tx) => tx.ledger.balance(hex(alice), 'SOL'))).toBe(
      parseAmount('0.9', 'SOL'),
    );
  });
});
