import {
  formatAmount,
  MARKET_ACCOUNT,
  MARKET_MIN_ORDER_VALUE,
  MARKET_ROUNDING_ACCOUNT,
  MAX_FILLS_PER_ORDER,
  parseAmount,
  parsePrice,
  quoteValueCeil,
} from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import type { Validator } from '../src/app.js';
import { openStorage } from '../src/store/open.js';
import type { OrderRecord, Storage, StorageTx } from '../src/store/types.js';
import { conservation, genesisWith, hex, manualClock, signedSend } from './economy-helpers.js';
import { testKey, testValidator } from './helpers.js';

/**
 * The marketplace on an open network (issue 21): dust cannot freeze matching, rounding cannot
 * be farmed by whoever chooses the sizes, and one placement does a bounded amount of work.
 */

const victim = testKey('market-victim');
const attacker = testKey('market-attacker');
const taker = testKey('market-taker');
const bidder = testKey('market-bidder');

const GENESIS = genesisWith([
  { key: victim, token: 'PTM', amount: '1000' },
  { key: victim, token: 'USDC', amount: '1000' },
  { key: attacker, token: 'PTM', amount: '1000' },
  { key: attacker, token: 'USDC', amount: '1000' },
  { key: taker, token: 'PTM', amount: '1000' },
  { key: taker, token: 'USDC', amount: '1000' },
  { key: bidder, token: 'USDC', amount: '1000' },
]);

type Key = typeof victim;

function order(v: Validator, key: Key, type: 'buy' | 'sell', amount: string, price: string) {
  return signedSend(v, key, '/marketplace/order', { type, token: 'PTM', amount, price, pubkey: hex(key) });
}

async function balance(v: Validator, account: string, token: string): Promise<bigint> {
  return v.context.storage.read((tx) => tx.ledger.balance(account, token));
}

/**
 * Rests an order straight in the storage, escrow included, as an older validator (before the
 * minimum order value) could have left it: no matching.
 */
async function legacyOrder(
  v: Validator,
  key: Key,
  side: 'buy' | 'sell',
  amount: bigint,
  price: bigint,
): Promise<string> {
  return v.context.storage.transaction(async (tx: StorageTx) => {
    const serial = await tx.economy.orders.nextSerial();
    const now = Math.floor(v.context.now() / 1000);
    const escrow = side === 'sell' ? amount : quoteValueCeil(amount, price, 9, 6);
    const token = side === 'sell' ? 'PTM' : 'USDC';
    const record: OrderRecord = {
      id: `o-${serial}`,
      serial,
      pubkey: hex(key),
      side,
      token: 'PTM',
      quoteToken: 'USDC',
      price,
      amount,
      filled: 0n,
      escrow,
      status: 'open',
      createdAt: now,
      closedAt: null,
    };
    await tx.ledger.apply([
      { type: 'order', pubkey: hex(key), token, amount: -escrow, timestamp: now, ref: record.id },
      { type: 'order', pubkey: MARKET_ACCOUNT, token, amount: escrow, timestamp: now, ref: record.id },
    ]);
    await tx.economy.orders.insert(record);
    return record.id;
  });
}

async function conserved(v: Validator): Promise<void> {
  const { supply, issued } = await conservation(v);
  expect(supply).toEqual(issued);
}

