import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  accruedYield,
  crosses,
  effectivePrice,
  lockExpiry,
  lockTerms,
  mulDivCeil,
  mulDivFloor,
  type OrderProgress,
  parsePrice,
  priceImpact,
  quoteValueCeil,
  quoteValueFloor,
  SECONDS_PER_YEAR,
  settledQuote,
  settleFill,
  swapOut,
  unlockProblem,
  unstakePenalty,
  VAULT_MAX_HORIZON_S,
  yieldDue,
  yieldPayable,
} from '../src/index.js';

const big = (max: bigint) => fc.bigInt({ min: 1n, max });
const U64 = (1n << 64n) - 1n;

describe('mulDiv', () => {
  it('floor and ceil bracket the exact quotient and differ by one only when it is not exact', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64 }), fc.bigInt({ min: 0n, max: U64 }), big(U64), (a, b, d) => {
        const f = mulDivFloor(a, b, d);
        const c = mulDivCeil(a, b, d);
        expect(f * d <= a * b && a * b < (f + 1n) * d).toBe(true);
        expect(c - f).toBe((a * b) % d === 0n ? 0n : 1n);
      }),
    );
  });
});

describe('constant-product swaps', () => {
  it('never lowers k, rounds the output down and the fee up, and conserves the input', () => {
    fc.assert(
      fc.property(
        big(U64),
        big(U64),
        big(U64),
        fc.bigInt({ min: 0n, max: 9_999n }),
        (rin, rout, amount, fee) => {
          const q = swapOut(rin, rout, amount, fee);
          expect(q.fee + q.netIn).toBe(amount);
          expect(q.fee * 10_000n >= amount * fee).toBe(true);
          expect((q.fee - 1n) * 10_000n < amount * fee).toBe(true);
          expect(q.amountOut < rout).toBe(true);
          expect(q.newReserveIn * q.newReserveOut >= rin * rout).toBe(true);
          // The output is the largest that keeps k: one unit more would lower it.
          expect((rin + q.netIn) * (rout - q.amountOut - 1n) < rin * rout).toBe(true);
        },
      ),
    );
  });

  it('quotes the worked example of docs/economy.md', () => {
    // 100 USDC into 50 000 USDC / 1 000 000 PTM at 0.3 %.
    const q = swapOut(50_000_000_000n, 1_000_000_000_000_000n, 100_000_000n, 30n);
    expect(q).toMatchObject({ fee: 300_000n, netIn: 99_700_000n, amountOut: 1_990_031_876_438n });
    expect(effectivePrice(100_000_000n, q.amountOut, 6, 9)).toBe(19_900_318_764_380_000_000n);
    expect(priceImpact(q, 50_000_000_000n, 1_000_000_000_000_000n)).toBeCloseTo(0.00199, 6);
  });

  it('refuses zero input and empty pools', () => {
    expect(() => swapOut(1n, 1n, 0n, 30n)).toThrow('more than 0');
    expect(() => swapOut(0n, 1n, 1n, 30n)).toThrow('no liquidity');
  });
});

describe('staking', () => {
  it('accrual is monotonic in time, additive across claims and never above the exact value', () => {
    fc.assert(
      fc.property(
        big(U64),
        fc.constantFrom(0, 7, 30),
        fc.nat(10 * 365 * 86_400),
        fc.nat(10 * 365 * 86_400),
        (p, days, t1, dt) => {
          const rate = lockTerms(days).yieldBps;
          const a1 = accruedYield(p, rate, 0, t1);
          const a2 = accruedYield(p, rate, 0, t1 + dt);
          expect(a2 >= a1).toBe(true);
          expect(a2 * 10_000n * SECONDS_PER_YEAR <= p * rate * BigInt(t1 + dt)).toBe(true);
          // Claiming at t1 then at t1 + dt pays exactly what one claim at t1 + dt pays.
          const first = yieldDue({ principal: p, rateBps: rate, createdAt: 0, yieldPaid: 0n }, t1);
          const second = yieldDue({ principal: p, rateBps: rate, createdAt: 0, yieldPaid: first }, t1 + dt);
          expect(first + second).toBe(a2);
        },
      ),
    );
  });

  it('pays at most the reserve, and charges the early-unstake penalty only before expiry, rounded up', () => {
    fc.assert(
      fc.property(
        big(U64),
        fc.bigInt({ min: 0n, max: U64 }),
        fc.constantFrom(0, 7, 30),
        fc.nat(60 * 86_400),
        (due, reserve, days, at) => {
          const paid = yieldPayable(due, reserve);
          expect(paid <= due && paid <= reserve && (paid === due || paid === reserve)).toBe(true);
          const t = lockTerms(days);
          const expiry = lockExpiry(0, days);
          const penalty = unstakePenalty(due, t.penaltyBps, expiry, at);
          if (at >= expiry) expect(penalty).toBe(0n);
          else expect(penalty).toBe(mulDivCeil(due, t.penaltyBps, 10_000n));
        },
      ),
    );
    expect(() => lockTerms(14)).toThrow('0, 7 or 30');
  });
});

