import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import {
  formatAmount,
  formatPublicKey,
  type HexSubmitResult,
  type LedgerPage,
  type PoolShareResult,
} from '@tensormine/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { realSecond, testClock } from '../../../test-support/clock.ts';
import type { Validator } from '../src/app.js';
import { HEX_BLOCK_REWARD } from '../src/services/hexchain.js';
import { POOL_FEE_ACCOUNT, POOL_REWARD_ACCOUNT } from '../src/services/pool/payout.js';
import { PRUNE_EXPIRY_SLACK_S, prunePool } from '../src/services/pool/prune.js';
import { openSqliteStorage } from '../src/store/sqlite.js';
import type { Storage } from '../src/store/types.js';
import { register, testKey, testValidator } from './helpers.js';
import { expectError, mineBlock, submit } from './hexchain-mine.js';
import {
  adminConfig,
  findShare,
  insertShares,
  join,
  leave,
  member,
  pooledChallenge,
  shareSubmission,
  submitShare,
} from './pool-helpers.js';

/**
 * The pool over time: a new member's first share difficulty, shares scored by the block
 * difficulty they were mined under, what a pool block's answer says, module accounts in the
 * ledger, the back-off held in the database, and pruning.
 */

const alice = testKey('pool-life-alice');
const bob = testKey('pool-life-bob');
const carol = testKey('pool-life-carol');
const ALICE = formatPublicKey(alice.publicKey);
const BOB = formatPublicKey(bob.publicKey);

const TERMS = { strategy: 'pplns', feeBps: 200n, windowFactor: 2n, token: 'PTM' } as const;

async function balance(v: Validator, account: string): Promise<bigint> {
  return v.context.storage.read((tx) => tx.ledger.balance(account, 'PTM'));
}

describe("a new member's first share difficulty", () => {
  it('is one share per interval at its declared rate, else its device type, and survives a rejoin', async () => {
    const v = await testValidator({ hexDifficulty: 2n ** 40n, poolStrategy: 'pplns' });
    await register(v, alice); // native
    await register(v, bob);
    await register(v, carol, 'esp8266');
    // share_interval_s 10: native 2 000 000 H/s x 10 s, esp8266 40 000 x 10, bob declares 5 000 H/s.
    const a = await join(v, alice, '0', null);
    expect(a.json().share_difficulty, a.body).toBe(20_000_000);
    expect((await join(v, carol, '0', null)).json().share_difficulty).toBe(400_000);
    expect((await join(v, bob, '0', 5_000)).json().share_difficulty).toBe(50_000);
    expect((await pooledChallenge(v, alice)).share_difficulty).toBe(20_000_000);
    expect((await pooledChallenge(v, carol)).share_difficulty).toBe(400_000);
    expect((await pooledChallenge(v, bob)).share_difficulty).toBe(50_000);
    // Leaving and joining again (declaring nothing) starts where it was.
    expect((await leave(v, bob)).statusCode).toBe(200);
    expect((await join(v, bob, '0', null)).json().share_difficulty).toBe(50_000);
    expect((await member(v, bob)).share_difficulty).toBe(50_000);
  });

  it('is not lowered by the time between joining and the first challenge', async () => {
    let now = Date.now();
    const v = await testValidator({ now: () => now, hexDifficulty: 2n ** 40n, poolStrategy: 'pplns' });
    await register(v, alice);
    expect((await join(v, alice, '0', 5_000)).json().share_difficulty).toBe(50_000);
    now += 300_000; // 30 share intervals without a share, but without mining either
    expect((await pooledChallenge(v, alice)).share_difficulty).toBe(50_000);
    now += 40_000; // 4 intervals of mining without a share: vardiff lowers it
    expect((await pooledChallenge(v, alice)).share_difficulty).toBe(12_500);
  });

  it('never exceeds the block difficulty', async () => {
    const v = await testValidator({ hexDifficulty: 4096n, poolStrategy: 'pplns' });
    await register(v, alice);
    expect((await join(v, alice, '0', null)).json().share_difficulty).toBe(4096);
    expect((await pooledChallenge(v, alice)).share_difficulty).toBe(4096);
  });
});