describe('marketplace: dust', () => {
  it('refuses the two dust orders of the freeze attack with order_below_minimum', async () => {
    const v = await testValidator({ now: manualClock().now, genesis: GENESIS });
    const sell = await order(v, attacker, 'sell', '0.000000001', '0.000000000000000001');
    expect(sell.statusCode, sell.body).toBe(422);
    expect(sell.json()).toMatchObject({
      code: 'order_below_minimum',
      details: { minimum_value: '0.01', value: '0', quote_token: 'USDC' },
    });
    const buy = await order(v, attacker, 'buy', '0.000000001', '999');
    expect(buy.statusCode).toBe(422);
    expect(buy.json()).toMatchObject({ code: 'order_below_minimum', details: { value: '0' } });
    // Just at the minimum: 0.2 PTM at 0.05 is worth 0.01 USDC.
    expect((await order(v, attacker, 'sell', '0.2', '0.05')).json()).toMatchObject({ status: 'open' });
    expect((await order(v, attacker, 'sell', '0.199999999', '0.05')).statusCode).toBe(422);
    await conserved(v);
  });

  it('keeps matching with dust resting on both sides (orders left by an older validator)', async () => {
    const v = await testValidator({ now: manualClock().now, genesis: GENESIS });
    const ask = (await order(v, victim, 'sell', '9', '0.05')).json();
    expect(ask.status).toBe('open');
    // The attack of the issue, as it would stand in a book written before the minimum.
    await legacyOrder(v, attacker, 'sell', 1n, 1n);
    await legacyOrder(v, attacker, 'buy', 1n, parsePrice('999'));

    // A buy of 1 @0.06 fills the dust ask (1 minor unit at 10^-18) and moves on to the victim's.
    const buy = await order(v, taker, 'buy', '1', '0.06');
    expect(buy.statusCode, buy.body).toBe(200);
    expect(buy.json()).toMatchObject({ status: 'filled', filled_amount: '1' });
    expect(buy.json().fills.map((f: { amount: string; price: string }) => [f.amount, f.price])).toEqual([
      ['0.000000001', '0.000000000000000001'],
      ['0.999999999', '0.05'],
    ]);
    // A sell of 1 @0.01 fills the dust bid at 999 and then the best real bid.
    const bid = (await order(v, bidder, 'buy', '2', '0.04')).json();
    expect(bid.status).toBe('open');
    const sell = await order(v, taker, 'sell', '1', '0.01');
    expect(sell.json()).toMatchObject({ status: 'filled', filled_amount: '1' });
    expect(sell.json().fills.map((f: { price: string }) => f.price)).toEqual(['999', '0.04']);

    // Nothing crossed is left: the best bid is below the best ask.
    const book = (await v.inject('/marketplace/orders?token=PTM')).json().orders as {
      type: string;
      price: string;
      remaining: string;
    }[];
    const bids = book.filter((o) => o.type === 'buy').map((o) => Number(o.price));
    const asks = book.filter((o) => o.type === 'sell').map((o) => Number(o.price));
    expect(Math.max(...bids)).toBeLessThan(Math.min(...asks));
    await conserved(v);
  });

  it('returns a remainder worth less than the minimum instead of resting it', async () => {
    const v = await testValidator({ now: manualClock().now, genesis: GENESIS });
    const ask = (await order(v, victim, 'sell', '10', '0.05')).json();
    // 9.9 PTM bought: the 0.1 PTM left is worth 0.005 USDC at 0.05, below 0.01.
    const buy = (await order(v, taker, 'buy', '9.9', '0.05')).json();
    expect(buy).toMatchObject({ status: 'filled', filled_amount: '9.9' });
    const cancel = await signedSend(v, victim, '/marketplace/cancel', {
      order_id: ask.order_id,
      pubkey: hex(victim),
    });
    expect(cancel.json()).toMatchObject({ code: 'order_not_open', details: { status: 'cancelled' } });
    expect(await balance(v, hex(victim), 'PTM')).toBe(parseAmount('990.1', 'PTM'));
    expect((await v.inject(`/marketplace/orders?pubkey=${hex(victim)}`)).json().orders).toEqual([]);
    // The same for the incoming order: 10 wanted at 0.05, 9.9 available, 0.1 left is dust.
    const ask2 = (await order(v, victim, 'sell', '9.9', '0.05')).json();
    expect(ask2.status).toBe('open');
    const buy2 = (await order(v, taker, 'buy', '10', '0.05')).json();
    expect(buy2).toMatchObject({ status: 'cancelled', filled_amount: '9.9' });
    expect(await balance(v, MARKET_ACCOUNT, 'USDC')).toBe(0n);
    expect(await balance(v, MARKET_ACCOUNT, 'PTM')).toBe(0n);
    await conserved(v);
  });
});