describe('marketplace values', () => {
  it('escrow at the limit covers every sequence of fills at prices at or better than it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(big(10n ** 12n), fc.bigInt({ min: 1n, max: 10n ** 18n })), {
          minLength: 1,
          maxLength: 20,
        }),
        fc.bigInt({ min: 0n, max: 10n ** 18n }),
        (fills, extra) => {
          const prices = fills.map(([, price]) => price).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
          const limit = prices[prices.length - 1]! + extra;
          const total = fills.reduce((s, [q]) => s + q, 0n);
          const escrow = quoteValueCeil(total, limit, 9, 6);
          const paid = fills.reduce((s, [q, price]) => s + quoteValueFloor(q, price, 9, 6), 0n);
          expect(paid <= escrow).toBe(true);
          expect(fills.every(([, price]) => crosses('buy', limit, price))).toBe(true);
        },
      ),
    );
    expect(quoteValueFloor(3_000_000_000n, parsePrice('0.1'), 9, 6)).toBe(300_000n);
    expect(crosses('sell', parsePrice('0.1'), parsePrice('0.09'))).toBe(false);
  });

  it('rounds once per order: however fills are sliced, a seller never gets more and a buyer never pays less than the exact value', () => {
    // One incoming order (limit `limit`) against resting orders at prices at or better than its
    // limit, then resting orders taking it as a maker. Exact values are kept as q x p (10^21
    // units of a USDC minor unit at 9 token decimals).
    const UNIT = 10n ** 21n;
    fc.assert(
      fc.property(
        fc.constantFrom('buy' as const, 'sell' as const),
        fc.bigInt({ min: 1n, max: 10n ** 20n }),
        fc.array(fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 10n }), fc.bigInt({ min: 0n, max: 10n ** 18n })), {
          minLength: 1,
          maxLength: 30,
        }),
        (side, limit, fills) => {
          let incoming: OrderProgress = { side, price: limit, filled: 0n, gain: 0n };
          let exactIncoming = 0n;
          let exactMakers = 0n;
          let movedIncoming = 0n;
          let movedMakers = 0n;
          let rounding = 0n;
          for (const [q, offset] of fills) {
            // A price at or better than the limit for the incoming order.
            const price = side === 'buy' ? (limit > offset ? limit - offset : 1n) : limit + offset;
            const maker: OrderProgress = {
              side: side === 'buy' ? 'sell' : 'buy',
              price,
              filled: 0n,
              gain: 0n,
            };
            const fill = settleFill(incoming, maker, q, 9, 6);
            incoming = fill.incoming;
            exactIncoming += q * price;
            exactMakers += q * price;
            movedIncoming += side === 'buy' ? fill.buyerPays : fill.sellerReceives;
            movedMakers += side === 'buy' ? fill.sellerReceives : fill.buyerPays;
            rounding += fill.rounding;
            expect(fill.sellerReceives >= 0n).toBe(true);
            expect(fill.buyerPays >= -1n).toBe(true);
            // The rounding account never owes anything.
            expect(rounding >= 0n).toBe(true);
            // The incoming order's total is its settledQuote, within 2 units of exact, on its side.
            expect(movedIncoming).toBe(settledQuote(incoming, 9, 6));
            if (side === 'buy') {
              expect(movedIncoming * UNIT >= exactIncoming).toBe(true);
              expect(movedIncoming * UNIT < exactIncoming + 2n * UNIT).toBe(true);
            } else {
              expect(movedIncoming * UNIT <= exactIncoming).toBe(true);
              expect(movedIncoming * UNIT > exactIncoming - 2n * UNIT).toBe(true);
            }
          }
          expect(movedIncoming - movedMakers).toBe(side === 'buy' ? rounding : -rounding);
          expect(exactMakers).toBe(exactIncoming);
        },
      ),
    );
  });

  it('a resting order filled in many slices moves the rounding of one fill', () => {
    // A sell of 100 PTM at 0.0512345678901 taken 0.195187001 PTM at a time, 200 times.
    const price = parsePrice('0.0512345678901');
    let maker: OrderProgress = { side: 'sell', price, filled: 0n, gain: 0n };
    let received = 0n;
    for (let i = 0; i < 200; i++) {
      const taker: OrderProgress = { side: 'buy', price, filled: 0n, gain: 0n };
      const fill = settleFill(taker, maker, 195_187_001n, 9, 6);
      expect(fill.buyerPays).toBe(10_001n);
      maker = fill.resting;
      received += fill.sellerReceives;
    }
    // The worked example of docs/economy.md.
    expect(received).toBe(quoteValueFloor(200n * 195_187_001n, price, 9, 6));
    expect(received).toBe(2_000_064n);
  });
});

describe('vaults', () => {
  it('accepts unlock times in (now, now + 5 years]', () => {
    expect(unlockProblem(100, 100)).toContain('not in the future');
    expect(unlockProblem(101, 100)).toBeUndefined();
    expect(unlockProblem(100 + VAULT_MAX_HORIZON_S, 100)).toBeUndefined();
    expect(unlockProblem(101 + VAULT_MAX_HORIZON_S, 100)).toContain('5 years');
  });
});