describe('PPLNS scores', () => {
  it('weigh a share by the block difficulty it was mined under (S / D)', async () => {
    const v = await testValidator({ hexDifficulty: 4096n, poolStrategy: 'pplns' });
    await register(v, alice);
    await register(v, bob);
    await join(v, alice);
    await join(v, bob);
    // Alice: one share of difficulty 16 at D = 4096, worth 16 / 4096 of a block.
    const a = await pooledChallenge(v, alice);
    expect(a.share_difficulty).toBe(16);
    const aRes = await submitShare(v, shareSubmission(a, alice, findShare(a, alice, { block: false })));
    expect(aRes.statusCode, aRes.body).toBe(200);
    // The difficulty doubles. Bob: a share of difficulty 16 (worth 16 / 8192), then a block.
    await adminConfig(v, { hexchain_difficulty: 8192 });
    const b = await pooledChallenge(v, bob);
    expect([b.difficulty, b.share_difficulty]).toEqual([8192, 16]);
    const bShare = findShare(b, bob, { block: false });
    expect((await submitShare(v, shareSubmission(b, bob, bShare))).statusCode).toBe(200);
    const res = await submitShare(v, shareSubmission(b, bob, findShare(b, bob, { block: true })));
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as PoolShareResult).kind).toBe('block');
    // Alice's one share at D = 4096 weighs as much as Bob's two at D = 8192: equal pay (Bob,
    // the finder, gets the remainder). By share difficulty alone Alice would get a third.
    const net = HEX_BLOCK_REWARD - (HEX_BLOCK_REWARD * 200n) / 10_000n;
    expect(await balance(v, ALICE)).toBe(net / 2n);
    expect(await balance(v, BOB)).toBe(net - net / 2n);
  });
});

describe("a pool block's answer", () => {
  it("reports the finder's payout as its reward, and the pool's split; a solo block the whole reward", async () => {
    const v = await testValidator({ hexDifficulty: 256n, poolStrategy: 'pplns' });
    await register(v, alice);
    await register(v, bob);
    await join(v, alice);
    await join(v, bob);
    const b = await pooledChallenge(v, bob);
    let nonce = -1;
    for (let i = 0; i < 3; i++) {
      nonce = findShare(b, bob, { block: false }, nonce + 1);
      expect((await submitShare(v, shareSubmission(b, bob, nonce))).statusCode).toBe(200);
    }
    const a = await pooledChallenge(v, alice);
    const blockBody = shareSubmission(a, alice, findShare(a, alice, { block: true }));
    const res = await submitShare(v, blockBody);
    expect(res.statusCode, res.body).toBe(200);
    const block = (res.json() as PoolShareResult).block as HexSubmitResult;
    const paidAlice = await balance(v, ALICE);
    const paidBob = await balance(v, BOB);
    expect(paidAlice).toBeGreaterThan(0n);
    expect(paidAlice).toBeLessThan(HEX_BLOCK_REWARD);
    expect(block.reward).toBe(formatAmount(paidAlice, 'PTM'));
    expect(block.pool).toEqual({
      reward: '1',
      fee: '0.02',
      finder_payout: block.reward,
      payees: 2,
      window: 512,
    });
    expect(paidAlice + paidBob + (HEX_BLOCK_REWARD * 200n) / 10_000n).toBe(HEX_BLOCK_REWARD);
    // Resent to /api/hexchain/submit: the same answer, paid once.
    const again = await submit(v, blockBody);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual(block);
    expect(await balance(v, ALICE)).toBe(paidAlice);
    // A key that is not a member: a solo block, the whole reward, no pool part.
    await register(v, carol);
    const { result: solo } = await mineBlock(v, carol);
    expect(solo.reward).toBe('1');
    expect(solo.pool).toBeUndefined();
  });
});

