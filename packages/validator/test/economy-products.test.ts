import {
  accruedYield,
  formatAmount,
  parseAmount,
  parsePrice,
  quoteValueFloor,
  SECONDS_PER_DAY,
  swapOut,
  unstakePenalty,
} from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import { conservation, genesisWith, hex, manualClock, signedSend } from './economy-helpers.js';
import { testKey, testValidator } from './helpers.js';

const alice = testKey('alice');
const bob = testKey('bob');
const carol = testKey('carol');

async function setup(options: { reserve?: string } = {}) {
  const clock = manualClock();
  const v = await testValidator({
    now: clock.now,
    genesis: genesisWith(
      [
        { key: alice, token: 'PTM', amount: '1000' },
        { key: alice, token: 'USDC', amount: '1000' },
        { key: bob, token: 'PTM', amount: '1000' },
        { key: bob, token: 'USDC', amount: '1000' },
        { key: carol, token: 'SOL', amount: '10' },
      ],
      options.reserve !== undefined ? { reserve: options.reserve } : {},
    ),
  });
  return { v, clock };
}

async function available(v: Awaited<ReturnType<typeof setup>>['v'], key: typeof alice, token: string) {
  const res = (await v.inject(`/balances/${hex(key)}`)).json();
  return res.balances.find((b: { token: string }) => b.token === token).available as string;
}

async function conserved(v: Awaited<ReturnType<typeof setup>>['v']) {
  const { supply, issued } = await conservation(v);
  expect(supply).toEqual(issued);
}