describe('marketplace: rounding cannot be farmed', () => {
  // An odd price, so that almost every fill has a fraction of a minor unit.
  const PRICE = '0.0512345678901';
  const p = parsePrice(PRICE);
  /** The exact value of q PTM minor units at p, in USDC minor units x 10^21. */
  const exact = (q: bigint) => q * p;
  const UNIT = 10n ** 21n;

  it('a taker buying a resting sell in slices pays at least the exact value; the seller receives it less under 1 unit', async () => {
    const v = await testValidator({ now: manualClock().now, genesis: GENESIS });
    const ask = (await order(v, victim, 'sell', '100', PRICE)).json();
    expect(ask.status).toBe('open');
    const usdc0 = await balance(v, hex(taker), 'USDC');
    // 200 slices, each just above the minimum order value (0.2 PTM is worth 0.0102 USDC).
    const slice = parseAmount('0.195187001', 'PTM');
    expect((slice * p) / UNIT).toBeGreaterThanOrEqual(MARKET_MIN_ORDER_VALUE);
    for (let i = 0; i < 200; i++) {
      const res = await order(v, taker, 'buy', formatAmount(slice, 'PTM'), PRICE);
      expect(res.json().status, res.body).toBe('filled');
    }
    const filled = slice * 200n;
    const paid = usdc0 - (await balance(v, hex(taker), 'USDC'));
    const received = (await balance(v, hex(victim), 'USDC')) - parseAmount('1000', 'USDC');
    // The seller: exactly floor of the exact value of everything it sold (its one rounding).
    expect(received).toBe(exact(filled) / UNIT);
    // The slicing buyer: never below the exact value of what it bought.
    expect(paid * UNIT).toBeGreaterThanOrEqual(exact(filled));
    // What the buyer paid beyond the seller's receipt is in the rounding account.
    expect(await balance(v, MARKET_ROUNDING_ACCOUNT, 'USDC')).toBe(paid - received);
    await conserved(v);
  });

  it('a seller filling a resting buy in slices receives at most the exact value', async () => {
    const v = await testValidator({ now: manualClock().now, genesis: GENESIS });
    const bid = (await order(v, victim, 'buy', '100', PRICE)).json();
    expect(bid.status).toBe('open');
    const usdc0 = await balance(v, hex(taker), 'USDC');
    // Each slice is worth just over the minimum at its own (lower) limit; it fills at the bid's.
    const slice = parseAmount('0.200000007', 'PTM');
    for (let i = 0; i < 100; i++) {
      const res = await order(v, taker, 'sell', formatAmount(slice, 'PTM'), '0.0512');
      expect(res.json().status, res.body).toBe('filled');
    }
    const filled = slice * 100n;
    const received = (await balance(v, hex(taker), 'USDC')) - usdc0;
    // Never more than the exact value; less than 2 units under it per order the slicer placed.
    expect(received * UNIT).toBeLessThanOrEqual(exact(filled));
    expect(exact(filled) - received * UNIT).toBeLessThan(100n * 2n * UNIT);
    // The resting buyer paid exactly the ceiling of the exact value of its fills.
    const open = (await v.inject(`/marketplace/orders?pubkey=${hex(victim)}`)).json().orders[0];
    expect(open.filled).toBe(formatAmount(filled, 'PTM'));
    const escrowLeft = await balance(v, MARKET_ACCOUNT, 'USDC');
    const paid = quoteValueCeil(parseAmount('100', 'PTM'), p, 9, 6) - escrowLeft;
    expect(paid).toBe((exact(filled) + UNIT - 1n) / UNIT);
    await conserved(v);
  });
});

