import {
  coordKey,
  type HexBlock,
  type HexChallenge,
  type HexStatus,
  RETARGET_WINDOW_BLOCKS,
  retarget,
  targetFromDifficulty,
  targetToHex,
} from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import type { Validator } from '../src/app.js';
import { register, testKey, testValidator } from './helpers.js';
import { expectError, issue, mine, submit } from './hexchain-mine.js';

const alice = testKey('hexchain-retarget');

/** A fake clock on a whole second near the real time (signed registration needs real time). */
function fakeClock(): { now: () => number; advance(ms: number): void; start: number } {
  const start = Math.floor(Date.now() / 1000) * 1000;
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
    start,
  };
}

async function status(v: Validator): Promise<HexStatus> {
  return (await v.inject('/api/hexchain/status')).json() as HexStatus;
}

/** Mines `count` blocks, advancing the clock by `stepMs` before each submission. */
async function mineBlocks(v: Validator, clock: { advance(ms: number): void }, count: number, stepMs: number) {
  for (let i = 0; i < count; i++) {
    const c = await issue(v);
    const submission = mine(c, alice);
    clock.advance(stepMs);
    const res = await submit(v, submission);
    expect(res.statusCode, res.body).toBe(200);
  }
}

function adminConfig(v: Validator, body: unknown, token: string | null = v.adminToken) {
  return v.inject({
    method: 'POST',
    url: '/admin/config',
    payload: body as Record<string, unknown>,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
}

describe('retarget', () => {
  it('raises the difficulty after a window of fast blocks, at most fourfold', async () => {
    const clock = fakeClock();
    const v = await testValidator({ now: clock.now });
    await register(v, alice);
    await mineBlocks(v, clock, RETARGET_WINDOW_BLOCKS - 1, 100);
    let s = await status(v);
    expect(s.difficulty).toBe(64);
    expect(s.blocks_until_retarget).toBe(1);

    // A challenge issued before the retarget keeps its target.
    const early = await issue(v);
    let last: HexChallenge;
    do last = await issue(v);
    while (coordKey(last.coord) === coordKey(early.coord));
    expect(last.difficulty).toBe(64);
    const lastSubmission = mine(last, alice);
    clock.advance(100);
    expect((await submit(v, lastSubmission)).statusCode).toBe(200);

    // span 1200 ms for 12 blocks, expected 120 000 ms: x100, clamped to x4
    expect(retarget(64n, 1200n, 12, 10_000n)).toBe(256n);
    s = await status(v);
    expect(s.difficulty).toBe(256);
    expect(s.target).toBe(targetToHex(targetFromDifficulty(256n)));
    expect(s.blocks_until_retarget).toBe(RETARGET_WINDOW_BLOCKS);
    const next = await issue(v);
    expect(next.difficulty).toBe(256);
    expect(next.target).toBe(targetToHex(targetFromDifficulty(256n)));
    expect(v.context.runtime.hexDifficulty).toBe(64n);

    const res = await submit(v, mine(early, alice));
    expect(res.statusCode, res.body).toBe(200);
    const stored = (
      await v.inject(`/api/hexchain/lattice/${early.coord.q}/${early.coord.r}/${early.coord.s}`)
    ).json() as HexBlock;
    expect(stored.difficulty).toBe(64);
    expect((await status(v)).blocks_until_retarget).toBe(RETARGET_WINDOW_BLOCKS - 1);
  });

  it('lowers the difficulty after a window of slow blocks, at most fourfold', async () => {
    const clock = fakeClock();
    const v = await testValidator({ now: clock.now, hexDifficulty: 256n });
    await register(v, alice);
    await mineBlocks(v, clock, RETARGET_WINDOW_BLOCKS, 100_000);
    // span 1 200 000 ms, expected 120 000 ms: /10, clamped to /4
    expect((await status(v)).difficulty).toBe(64);
    expect((await issue(v)).difficulty).toBe(64);
  });

  it('steers by the span of each window: genesis time, then the block a window earlier', async () => {
    const clock = fakeClock();
    const v = await testValidator({ now: clock.now });
    await register(v, alice);
    clock.advance(12_000); // the genesis time is the first start: this time counts too
    await mineBlocks(v, clock, RETARGET_WINDOW_BLOCKS, 4_000);
    // span 12 000 + 12 * 4 000 = 60 000 ms: twice as fast as expected
    expect((await status(v)).difficulty).toBe(128);
    clock.advance(3_600_000); // a pause between windows counts in the next one
    await mineBlocks(v, clock, RETARGET_WINDOW_BLOCKS - 1, 10_000);
    expect((await status(v)).difficulty).toBe(128);
    await mineBlocks(v, clock, 1, 10_000);
    // span 3 600 000 + 120 000 ms: far too slow, clamped to /4
    expect((await status(v)).difficulty).toBe(32);
    await mineBlocks(v, clock, RETARGET_WINDOW_BLOCKS, 20_000);
    // span 240 000 ms: twice as slow; floor(32 / 2) = 16, the minimum
    expect((await status(v)).difficulty).toBe(16);
    await mineBlocks(v, clock, RETARGET_WINDOW_BLOCKS, 20_000);
    expect((await status(v)).difficulty).toBe(16);
  });

  it('uses the configured block interval', async () => {
    const clock = fakeClock();
    const v = await testValidator({ now: clock.now, blockIntervalMs: 1000n });
    await register(v, alice);
    expect((await status(v)).block_interval_s).toBe(1);
    await mineBlocks(v, clock, RETARGET_WINDOW_BLOCKS, 500);
    expect((await status(v)).difficulty).toBe(128);
  });
});

describe('admin hexchain_difficulty', () => {
  it('applies to challenges issued afterwards; open challenges keep their target', async () => {
    const v = await testValidator();
    await register(v, alice);
    const before = await issue(v);
    expect(before.difficulty).toBe(64);

    expectError(await adminConfig(v, { hexchain_difficulty: 128 }, null), 401, 'unauthorized');
    expectError(await adminConfig(v, { hexchain_difficulty: 8 }), 400, 'validation_failed');
    expect((await status(v)).difficulty).toBe(64);

    const res = await adminConfig(v, { hexchain_difficulty: 128 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().config.hexchain_difficulty).toBe(128);
    const read = await v.inject({
      url: '/admin/config',
      headers: { authorization: `Bearer ${v.adminToken}` },
    });
    expect(read.json().hexchain_difficulty).toBe(128);
    expect((await status(v)).difficulty).toBe(128);
    expect((await v.inject('/status')).json().hexchain.difficulty).toBe(128);

    let after: HexChallenge;
    do after = await issue(v);
    while (coordKey(after.coord) === coordKey(before.coord));
    expect(after.difficulty).toBe(128);
    expect(after.target).toBe(targetToHex(targetFromDifficulty(128n)));
    expect(before.target).toBe(targetToHex(targetFromDifficulty(64n)));

    expect((await submit(v, mine(before, alice))).statusCode).toBe(200);
    expect((await submit(v, mine(after, alice))).statusCode).toBe(200);
    const page = (await v.inject('/api/hexchain/lattice')).json() as { blocks: HexBlock[] };
    expect(page.blocks.map((b) => b.difficulty)).toEqual([64, 128]);
  });

  it('is the starting point of the next retarget', async () => {
    const clock = fakeClock();
    const v = await testValidator({ now: clock.now });
    await register(v, alice);
    await mineBlocks(v, clock, RETARGET_WINDOW_BLOCKS - 1, 10_000);
    expect((await adminConfig(v, { hexchain_difficulty: 100 })).statusCode).toBe(200);
    await mineBlocks(v, clock, 1, 10_000);
    // on time: unchanged from the admin value
    expect((await status(v)).difficulty).toBe(100);
  });
});