describe('staking', () => {
  it('stakes, accrues yield per second, claims it from the reserve, unstakes after expiry without penalty', async () => {
    const { v, clock } = await setup();
    const res = await signedSend(v, alice, '/stake', {
      amount: '100',
      lock_period_days: 30,
      pubkey: hex(alice),
    });
    expect(res.statusCode, res.body).toBe(200);
    const stake = res.json();
    expect(stake).toMatchObject({ amount: '100', token: 'PTM', lock_period_days: 30, yield_rate: 0.12 });
    expect(stake.lock_expiry - stake.created_at).toBe(30 * SECONDS_PER_DAY);
    expect(await available(v, alice, 'PTM')).toBe('900');

    clock.advance(10 * SECONDS_PER_DAY);
    const expected = accruedYield(parseAmount('100', 'PTM'), 1200n, 0, 10 * SECONDS_PER_DAY);
    const listed = (await v.inject(`/stake/${hex(alice)}`)).json().stakes;
    expect(listed).toHaveLength(1);
    expect(listed[0].yield_earned).toBe(formatAmount(expected, 'PTM'));

    const claim = await signedSend(v, alice, '/claim', { stake_id: stake.stake_id, pubkey: hex(alice) });
    expect(claim.json()).toMatchObject({ claimed: formatAmount(expected, 'PTM'), token: 'PTM' });
    expect((await v.inject(`/stake/${hex(alice)}`)).json().stakes[0].yield_earned).toBe('0');

    clock.advance(20 * SECONDS_PER_DAY);
    const total = accruedYield(parseAmount('100', 'PTM'), 1200n, 0, 30 * SECONDS_PER_DAY);
    const out = await signedSend(v, alice, '/unstake', { stake_id: stake.stake_id, pubkey: hex(alice) });
    expect(out.json()).toMatchObject({
      returned: '100',
      penalty: '0',
      yield_paid: formatAmount(total - expected, 'PTM'),
    });
    expect(await available(v, alice, 'PTM')).toBe(formatAmount(parseAmount('1000', 'PTM') + total, 'PTM'));
    expect((await v.inject(`/stake/${hex(alice)}`)).json().stakes).toEqual([]);
    const again = await signedSend(v, alice, '/unstake', { stake_id: stake.stake_id, pubkey: hex(alice) });
    expect([again.statusCode, again.json().code]).toEqual([404, 'stake_not_found']);
    await conserved(v);
  });

  it('charges the early-unstake penalty into the reserve before lock expiry', async () => {
    const { v, clock } = await setup();
    const stake = (
      await signedSend(v, alice, '/stake', { amount: '200', lock_period_days: 7, pubkey: hex(alice) })
    ).json();
    clock.advance(SECONDS_PER_DAY);
    const penalty = unstakePenalty(
      parseAmount('200', 'PTM'),
      100n,
      stake.lock_expiry,
      stake.created_at + SECONDS_PER_DAY,
    );
    expect(penalty).toBe(parseAmount('2', 'PTM'));
    const out = (
      await signedSend(v, alice, '/unstake', { stake_id: stake.stake_id, pubkey: hex(alice) })
    ).json();
    expect(out).toMatchObject({ returned: '198', penalty: '2' });
    // The reserve is a module account: the ledger filter takes it too.
    const reserve = (await v.inject('/ledger/entries?pubkey=%40reserve&type=penalty')).json().entries;
    expect(reserve).toMatchObject([{ pubkey: '@reserve', amount: '2', token: 'PTM', ref: stake.stake_id }]);
    const penalties = (await v.inject(`/ledger/entries?pubkey=${hex(alice)}&type=penalty`)).json().entries;
    expect(penalties).toMatchObject([{ amount: '-2', token: 'PTM', ref: stake.stake_id }]);
    await conserved(v);
  });

  it('stops paying yield when the reserve is empty', async () => {
    const { v, clock } = await setup({ reserve: '0.000001' });
    const stake = (
      await signedSend(v, alice, '/stake', { amount: '1000', lock_period_days: 0, pubkey: hex(alice) })
    ).json();
    clock.advance(365 * SECONDS_PER_DAY);
    expect((await v.inject(`/stake/${hex(alice)}`)).json().stakes[0].yield_earned).toBe('0.000001');
    const claim = (
      await signedSend(v, alice, '/claim', { stake_id: stake.stake_id, pubkey: hex(alice) })
    ).json();
    expect(claim.claimed).toBe('0.000001');
    clock.advance(SECONDS_PER_DAY);
    const second = (
      await signedSend(v, alice, '/claim', { stake_id: stake.stake_id, pubkey: hex(alice) })
    ).json();
    expect(second.claimed).toBe('0');
    await conserved(v);
  });

  it('refuses another key, an unknown position, a bad lock and an overdraft', async () => {
    const { v } = await setup();
    const stake = (
      await signedSend(v, alice, '/stake', { amount: '1', lock_period_days: 0, pubkey: hex(alice) })
    ).json();
    const theft = await signedSend(v, bob, '/unstake', { stake_id: stake.stake_id, pubkey: hex(bob) });
    expect([theft.statusCode, theft.json().code]).toEqual([404, 'stake_not_found']);
    const bad = await signedSend(v, alice, '/stake', {
      amount: '1',
      lock_period_days: 14,
      pubkey: hex(alice),
    });
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'validation_failed']);
    const over = await signedSend(v, alice, '/stake', {
      amount: '1000',
      lock_period_days: 0,
      pubkey: hex(alice),
    });
    expect([over.statusCode, over.json().code, over.json().details.available]).toEqual([
      409,
      'insufficient_balance',
      '999',
    ]);
  });
});

