/**
 * The hash rate and block time of GET /api/live over the time actually mined: an hour when
 * nobody mined does not dilute them (the dashboard computes the same; its test runs the page's
 * copy in Chromium).
 */
import { describe, expect, it } from 'vitest';
import { minedRate } from '../src/mirror.js';

describe('minedRate', () => {
  const blocks = Array.from({ length: 20 }, (_, i) => ({
    timestamp: 1_000_000 + i * 2 + (i >= 10 ? 3600 : 0),
    difficulty: 1000,
  }));

  it('leaves out an idle gap', () => {
    expect(minedRate(blocks)).toEqual({ hashesPerSecond: 500, blockSeconds: 2, idleGaps: 1 });
  });

  it('counts every gap of continuous mining, long ones included', () => {
    expect(minedRate(blocks.slice(0, 10))).toEqual({ hashesPerSecond: 500, blockSeconds: 2, idleGaps: 0 });
    // Exponential gaps: 9 s among 1 s gaps is mining (under 20 times the median, and 10 s).
    const bursty = [0, 1, 2, 3, 12, 13].map((t) => ({ timestamp: t, difficulty: 100 }));
    expect(minedRate(bursty)).toEqual({ hashesPerSecond: 500 / 13, blockSeconds: 13 / 5, idleGaps: 0 });
  });

  it('says nothing for fewer than two blocks, 0 H/s when no time elapsed', () => {
    expect(minedRate(blocks.slice(0, 1))).toBeUndefined();
    expect(minedRate([blocks[0]!, blocks[0]!])).toEqual({ hashesPerSecond: 0, blockSeconds: 0, idleGaps: 0 });
  });
});
