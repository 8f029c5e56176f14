import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { targetFromDifficulty } from '../src/hexchain/target.js';
import {
  PPLNS_SCORE_SCALE,
  pplnsScore,
  pplnsScoreWindow,
  pplnsSplit,
  pplnsWeights,
  pplnsWindow,
  scoreToDifficulty,
} from '../src/pool/pplns.js';
import {
  clampShareDifficulty,
  initialShareDifficulty,
  shareDifficultyBounds,
  shareTargetFromDifficulty,
} from '../src/pool/share.js';
import { vardiffDue, vardiffStep } from '../src/pool/vardiff.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);

describe('share difficulty', () => {
  it('is bounded by [16, block difficulty] and starts at one share per interval of the device type', () => {
    expect(shareDifficultyBounds(1000n)).toEqual({ min: 16n, max: 1000n });
    expect(clampShareDifficulty(3n, 1000n)).toBe(16n);
    expect(clampShareDifficulty(5000n, 1000n)).toBe(1000n);
    // One share per interval at the device type's nominal rate, inside [16, D].
    expect(initialShareDifficulty('native', 10_000n, 1n << 40n)).toBe(20_000_000n);
    expect(initialShareDifficulty('esp8266', 10_000n, 1n << 40n)).toBe(400_000n);
    expect(initialShareDifficulty('esp32', 10_000n, 1n << 20n)).toBe(1n << 20n);
    expect(initialShareDifficulty(undefined, 10_000n, 1n << 40n)).toBe(400_000n);
    expect(initialShareDifficulty('native', 1n, 1n << 40n)).toBe(2000n);
    expect(initialShareDifficulty('esp8266', 0n, 64n)).toBe(16n);
    expect(shareTargetFromDifficulty(4096n)).toBe(targetFromDifficulty(4096n));
  });
});

describe('vardiffStep', () => {
  const base = { targetIntervalMs: 10_000n, min: 16n, max: 1n << 40n };
  it('keeps a member on pace, raises a fast one and lowers a slow one', () => {
    // 8 shares in 80 s at 1000: on pace.
    expect(vardiffStep({ ...base, difficulty: 1000n, shares: 8, elapsedMs: 80_000n })).toBe(1000n);
    // 8 shares in 40 s: twice too fast.
    expect(vardiffStep({ ...base, difficulty: 1000n, shares: 8, elapsedMs: 40_000n })).toBe(2000n);
    // 2 shares in 40 s: half the pace.
    expect(vardiffStep({ ...base, difficulty: 1000n, shares: 2, elapsedMs: 40_000n })).toBe(500n);
  });
  it('moves at most x4 per step, / 4 without shares, inside the bounds', () => {
    expect(vardiffStep({ ...base, difficulty: 1000n, shares: 8, elapsedMs: 1n })).toBe(4000n);
    expect(vardiffStep({ ...base, difficulty: 1000n, shares: 1, elapsedMs: 10_000_000n })).toBe(250n);
    expect(vardiffStep({ ...base, difficulty: 1000n, shares: 0, elapsedMs: 40_000n })).toBe(250n);
    expect(vardiffStep({ ...base, difficulty: 20n, shares: 0, elapsedMs: 40_000n })).toBe(16n);
    expect(vardiffStep({ ...base, max: 1500n, difficulty: 1000n, shares: 8, elapsedMs: 1_000n })).toBe(1500n);
    expect(vardiffStep({ ...base, difficulty: 1000n, shares: 8, elapsedMs: 0n })).toBe(4000n);
  });
  it('is due after 8 shares or 4 intervals', () => {
    expect(vardiffDue({ shares: 8, elapsedMs: 0n, targetIntervalMs: 10_000n })).toBe(true);
    expect(vardiffDue({ shares: 7, elapsedMs: 39_999n, targetIntervalMs: 10_000n })).toBe(false);
    expect(vardiffDue({ shares: 0, elapsedMs: 40_000n, targetIntervalMs: 10_000n })).toBe(true);
  });
  it('always stays inside [old / 4, old * 4] and the bounds', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 16n, max: 1n << 40n }),
        fc.integer({ min: 0, max: 1000 }),
        fc.bigInt({ min: -5n, max: 1n << 32n }),
        (difficulty, shares, elapsedMs) => {
          const next = vardiffStep({ ...base, difficulty, shares, elapsedMs });
          expect(next >= 16n && next <= base.max).toBe(true);
          expect(next >= difficulty / 4n || next === 16n).toBe(true);
          expect(next <= difficulty * 4n).toBe(true);
        },
      ),
    );
  });
});