describe('swaps', () => {
  it('quotes exactly what execute then pays, with price, impact and fee; refuses below min_received', async () => {
    const { v } = await setup();
    const quote = (
      await v.inject({
        method: 'POST',
        url: '/swap/quote',
        payload: { from_token: 'USDC', to_token: 'PTM', amount: '100' },
      })
    ).json();
    const math = swapOut(
      parseAmount('50000', 'USDC'),
      parseAmount('1000000', 'PTM'),
      parseAmount('100', 'USDC'),
      30n,
    );
    expect(quote).toMatchObject({
      from_amount: '100',
      to_amount: formatAmount(math.amountOut, 'PTM'),
      fee: '0.3',
      fee_token: 'USDC',
    });
    expect(quote.price).toBeCloseTo(19.9, 1);
    expect(quote.slippage).toBeGreaterThan(0.001);
    expect(quote.slippage).toBeLessThan(0.003);

    const refused = await signedSend(v, alice, '/swap/execute', {
      from_token: 'USDC',
      to_token: 'PTM',
      amount: '100',
      min_received: '2000',
      pubkey: hex(alice),
    });
    expect([refused.statusCode, refused.json().code]).toEqual([409, 'slippage_exceeded']);
    expect(await available(v, alice, 'USDC')).toBe('1000');

    const done = await signedSend(v, alice, '/swap/execute', {
      from_token: 'USDC',
      to_token: 'PTM',
      amount: '100',
      min_received: quote.to_amount,
      pubkey: hex(alice),
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ to_amount: quote.to_amount, fee: '0.3' });
    expect(await available(v, alice, 'USDC')).toBe('900');

    const pools = (await v.inject('/swap/pools')).json().pools;
    const pool = pools.find((p: { pair: string }) => p.pair === 'PTM/USDC');
    expect(pool).toMatchObject({ volume_24h: '99.7', fee_rate: 0.003 });
    expect(pool.reserves).toEqual([
      { token: 'PTM', amount: formatAmount(parseAmount('1000000', 'PTM') - math.amountOut, 'PTM') },
      { token: 'USDC', amount: '50099.7' },
    ]);
    expect(pool.liquidity).toBe('100199.4');
    await conserved(v);
  });

  it('refuses an unknown pair, the same token and dust that would yield nothing', async () => {
    const { v } = await setup();
    const none = await v.inject({
      method: 'POST',
      url: '/swap/quote',
      payload: { from_token: 'USDC', to_token: 'USDC', amount: '1' },
    });
    expect(none.json().code).toBe('validation_failed');
    const dust = await v.inject({
      method: 'POST',
      url: '/swap/quote',
      payload: { from_token: 'PTM', to_token: 'SOL', amount: '0.000000001' },
    });
    expect([dust.statusCode, dust.json().code]).toEqual([422, 'amount_too_small']);
  });
});

describe('vaults', () => {
  it('locks until unlock_at, refuses early and second withdrawals, returns the amount once', async () => {
    const { v, clock } = await setup();
    const now = Math.floor(clock.now() / 1000);
    const past = await signedSend(v, alice, '/vault/deposit', {
      token: 'USDC',
      amount: '5',
      unlock_at: now,
      pubkey: hex(alice),
    });
    expect([past.statusCode, past.json().code]).toEqual([422, 'unlock_time_invalid']);
    const far = await signedSend(v, alice, '/vault/deposit', {
      token: 'USDC',
      amount: '5',
      unlock_at: now + 6 * 365 * SECONDS_PER_DAY,
      pubkey: hex(alice),
    });
    expect(far.json().code).toBe('unlock_time_invalid');
    const vault = (
      await signedSend(v, alice, '/vault/deposit', {
        token: 'USDC',
        amount: '5',
        unlock_at: now + 3600,
        pubkey: hex(alice),
      })
    ).json();
    expect(vault).toMatchObject({ token: 'USDC', amount: '5', withdrawn: false, withdrawn_at: null });
    expect(await available(v, alice, 'USDC')).toBe('995');
    const early = await signedSend(v, alice, '/vault/withdraw', {
      vault_id: vault.vault_id,
      pubkey: hex(alice),
    });
    expect([early.statusCode, early.json().code]).toEqual([409, 'vault_locked']);
    clock.advance(3600);
    const other = await signedSend(v, bob, '/vault/withdraw', { vault_id: vault.vault_id, pubkey: hex(bob) });
    expect(other.json().code).toBe('vault_not_found');
    const out = (
      await signedSend(v, alice, '/vault/withdraw', { vault_id: vault.vault_id, pubkey: hex(alice) })
    ).json();
    expect(out).toMatchObject({ withdrawn: true, withdrawn_at: now + 3600 });
    const twice = await signedSend(v, alice, '/vault/withdraw', {
      vault_id: vault.vault_id,
      pubkey: hex(alice),
    });
    expect(twice.json().code).toBe('vault_withdrawn');
    expect(await available(v, alice, 'USDC')).toBe('1000');
    expect((await v.inject(`/vault/${hex(alice)}`)).json().vaults).toMatchObject([
      { vault_id: vault.vault_id, withdrawn: true },
    ]);
    await conserved(v);
  });
});

