import { describe, expect, test } from 'vitest';
import { formatDifficulty, formatLogEvent } from '../src/format.js';
import type { FoundResult } from '../src/found.js';

const found = { id: 'hx-1/47', device: 'cpu', worker: 1, achievedDifficulty: 2_500_000 } as FoundResult;

describe('formatLogEvent', () => {
  test('prints xmrig-style result lines', () => {
    expect(
      formatLogEvent({
        type: 'accepted',
        found,
        accepted: 120,
        rejected: 1,
        difficulty: 43118,
        latencyMs: 102.6,
      }),
    ).toBe('accepted (120/1) diff 43118 (103 ms) by cpu#1');
    expect(
      formatLogEvent({
        type: 'rejected',
        found,
        code: 'coordinate_occupied',
        message: 'taken',
        accepted: 120,
        rejected: 2,
        difficulty: 43118,
        latencyMs: 98,
      }),
    ).toBe('rejected (120/2) diff 43118 (98 ms) by cpu#1: coordinate_occupied');
    expect(
      formatLogEvent({
        type: 'device-notice',
        device: 'serial:02a1b2c3d4e50000',
        backend: 'serial',
        kind: 'lost',
        chipId: '02a1b2c3d4e50000',
        port: '/dev/ttyUSB0',
        reason: 'no valid frame for 3000 ms',
      }),
    ).toBe('serial:02a1b2c3d4e50000 (/dev/ttyUSB0): lost: no valid frame for 3000 ms');
    expect(formatLogEvent({ type: 'found', found })).toBe('found hx-1/47 by cpu#1 diff 2.50M');
    expect(formatLogEvent({ type: 'connection-lost', reason: 'ECONNREFUSED', retryInMs: 4000 })).toBe(
      'validator unreachable (ECONNREFUSED); retrying in 4 s',
    );
    expect(formatLogEvent({ type: 'expired', found })).toBe(
      'dropped journaled result hx-1/47: its challenge expired',
    );
  });

  test('formatDifficulty keeps small values whole and scales large ones', () => {
    expect([16, 43118, 99_999, 1.5e6, 4.29e9, 7e12].map(formatDifficulty)).toEqual([
      '16',
      '43118',
      '99999',
      '1.50M',
      '4.29G',
      '7.00T',
    ]);
  });
});