describe('GET /ledger/entries and module accounts', () => {
  it('lists and filters the pool module accounts, with the documented pattern', async () => {
    const v = await testValidator({ hexDifficulty: 64n, poolStrategy: 'pplns' });
    await register(v, alice);
    await join(v, alice);
    const a = await pooledChallenge(v, alice);
    expect(
      (await submitShare(v, shareSubmission(a, alice, findShare(a, alice, { block: true })))).statusCode,
    ).toBe(200);
    const fees = await v.inject(`/ledger/entries?pubkey=${encodeURIComponent(POOL_FEE_ACCOUNT)}`);
    expect(fees.statusCode, fees.body).toBe(200);
    const page = fees.json() as LedgerPage;
    expect(page.entries.map((e) => [e.pubkey, e.type, e.amount])).toEqual([
      [POOL_FEE_ACCOUNT, 'fee', '0.02'],
    ]);
    const rewards = (
      await v.inject(`/ledger/entries?pubkey=${encodeURIComponent(POOL_REWARD_ACCOUNT)}`)
    ).json();
    expect(new Set((rewards as LedgerPage).entries.map((e) => e.type))).toEqual(
      new Set(['mining_reward', 'pool_payout', 'fee']),
    );
    for (const bad of ['@', '@Pool', 'pool:fees', '@pool:', `${'a'.repeat(63)}`]) {
      expectError(
        await v.inject(`/ledger/entries?pubkey=${encodeURIComponent(bad)}`),
        400,
        'validation_failed',
      );
    }
  });
});

describe('the invalid-share back-off', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('holds across validator nodes sharing one database, and across a restart', async () => {
    const dir = mkdtempSync(joinPath(tmpdir(), 'tm-pool-backoff-'));
    dirs.push(dir);
    const path = joinPath(dir, 'validator.db');
    const storages: Storage[] = [];
    // One clock for every node, standing still: the back-off cannot run out while the test
    // grinds shares, however slow the machine (on the real clock it could, and the 429 was a 200).
    const clock = testClock(realSecond());
    const node = async () => {
      const storage = await openSqliteStorage({ path });
      storages.push(storage);
      return testValidator({ storage, hexDifficulty: 4096n, poolStrategy: 'pplns', now: clock.now });
    };
    try {
      const one = await node();
      const two = await node();
      await register(one, alice);
      await join(one, alice);
      const c = await pooledChallenge(one, alice);
      let nonce = 0;
      for (let i = 0; i < 8; i++) {
        nonce = findShare(c, alice, { share: false }, nonce + 1);
        expectError(await submitShare(one, shareSubmission(c, alice, nonce)), 422, 'share_above_target');
      }
      const good = shareSubmission(c, alice, findShare(c, alice, { block: false }));
      // The other node refuses it too: the back-off is in the database.
      expectError(await submitShare(two, good), 429, 'share_backoff');
      await one.close();
      await two.close();
      const three = await node();
      expectError(await submitShare(three, good), 429, 'share_backoff');
    } finally {
      for (const s of storages) await s.close();
    }
  });
});