/** A storage that records, per transaction, how many fills it made. */
async function countingStorage(): Promise<{ storage: Storage; transactions: { fills: number }[] }> {
  const inner = await openStorage({ dataDir: ':memory:' });
  const transactions: { fills: number }[] = [];
  const storage: Storage = {
    location: inner.location,
    read: (fn) => inner.read(fn),
    listen: (channel, handler) => inner.listen(channel, handler),
    close: () => inner.close(),
    transaction: (fn) =>
      inner.transaction((tx) => {
        const record = { fills: 0 };
        transactions.push(record);
        const orders = new Proxy(tx.economy.orders, {
          get(target, name, receiver) {
            const value = Reflect.get(target, name, receiver);
            if (name !== 'insertFill' || typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              record.fills++;
              return value.apply(target, args);
            };
          },
        });
        const economy = new Proxy(tx.economy, {
          get: (target, name, receiver) => (name === 'orders' ? orders : Reflect.get(target, name, receiver)),
        });
        return fn(
          new Proxy(tx, {
            get: (target, name, receiver) =>
              name === 'economy' ? economy : Reflect.get(target, name, receiver),
          }),
        );
      }),
  };
  return { storage, transactions };
}

describe('marketplace: the work of one placement is bounded', () => {
  it(`a buy crossing 1,000 resting sells makes at most ${MAX_FILLS_PER_ORDER} fills in its transaction; other requests wait behind no more`, async () => {
    const { storage, transactions } = await countingStorage();
    const v = await testValidator({ now: manualClock().now, genesis: GENESIS, storage });
    // 1,000 sells of 0.2 PTM at 0.05 (the minimum each), resting (written straight to storage).
    await v.context.storage.transaction(async (tx) => {
      const now = Math.floor(v.context.now() / 1000);
      for (let i = 0; i < 1000; i++) {
        const serial = await tx.economy.orders.nextSerial();
        const amount = parseAmount('0.2', 'PTM');
        const id = `o-${serial}`;
        await tx.ledger.apply([
          { type: 'order', pubkey: hex(attacker), token: 'PTM', amount: -amount, timestamp: now, ref: id },
          { type: 'order', pubkey: MARKET_ACCOUNT, token: 'PTM', amount, timestamp: now, ref: id },
        ]);
        await tx.economy.orders.insert({
          id,
          serial,
          pubkey: hex(attacker),
          side: 'sell',
          token: 'PTM',
          quoteToken: 'USDC',
          price: parsePrice('0.05'),
          amount,
          filled: 0n,
          escrow: amount,
          status: 'open',
          createdAt: now,
          closedAt: null,
        });
      }
    });
    transactions.length = 0;
    // The big buy and, at the same time, a transfer of someone else.
    const [buy, transfer] = await Promise.all([
      order(v, taker, 'buy', '200', '0.05'),
      signedSend(v, victim, '/transfer', {
        from: hex(victim),
        to: hex(attacker),
        token: 'USDC',
        amount: '1',
      }),
    ]);
    expect(transfer.statusCode, transfer.body).toBe(200);
    expect(buy.statusCode, buy.body).toBe(200);
    expect(buy.json()).toMatchObject({ status: 'partially_filled', filled_amount: '20' });
    expect(buy.json().fills).toHaveLength(MAX_FILLS_PER_ORDER);
    // No transaction made more fills than the bound: the most any request waited behind.
    expect(Math.max(...transactions.map((t) => t.fills))).toBe(MAX_FILLS_PER_ORDER);
    expect(transactions.filter((t) => t.fills > 0)).toHaveLength(1);
    // The rest of the buy rests; the owner's next placement continues where it stopped.
    const next = await order(v, taker, 'buy', '20', '0.05');
    expect(next.json()).toMatchObject({ status: 'filled', filled_amount: '20' });
    await conserved(v);
  });

  it('takes its bound from the marketMaxFills setting', async () => {
    const v = await testValidator({ now: manualClock().now, genesis: GENESIS, marketMaxFills: 3 });
    for (let i = 0; i < 5; i++) await order(v, attacker, 'sell', '1', '0.05');
    const buy = (await order(v, taker, 'buy', '5', '0.05')).json();
    expect(buy).toMatchObject({ status: 'partially_filled', filled_amount: '3' });
    expect(buy.fills).toHaveLength(3);
    await conserved(v);
  });
});