describe('pplnsWeights', () => {
  it('counts the newest shares up to the window, the oldest one partly', () => {
    const shares = [
      { pubkey: A, weight: 100n },
      { pubkey: B, weight: 300n },
      { pubkey: A, weight: 200n },
      { pubkey: C, weight: 500n },
      { pubkey: C, weight: 999n },
    ];
    expect([...pplnsWeights(shares, 1000n)]).toEqual([
      [A, 300n],
      [B, 300n],
      [C, 400n],
    ]);
    expect([...pplnsWeights(shares, 50n)]).toEqual([[A, 50n]]);
    expect([...pplnsWeights(shares, 10_000n)].reduce((s, [, w]) => s + w, 0n)).toBe(2099n);
    expect(pplnsWindow(1000n, 2n)).toBe(2000n);
  });

  it('scores a share by the blocks its work was worth: S / D in fixed point', () => {
    expect(pplnsScore(256n, 256n)).toBe(PPLNS_SCORE_SCALE);
    expect(pplnsScore(16n, 64n)).toBe(PPLNS_SCORE_SCALE / 4n);
    // The same share difficulty is worth twice as much at half the block difficulty.
    expect(pplnsScore(128n, 512n)).toBe(2n * pplnsScore(128n, 1024n));
    expect(pplnsScoreWindow(2n)).toBe(2n * PPLNS_SCORE_SCALE);
    expect(scoreToDifficulty(pplnsScore(300n, 1000n), 1000n)).toBe(299n); // floor twice
    expect(scoreToDifficulty(pplnsScore(256n, 1024n), 1024n)).toBe(256n);
    expect(() => pplnsScore(0n, 10n)).toThrow(RangeError);
  });
});

describe('pplnsSplit', () => {
  it('the worked example of docs/protocol.md', () => {
    const weights = new Map([
      [A, 300n],
      [B, 300n],
      [C, 400n],
    ]);
    const split = pplnsSplit({ reward: 1_000_000_000n, feeBps: 100n, weights, finder: C });
    expect(split.fee).toBe(10_000_000n);
    expect(split.payouts).toEqual([
      { pubkey: A, amount: 297_000_000n },
      { pubkey: B, amount: 297_000_000n },
      { pubkey: C, amount: 396_000_000n },
    ]);
    expect(split.remainder).toBe(0n);
  });
  it('the worked example of docs/protocol.md 4.15 with the real scores', () => {
    const shares = (
      [
        [A, 100n],
        [B, 300n],
        [A, 200n],
        [C, 500n],
        [C, 999n],
      ] as const
    ).map(([pubkey, s]) => ({ pubkey, weight: pplnsScore(s, 500n) }));
    const weights = pplnsWeights(shares, pplnsScoreWindow(2n));
    expect([...weights.values()]).toEqual([
      11_068_046_444_225_730_969n,
      11_068_046_444_225_730_969n,
      14_757_395_258_967_641_294n,
    ]);
    const split = pplnsSplit({ reward: 1_000_000_000n, feeBps: 100n, weights, finder: A });
    expect(split.fee).toBe(10_000_000n);
    expect(split.payouts).toEqual([
      { pubkey: A, amount: 297_000_001n },
      { pubkey: B, amount: 296_999_999n },
      { pubkey: C, amount: 396_000_000n },
    ]);
  });
  it('gives the rounding remainder to the finder', () => {
    const weights = new Map([
      [A, 1n],
      [B, 1n],
      [C, 1n],
    ]);
    const split = pplnsSplit({ reward: 100n, feeBps: 0n, weights, finder: B });
    expect(split.payouts).toEqual([
      { pubkey: A, amount: 33n },
      { pubkey: B, amount: 34n },
      { pubkey: C, amount: 33n },
    ]);
    expect(split.remainder).toBe(1n);
  });
  it('pays the finder everything net of the fee when the window is empty', () => {
    const split = pplnsSplit({ reward: 1000n, feeBps: 250n, weights: new Map(), finder: A });
    expect(split).toEqual({ fee: 25n, payouts: [{ pubkey: A, amount: 975n }], remainder: 975n });
  });
  it('conserves the reward exactly: payouts + fee == reward', () => {
    const key = fc.constantFrom(A, B, C, 'd'.repeat(64));
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 20n }),
        fc.bigInt({ min: 0n, max: 10_000n }),
        fc.array(fc.tuple(key, fc.bigInt({ min: 0n, max: 1n << 60n })), { maxLength: 6 }),
        key,
        (reward, feeBps, entries, finder) => {
          const weights = new Map(entries);
          const split = pplnsSplit({ reward, feeBps, weights, finder });
          const sum = split.payouts.reduce((s, p) => s + p.amount, 0n);
          expect(sum + split.fee).toBe(reward);
          expect(
            split.remainder < BigInt(Math.max(weights.size, 1)) ||
              weights.size === 0 ||
              [...weights.values()].every((w) => w === 0n),
          ).toBe(true);
          for (const p of split.payouts) expect(p.amount > 0n).toBe(true);
        },
      ),
    );
  });
  it('refuses a fee outside [0, 100 %]', () => {
    expect(() => pplnsSplit({ reward: 1n, feeBps: 10_001n, weights: new Map(), finder: A })).toThrow(
      RangeError,
    );
  });
});