describe('pruning shares', () => {
  it('keeps the PPLNS window and the shares of open challenges, deletes the rest in bounded batches', async () => {
    let now = Date.now();
    const v = await testValidator({ now: () => now, hexDifficulty: 4096n, poolStrategy: 'pplns' });
    await register(v, alice);
    await register(v, bob);
    await join(v, alice);
    await join(v, bob);
    // A real share of Bob on a challenge that stays open.
    const open = await pooledChallenge(v, bob);
    const bobShare = shareSubmission(open, bob, findShare(open, bob, { block: false }));
    expect((await submitShare(v, bobShare)).statusCode).toBe(200);
    // Then 1000 shares of Alice at S = 16, D = 4096 (1/256 of a block each): the window, two
    // blocks' worth, is the newest 512 of them.
    const c = await pooledChallenge(v, alice);
    await insertShares(v, { pubkey: ALICE, challengeId: c.id, count: 1000, atMs: now });
    const before = await member(v, alice);
    expect(before.window_weight).toBe(512 * 16);
    const count = () =>
      v.context.storage.read(async (tx) => (await tx.pool.sharesBefore(1e12, 0, 1e6)).length);
    expect(await count()).toBe(1001);

    // Both challenges are open: nothing goes (a resent share must still be a duplicate).
    expect((await prunePool(v.context, TERMS, 600_000)).shares).toBe(0);

    // Both challenges expire: Bob's share and Alice's 488 oldest, all older than the window, go.
    now += (120 + PRUNE_EXPIRY_SLACK_S + 1) * 1000;
    const first = await prunePool(v.context, TERMS, 600_000, { batch: 100, maxBatches: 2 });
    expect(first).toMatchObject({ shares: 200, more: true });
    const rest = await prunePool(v.context, TERMS, 600_000);
    expect(rest).toMatchObject({ shares: 289, more: false });
    expect(await count()).toBe(512);
    expect((await member(v, alice)).window_weight).toBe(before.window_weight);
    expect((await member(v, alice)).estimated_payout).toBe(before.estimated_payout);
  });

  it('keeps a share outside the window while its challenge is open (duplicates are still refused)', async () => {
    let now = Date.now();
    const v = await testValidator({ now: () => now, hexDifficulty: 4096n, poolStrategy: 'pplns' });
    await register(v, bob);
    await register(v, alice);
    await join(v, bob);
    await join(v, alice);
    const open = await pooledChallenge(v, bob);
    const bobShare = shareSubmission(open, bob, findShare(open, bob, { block: false }));
    expect((await submitShare(v, bobShare)).statusCode).toBe(200);
    now += 60_000;
    const c = await pooledChallenge(v, alice);
    await insertShares(v, { pubkey: ALICE, challengeId: c.id, count: 600, atMs: now });
    expect((await member(v, bob)).window_weight).toBe(0); // out of the window
    // Bob's challenge is 60 s into its 120 s, Alice's is new: nothing goes.
    expect((await prunePool(v.context, TERMS, 600_000)).shares).toBe(0);
    expectError(await submitShare(v, bobShare), 409, 'share_duplicate');
    // Once Bob's challenge has expired (and the slack), his share goes; Alice's are still open.
    now += (60 + PRUNE_EXPIRY_SLACK_S + 1) * 1000;
    expect(await prunePool(v.context, TERMS, 600_000)).toMatchObject({ shares: 1, challenges: 1 });
    // Its challenge's share terms are gone too; the share is still stale (not reserved, nor a
    // back-off count), and Alice's open challenge keeps its terms.
    expectError(await submitShare(v, bobShare), 409, 'share_stale');
    expect(await v.context.storage.read((tx) => tx.pool.getChallengeTerms(open.id))).toBeUndefined();
    expect(await v.context.storage.read((tx) => tx.pool.getChallengeTerms(c.id))).toBeDefined();
  });

  it('forgets back-off entries after the back-off memory', async () => {
    let now = Date.now();
    const v = await testValidator({ now: () => now, hexDifficulty: 4096n, poolStrategy: 'pplns' });
    await register(v, alice);
    await join(v, alice);
    const c = await pooledChallenge(v, alice);
    const bad = findShare(c, alice, { share: false });
    expectError(await submitShare(v, shareSubmission(c, alice, bad)), 422, 'share_above_target');
    expect((await prunePool(v.context, TERMS, 600_000)).backoffs).toBe(0);
    now += 600_001;
    expect((await prunePool(v.context, TERMS, 600_000)).backoffs).toBe(1);
  });
});
