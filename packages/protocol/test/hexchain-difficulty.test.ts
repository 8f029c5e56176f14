import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex } from '../src/bytes.js';
import {
  BLOCK_INTERVAL_MS_DEFAULT,
  difficultyAfterBlock,
  RETARGET_WINDOW_BLOCKS,
  retarget,
  shouldRetarget,
} from '../src/hexchain/retarget.js';
import {
  expectedHashes,
  hashMeetsTarget,
  MAX_HEX_DIFFICULTY,
  MAX_HEX_TARGET,
  MIN_HEX_DIFFICULTY,
  MIN_HEX_TARGET,
  parseHexDifficulty,
  targetFromDifficulty,
  targetFromHex,
  targetToHex,
} from '../src/hexchain/target.js';
import { thrown } from './helpers.js';

const MAX_UINT256 = 2n ** 256n - 1n;
const difficultyArb = fc.bigInt({ min: MIN_HEX_DIFFICULTY, max: MAX_HEX_DIFFICULTY });
const hashOf = (n: bigint) => fromHex(n.toString(16).padStart(64, '0'));

describe('targetFromDifficulty', () => {
  it('is floor((2^256 - 1) / D)', () => {
    expect(targetToHex(targetFromDifficulty(16n))).toBe(`0${'f'.repeat(63)}`);
    expect(targetToHex(targetFromDifficulty(2n ** 32n))).toBe(`00000000${'f'.repeat(56)}`);
    fc.assert(
      fc.property(difficultyArb, (d) => {
        const t = targetFromDifficulty(d);
        expect(t * d <= MAX_UINT256 && (t + 1n) * d > MAX_UINT256).toBe(true);
      }),
    );
  });

  it('never accepts every hash: D = 16 is the smallest difficulty', () => {
    expect(MAX_HEX_TARGET).toBe(targetFromDifficulty(16n));
    expect(hashMeetsTarget(hashOf(MAX_UINT256), MAX_HEX_TARGET)).toBe(false);
    expect(thrown(() => targetFromDifficulty(15n)).message).toBe(
      'difficulty: expected an integer in [16, 9007199254740991], got 15',
    );
    expect(thrown(() => targetFromDifficulty(2n ** 53n)).code).toBe('invalid_difficulty');
  });

  it('decreases as the difficulty grows', () => {
    fc.assert(
      fc.property(difficultyArb, difficultyArb, (a, b) => {
        if (a < b) expect(targetFromDifficulty(a) >= targetFromDifficulty(b)).toBe(true);
      }),
    );
  });
});

describe('parseHexDifficulty', () => {
  it('accepts safe integers and bigints in range, nothing else', () => {
    expect(parseHexDifficulty(1000)).toBe(1000n);
    expect(parseHexDifficulty(9_007_199_254_740_991)).toBe(MAX_HEX_DIFFICULTY);
    expect(parseHexDifficulty(16n)).toBe(16n);
    expect(thrown(() => parseHexDifficulty(16.5)).message).toBe(
      'difficulty: expected an integer in [16, 9007199254740991], got 16.5',
    );
    expect(thrown(() => parseHexDifficulty('1000')).message).toBe(
      'difficulty: expected an integer in [16, 9007199254740991], got "1000"',
    );
    expect(thrown(() => parseHexDifficulty(0)).code).toBe('invalid_difficulty');
  });
});

describe('target wire form', () => {
  it('round-trips as 64 lowercase hex digits, big-endian', () => {
    fc.assert(
      fc.property(difficultyArb, (d) => {
        const t = targetFromDifficulty(d);
        const hex = targetToHex(t);
        expect(hex).toMatch(/^[0-9a-f]{64}$/);
        expect(BigInt(`0x${hex}`)).toBe(t);
        expect(targetFromHex(hex)).toBe(t);
        expect(targetFromHex(hex.toUpperCase())).toBe(t);
      }),
    );
  });

  it('rejects a wrong length and a target outside the difficulty range', () => {
    expect(thrown(() => targetFromHex('0f')).message).toBe(
      'target: expected 32 bytes (64 hex digits), got 1 bytes',
    );
    const everything = thrown(() => targetFromHex('f'.repeat(64)));
    expect(everything.code).toBe('invalid_target');
    expect(everything.message).toBe(
      `target: expected an integer in [floor((2^256 - 1) / (2^53 - 1)), floor((2^256 - 1) / 16)], got 0x${'f'.repeat(64)}`,
    );
    expect(thrown(() => targetFromHex((MIN_HEX_TARGET - 1n).toString(16).padStart(64, '0'))).code).toBe(
      'invalid_target',
    );
  });
});