describe('marketplace', () => {
  it('escrows, matches by price-time priority with partial fills at the resting price, lists and cancels', async () => {
    const { v } = await setup();
    const sell = (body: object, key = alice) =>
      signedSend(v, key, '/marketplace/order', { type: 'sell', token: 'PTM', pubkey: hex(key), ...body });
    const a1 = (await sell({ amount: '10', price: '0.06' })).json();
    const a2 = (await sell({ amount: '10', price: '0.05' })).json();
    const a3 = (await sell({ amount: '10', price: '0.05' })).json();
    expect(a1).toMatchObject({ status: 'open', filled_amount: '0', fills: [] });
    expect(await available(v, alice, 'PTM')).toBe('970');
    const escrowed = (await v.inject(`/balances/${hex(alice)}`)).json().balances[0];
    expect(escrowed).toMatchObject({ in_orders: '30', total: '1000' });

    // Bob buys 15 at up to 0.06: a2 (0.05, older) fully, then a3 (0.05) for 5.
    const buy = await signedSend(v, bob, '/marketplace/order', {
      type: 'buy',
      token: 'PTM',
      amount: '15',
      price: '0.06',
      pubkey: hex(bob),
    });
    expect(buy.statusCode, buy.body).toBe(200);
    expect(buy.json()).toMatchObject({
      status: 'filled',
      filled_amount: '15',
      fills: [
        { counter_order_id: a2.order_id, amount: '10', price: '0.05' },
        { counter_order_id: a3.order_id, amount: '5', price: '0.05' },
      ],
    });
    // Paid 15 * 0.05 = 0.75 USDC; the escrow at 0.06 (0.9) was returned beyond that.
    expect(await available(v, bob, 'USDC')).toBe('999.25');
    expect(await available(v, bob, 'PTM')).toBe('1015');
    expect(await available(v, alice, 'USDC')).toBe('1000.75');

    const book = (await v.inject('/marketplace/orders?token=PTM&type=sell')).json().orders;
    expect(
      book.map((o: { id: string; remaining: string; status: string }) => [o.id, o.remaining, o.status]),
    ).toEqual([
      [a1.order_id, '10', 'open'],
      [a3.order_id, '5', 'partially_filled'],
    ]);

    const stolen = await signedSend(v, bob, '/marketplace/cancel', {
      order_id: a3.order_id,
      pubkey: hex(bob),
    });
    expect([stolen.statusCode, stolen.json().code]).toEqual([404, 'order_not_found']);
    const cancelled = (
      await signedSend(v, alice, '/marketplace/cancel', { order_id: a3.order_id, pubkey: hex(alice) })
    ).json();
    expect(cancelled).toMatchObject({
      status: 'cancelled',
      filled: '5',
      returned: { token: 'PTM', amount: '5' },
    });
    const twice = await signedSend(v, alice, '/marketplace/cancel', {
      order_id: a3.order_id,
      pubkey: hex(alice),
    });
    expect([twice.statusCode, twice.json().code]).toEqual([409, 'order_not_open']);
    expect(await available(v, alice, 'PTM')).toBe('975');
    await conserved(v);
  });

  it('rests a buy that does not cross, fills it later as a maker, and refuses unsupported markets', async () => {
    const { v } = await setup();
    const bid = (
      await signedSend(v, bob, '/marketplace/order', {
        type: 'buy',
        token: 'PTM',
        amount: '3',
        price: '0.1',
        pubkey: hex(bob),
      })
    ).json();
    expect(bid.status).toBe('open');
    expect(await available(v, bob, 'USDC')).toBe('999.7');
    const ask = (
      await signedSend(v, alice, '/marketplace/order', {
        type: 'sell',
        token: 'PTM',
        amount: '5',
        price: '0.09',
        pubkey: hex(alice),
      })
    ).json();
    expect(ask).toMatchObject({
      status: 'partially_filled',
      filled_amount: '3',
      fills: [{ counter_order_id: bid.order_id, price: '0.1' }],
    });
    expect(await available(v, alice, 'USDC')).toBe('1000.3');
    const usdc = await signedSend(v, bob, '/marketplace/order', {
      type: 'buy',
      token: 'USDC',
      amount: '3',
      price: '1',
      pubkey: hex(bob),
    });
    expect(usdc.json().code).toBe('market_unsupported');
    const sol = await signedSend(v, bob, '/marketplace/order', {
      type: 'buy',
      token: 'PTM',
      amount: '3',
      price: '1',
      quote_token: 'SOL',
      pubkey: hex(bob),
    });
    expect(sol.json().code).toBe('market_unsupported');
    expect(quoteValueFloor(parseAmount('3', 'PTM'), parsePrice('0.1'), 9, 6)).toBe(300_000n);
    await conserved(v);
  });
});
