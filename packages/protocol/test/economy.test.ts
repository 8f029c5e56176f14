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
  parsePrice,
  priceImpact,
  quoteValueCeil,
  quoteValueFloor,
  SECONDS_PER_YEAR,
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
});

describe('vaults', () => {
  it('accepts unlock times in (now, now + 5 years]', () => {
    expect(unlockProblem(100, 100)).toContain('not in the future');
    expect(unlockProblem(101, 100)).toBeUndefined();
    expect(unlockProblem(100 + VAULT_MAX_HORIZON_S, 100)).toBeUndefined();
    expect(unlockProblem(101 + VAULT_MAX_HORIZON_S, 100)).toContain('5 years');
  });
});