describe('hashMeetsTarget', () => {
  it('compares the hash as a big-endian 256-bit integer: valid iff hash <= target', () => {
    fc.assert(
      fc.property(difficultyArb, fc.bigInt({ min: 0n, max: MAX_UINT256 }), (d, h) => {
        const t = targetFromDifficulty(d);
        expect(hashMeetsTarget(hashOf(h), t)).toBe(h <= t);
      }),
    );
    const t = targetFromDifficulty(1000n);
    expect(hashMeetsTarget(hashOf(t), t)).toBe(true);
    expect(hashMeetsTarget(hashOf(t + 1n), t)).toBe(false);
    expect(hashMeetsTarget(hashOf(t - 1n), t)).toBe(true);
  });

  it('answers the same for a target it compared against before (a share and a block target in turn)', () => {
    const share = targetFromDifficulty(16n);
    const block = targetFromDifficulty(4096n);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_UINT256 }), (h) => {
        for (const t of [share, block, share, block]) expect(hashMeetsTarget(hashOf(h), t)).toBe(h <= t);
      }),
    );
    // Out-of-range targets are refused every time, whatever was compared before.
    expect(thrown(() => hashMeetsTarget(hashOf(0n), MAX_HEX_TARGET + 1n)).code).toBe('invalid_target');
    expect(thrown(() => hashMeetsTarget(hashOf(0n), MAX_HEX_TARGET + 1n)).code).toBe('invalid_target');
  });

  it('reads the first byte as the most significant one', () => {
    const t = targetFromDifficulty(256n); // 00ffff...ff
    const low = new Uint8Array(32);
    low[31] = 0xff;
    const high = new Uint8Array(32);
    high[0] = 0x01;
    expect(hashMeetsTarget(low, t)).toBe(true);
    expect(hashMeetsTarget(high, t)).toBe(false);
  });

  it('rejects a hash that is not 32 bytes', () => {
    expect(thrown(() => hashMeetsTarget(new Uint8Array(31), MAX_HEX_TARGET)).message).toBe(
      'hash: expected 32 bytes, got 31',
    );
  });

  it('expects D hashes per block', () => {
    expect(expectedHashes(1000n)).toBe(1000n);
  });
});

describe('retarget', () => {
  const W = RETARGET_WINDOW_BLOCKS;
  const I = BLOCK_INTERVAL_MS_DEFAULT;

  it('keeps the difficulty when the window took exactly window * interval', () => {
    expect(retarget(1000n, 120_000n, W, I)).toBe(1000n);
  });

  it('scales by expected / actual, rounding down', () => {
    expect(retarget(1000n, 60_000n, W, I)).toBe(2000n);
    expect(retarget(1000n, 240_000n, W, I)).toBe(500n);
    expect(retarget(1000n, 130_000n, W, I)).toBe(923n);
  });

  it('moves at most a factor of 4 per window and stays within [16, 2^53 - 1]', () => {
    expect(retarget(1000n, 1n, W, I)).toBe(4000n);
    expect(retarget(1000n, 0n, W, I)).toBe(4000n);
    expect(retarget(1000n, -7n, W, I)).toBe(4000n);
    expect(retarget(1000n, 10n ** 12n, W, I)).toBe(250n);
    expect(retarget(20n, 10n ** 12n, W, I)).toBe(16n);
    expect(retarget(MAX_HEX_DIFFICULTY, 1n, W, I)).toBe(MAX_HEX_DIFFICULTY);
  });

  it('moves toward the interval and clamps (property)', () => {
    fc.assert(
      fc.property(
        difficultyArb,
        fc.bigInt({ min: -1000n, max: 10n ** 9n }),
        fc.integer({ min: 1, max: 100 }),
        fc.bigInt({ min: 1n, max: 100_000n }),
        (old, span, window, interval) => {
          const next = retarget(old, span, window, interval);
          const expected = BigInt(window) * interval;
          const actual = span < 1n ? 1n : span;
          expect(next >= MIN_HEX_DIFFICULTY && next <= MAX_HEX_DIFFICULTY).toBe(true);
          expect(next <= old * 4n).toBe(true);
          expect(next >= (old / 4n < MIN_HEX_DIFFICULTY ? MIN_HEX_DIFFICULTY : old / 4n)).toBe(true);
          if (actual < expected) expect(next >= old).toBe(true); // blocks came too fast: harder
          if (actual > expected) expect(next <= old).toBe(true); // too slow: easier
          if (actual === expected) expect(next).toBe(old);
          const raw = (old * expected) / actual;
          if (raw * 4n >= old && raw <= old * 4n && raw >= MIN_HEX_DIFFICULTY && raw <= MAX_HEX_DIFFICULTY) {
            expect(next).toBe(raw);
          }
        },
      ),
    );
  });

  it('reaches a steady block interval for a constant hash rate', () => {
    // A miner doing `rate` hashes per ms takes D / rate ms per block on average.
    const rate = 50n;
    let d = MIN_HEX_DIFFICULTY;
    for (let window = 0; window < 30; window++) {
      d = retarget(d, (BigInt(W) * d) / rate, W, I);
    }
    // 500000 hashes = 10 s at 50 hashes/ms; the span is whole milliseconds, so it settles within
    // a few hashes of that (here within 0.01 %).
    const target = rate * I;
    expect(d >= target - target / 10_000n && d <= target + target / 10_000n).toBe(true);
  });

  it('rejects nonsensical parameters', () => {
    expect(thrown(() => retarget(1000n, 1n, 0, I)).message).toBe(
      'window: expected a positive integer number of blocks, got 0',
    );
    expect(thrown(() => retarget(1000n, 1n, W, 0n)).message).toBe(
      'interval: expected a positive bigint of milliseconds, got 0',
    );
    expect(thrown(() => retarget(8n, 1n, W, I)).code).toBe('invalid_difficulty');
  });
});

describe('shouldRetarget and difficultyAfterBlock', () => {
  it('retargets after every 12th block and never after genesis', () => {
    const heights = Array.from({ length: 50 }, (_, h) => h).filter((h) => shouldRetarget(h));
    expect(heights).toEqual([12, 24, 36, 48]);
    expect(shouldRetarget(10, 5)).toBe(true);
  });

  it('keeps the difficulty between retargets and applies retarget on the window boundary', () => {
    const base = { difficulty: 1000n, blockTimeMs: 1_000_060_000n, windowStartTimeMs: 1_000_000_000n };
    expect(difficultyAfterBlock({ ...base, height: 11 })).toBe(1000n);
    expect(difficultyAfterBlock({ ...base, height: 12 })).toBe(2000n);
    expect(difficultyAfterBlock({ ...base, height: 10, windowBlocks: 5, intervalMs: 6_000n })).toBe(500n);
  });
});
