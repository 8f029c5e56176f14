import {
  formatPublicKey,
  type HexChallenge,
  type PoolInfo,
  type PoolShareResult,
  shareTargetFromDifficulty,
  targetToHex,
} from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import type { Validator } from '../src/app.js';
import { HEX_BLOCK_REWARD } from '../src/services/hexchain.js';
import { COUNTERS } from '../src/services/metrics.js';
import { POOL_FEE_ACCOUNT, POOL_REWARD_ACCOUNT, POOL_STAKE_ACCOUNT } from '../src/services/pool/payout.js';
import { register, testKey, testValidator } from './helpers.js';
import { expectError, issue, mine, mineBlock, submit } from './hexchain-mine.js';
import {
  conservation,
  findShare,
  grind,
  join,
  leave,
  member,
  pooledChallenge,
  setStrategy,
  shareSubmission,
  submitShare,
} from './pool-helpers.js';

const alice = testKey('pool-alice');
const bob = testKey('pool-bob');
const ALICE = formatPublicKey(alice.publicKey);
const BOB = formatPublicKey(bob.publicKey);

/** A pplns validator whose block difficulty (4096) leaves room for shares (first at 16). */
async function poolValidator(options: Parameters<typeof testValidator>[0] = {}): Promise<Validator> {
  const v = await testValidator({ hexDifficulty: 4096n, poolStrategy: 'pplns', ...options });
  await register(v, alice);
  await register(v, bob);
  return v;
}

async function balance(v: Validator, account: string): Promise<bigint> {
  return v.context.storage.read((tx) => tx.ledger.balance(account, 'PTM'));
}

describe('pool membership', () => {
  it('escrows the stake in @pool on join and returns it on leave', async () => {
    const v = await testValidator({ poolStrategy: 'solo', poolMinimumStake: 0n });
    await register(v, alice);
    await mineBlock(v, alice); // 1 PTM, solo
    expectError(await join(v, alice, '0.5'), 409, 'pool_disabled');
    await setStrategy(v, 'pplns');

    const joined = await join(v, alice, '0.25');
    expect(joined.statusCode, joined.body).toBe(200);
    expect(joined.json()).toMatchObject({ joined: true, pubkey: ALICE, stake_amount: '0.25' });
    expect(await balance(v, ALICE)).toBe(750_000_000n);
    expect(await balance(v, POOL_STAKE_ACCOUNT)).toBe(250_000_000n);
    expectError(await join(v, alice, '0.25'), 409, 'pool_already_member');

    const info = (await v.inject('/pool')).json() as PoolInfo;
    expect(info).toMatchObject({ type: 'pplns', miners: 1, stake: '0.25' });
    const status = (await v.inject('/pool/status')).json();
    expect(status).toMatchObject({ type: 'pplns', total_stake: '0.25', miners_online: 0 });
    expect((await member(v, alice)).member).toBe(true);

    const left = await leave(v, alice);
    expect(left.statusCode, left.body).toBe(200);
    expect(left.json()).toEqual({ left: true, pubkey: ALICE, returned_stake: '0.25' });
    expect(await balance(v, ALICE)).toBe(1_000_000_000n);
    expect(await balance(v, POOL_STAKE_ACCOUNT)).toBe(0n);
    expectError(await leave(v, alice), 409, 'pool_not_member');
    expect((await member(v, alice)).member).toBe(false);
    const { minted, total } = await conservation(v);
    expect(total).toBe(minted);
  });

  it('refuses a stake below the minimum, above the balance, or from an unregistered key', async () => {
    const v = await testValidator({ poolStrategy: 'pplns', poolMinimumStake: 100_000_000n });
    await register(v, alice);
    expectError(await join(v, alice, '0.05'), 422, 'stake_below_minimum');
    const poor = await join(v, alice, '2');
    expectError(poor, 409, 'insufficient_balance');
    expect(poor.json().details).toEqual({ balance: '0', required: '2' });
    expectError(await join(v, bob, '1'), 403, 'miner_not_registered');
    expectError(await join(v, alice, '0.0000000001'), 400, 'invalid_amount');
  });
});

describe('share terms on challenges', () => {
  it("gives a member's challenge its share difficulty and target, and nobody else's", async () => {
    const v = await poolValidator();
    expect((await pooledChallenge(v, alice)).share_difficulty).toBeUndefined();
    expect((await join(v, alice)).statusCode).toBe(200);
    const c = await pooledChallenge(v, alice);
    expect(c.share_difficulty).toBe(16); // 4096 / 256
    expect(c.share_target).toBe(targetToHex(shareTargetFromDifficulty(16n)));
    expect((await issue(v)).share_difficulty).toBeUndefined();
  });
});

describe('POST /api/hexchain/pool/share', () => {
  async function setup(): Promise<{ v: Validator; c: HexChallenge }> {
    const v = await poolValidator();
    await join(v, alice);
    await join(v, bob);
    return { v, c: await pooledChallenge(v, alice) };
  }

  it('accepts a share, counts it, and refuses it a second time (share_duplicate)', async () => {
    const { v, c } = await setup();
    const nonce = findShare(c, alice, { share: true, block: false });
    const res = await submitShare(v, shareSubmission(c, alice, nonce));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as PoolShareResult;
    expect(body).toMatchObject({ accepted: true, kind: 'share', share_difficulty: 16, block: null });
    expectError(await submitShare(v, shareSubmission(c, alice, nonce)), 409, 'share_duplicate');
    const m = await member(v, alice);
    expect(m).toMatchObject({ shares_accepted: 1, shares_stale: 0, window_weight: 16 });
    expect(m.estimated_payout).toBe('0.98'); // the only weight in the window: reward minus the 2 % fee
  });

  it('counts shares sent at once exactly once each (grouped writes); a share resent at once is one', async () => {
    // Alice's six shares and Bob's three, each of Bob's sent twice, all at once: they are
    // checked together and written in groups (at most one share per member in a group, so
    // Alice's spread over several, each advancing the member the previous one left).
    const { v, c } = await setup();
    const b = await pooledChallenge(v, bob);
    const sharesOf = (ch: HexChallenge, key: typeof alice, n: number) =>
      grind(ch, key, 0, 5000)
        .filter((h) => h.share && !h.block)
        .slice(0, n)
        .map((h) => shareSubmission(ch, key, h.nonce));
    const alices = sharesOf(c, alice, 6);
    const bobs = sharesOf(b, bob, 3);
    const [fromAlice, fromBob] = await Promise.all([
      Promise.all(alices.map((s) => submitShare(v, s))),
      Promise.all(bobs.flatMap((s) => [submitShare(v, s), submitShare(v, s)])),
    ]);
    for (const r of fromAlice) expect(r.statusCode, r.body).toBe(200);
    for (let i = 0; i < bobs.length; i++) {
      const pair = [fromBob[2 * i]!, fromBob[2 * i + 1]!];
      expect(pair.map((r) => r.statusCode).sort()).toEqual([200, 409]);
      expectError(pair.find((r) => r.statusCode === 409)!, 409, 'share_duplicate');
    }
    expect(await member(v, alice)).toMatchObject({ shares_accepted: 6, window_weight: 6 * 16 });
    expect(await member(v, bob)).toMatchObject({ shares_accepted: 3, window_weight: 3 * 16 });
    expect(await v.context.storage.read((tx) => tx.counters.get(COUNTERS.sharesAccepted))).toBe(9);
  });

  it('refuses a hash above the share target (share_above_target)', async () => {
    const { v, c } = await setup();
    const nonce = findShare(c, alice, { share: false });
    const res = await submitShare(v, shareSubmission(c, alice, nonce));
    expectError(res, 422, 'share_above_target');
    expect((await member(v, alice)).shares_rejected).toBe(1);
  });

  it('refuses a forged share: wrong pow_hash (without revealing the right one), bad signature', async () => {
    const { v, c } = await setup();
    const nonce = findShare(c, alice);
    const good = shareSubmission(c, alice, nonce);
    const wrongHash = { ...good, block: { ...good.block, pow_hash: '00'.repeat(32) } };
    const res = await submitShare(v, wrongHash);
    expectError(res, 422, 'pow_hash_mismatch');
    expect(res.body).not.toContain(shareSubmission(c, alice, nonce).block.pow_hash);
    const badSig = { ...good, signature: good.signature?.map((b, i) => (i === 0 ? b ^ 1 : b)) };
    expectError(await submitShare(v, badSig), 401, 'signature_invalid');
    expect((await member(v, alice)).shares_accepted).toBe(0);
  });

  it('refuses a share moved to another key (pubkey_mismatch) and one for an unreserved challenge', async () => {
    const { v, c } = await setup();
    const nonce = findShare(c, bob);
    expectError(await submitShare(v, shareSubmission(c, bob, nonce)), 403, 'pubkey_mismatch');
    const open = await issue(v);
    expectError(await submitShare(v, shareSubmission(open, alice, 0)), 409, 'share_not_reserved');
  });

  it('counts a share for an expired challenge or an occupied cell as stale, not paid', async () => {
    let now = Date.now();
    const v = await poolValidator({ now: () => now });
    await join(v, alice);
    const c = await pooledChallenge(v, alice);
    const nonce = findShare(c, alice, { block: false });
    now += 121_000;
    const res = await submitShare(v, shareSubmission(c, alice, nonce));
    expectError(res, 409, 'share_stale');
    expect(res.json().details).toEqual({ reason: 'expired' });
    // The stale share is kept: sending it again is a duplicate.
    expectError(await submitShare(v, shareSubmission(c, alice, nonce)), 409, 'share_duplicate');

    const d = await pooledChallenge(v, alice);
    // Another key takes the cell first: challenges are drawn (without mining, so the frontier
    // and the odds stay the same) until one is for the same cell, and that one is mined.
    let same: HexChallenge | undefined;
    for (let i = 0; i < 300 && same === undefined; i++) {
      const e = await issue(v);
      if (e.coord.q === d.coord.q && e.coord.r === d.coord.r) same = e;
    }
    if (same === undefined) throw new Error('no challenge for the same cell in 300 draws');
    const taken = await submit(v, mine(same, bob));
    expect(taken.statusCode, taken.body).toBe(200);
    const late = await submitShare(v, shareSubmission(d, alice, findShare(d, alice)));
    expectError(late, 409, 'share_stale');
    expect(late.json().details).toEqual({ reason: 'occupied' });
    expect(await member(v, alice)).toMatchObject({ shares_accepted: 0, shares_stale: 2, window_weight: 0 });
  });

  it('backs a member off after repeated invalid shares, and lets it back after the delay', async () => {
    let now = Date.now();
    const v = await poolValidator({ now: () => now });
    await join(v, alice);
    const c = await pooledChallenge(v, alice);
    let nonce = 0;
    for (let i = 0; i < 8; i++) {
      nonce = findShare(c, alice, { share: false }, nonce + 1);
      expectError(await submitShare(v, shareSubmission(c, alice, nonce)), 422, 'share_above_target');
    }
    const good = findShare(c, alice, { share: true, block: false });
    const res = await submitShare(v, shareSubmission(c, alice, good));
    expectError(res, 429, 'share_backoff');
    expect(res.headers['retry-after']).toBe('1');
    // Bob, at the same address, is not affected.
    await join(v, bob);
    const b = await pooledChallenge(v, bob);
    expect(
      (await submitShare(v, shareSubmission(b, bob, findShare(b, bob, { block: false })))).statusCode,
    ).toBe(200);
    now += 1_000;
    expect((await submitShare(v, shareSubmission(c, alice, good))).statusCode).toBe(200);
  });

  it('refuses shares when the pool is off (pool_disabled)', async () => {
    const { v, c } = await setup();
    await setStrategy(v, 'solo');
    expectError(await submitShare(v, shareSubmission(c, alice, findShare(c, alice))), 409, 'pool_disabled');
  });
});

describe('pool blocks and PPLNS payouts', () => {
  it('pays a block found by a share over the window, exactly, once', async () => {
    const v = await poolValidator({ hexDifficulty: 256n });
    await join(v, alice);
    await join(v, bob);
    // Bob sends a few shares, then Alice's share is a block.
    const b = await pooledChallenge(v, bob);
    let bobShares = 0;
    let nonce = -1;
    while (bobShares < 3) {
      nonce = findShare(b, bob, { block: false }, nonce + 1);
      expect((await submitShare(v, shareSubmission(b, bob, nonce))).statusCode).toBe(200);
      bobShares++;
    }
    const a = await pooledChallenge(v, alice);
    const blockNonce = findShare(a, alice, { block: true });
    const res = await submitShare(v, shareSubmission(a, alice, blockNonce));
    expect(res.statusCode, res.body).toBe(200);
    const result = res.json() as PoolShareResult;
    expect(result.kind).toBe('block');
    expect(result.block?.accepted).toBe(true);

    const fee = (HEX_BLOCK_REWARD * 200n) / 10_000n;
    const paidAlice = await balance(v, ALICE);
    const paidBob = await balance(v, BOB);
    expect(paidAlice + paidBob + fee).toBe(HEX_BLOCK_REWARD);
    expect(await balance(v, POOL_FEE_ACCOUNT)).toBe(fee);
    expect(await balance(v, POOL_REWARD_ACCOUNT)).toBe(0n);
    // Weights: bob 3 x 1 (share difficulty 16 at D=256 is clamped to 16), alice 1 x 16.
    expect(paidBob).toBe(((HEX_BLOCK_REWARD - fee) * 48n) / 64n);
    expect(paidAlice).toBe(HEX_BLOCK_REWARD - fee - paidBob);

    const info = (await v.inject('/pool')).json() as PoolInfo;
    expect(info.blocks_found).toBe(1);
    expect(info.last_block).toMatchObject({ finder: ALICE, reward: '1', fee: '0.02', payees: 2 });
    expect(await member(v, alice)).toMatchObject({ blocks_found: 1, paid_total: '0.245' });
    expect((await member(v, bob)).paid_total).toBe('0.735');

    // The same block again: the cell is taken, the share was seen.
    expectError(await submitShare(v, shareSubmission(a, alice, blockNonce)), 409, 'share_duplicate');
    const ledger = await v.context.storage.read((tx) => tx.ledger.list({ type: 'pool_payout', limit: 100 }));
    expect(ledger).toHaveLength(4);
    const { minted, total } = await conservation(v);
    expect(minted).toBe(HEX_BLOCK_REWARD);
    expect(total).toBe(minted);
  });

  it("pays a member's block sent to /api/hexchain/submit by the pool too; a non-member's solo", async () => {
    const v = await poolValidator({ hexDifficulty: 64n });
    await join(v, alice);
    const a = await pooledChallenge(v, alice);
    const res = await submit(v, shareSubmission(a, alice, findShare(a, alice, { block: true })));
    expect(res.statusCode, res.body).toBe(200);
    expect(await balance(v, ALICE)).toBe(980_000_000n);
    await mineBlock(v, bob);
    expect(await balance(v, BOB)).toBe(HEX_BLOCK_REWARD);
    expect(((await v.inject('/pool')).json() as PoolInfo).blocks_found).toBe(1);
  });

  it('pays each block of a key by its membership at that block, as it joins and leaves between them', async () => {
    // The node guesses a block's shape from what its transaction's check last found for the
    // key (services/hexchain/submit.ts): each guess here is stale, and the check decides.
    const v = await poolValidator({ hexDifficulty: 64n });
    const first = await mineBlock(v, alice);
    expect(first.result.pool).toBeUndefined();
    expect(await balance(v, ALICE)).toBe(HEX_BLOCK_REWARD);
    expect((await join(v, alice)).statusCode).toBe(200);
    const pooled = await mineBlock(v, alice);
    expect(pooled.result.pool).toMatchObject({ reward: '1', fee: '0.02', payees: 1 });
    expect(((await v.inject('/pool')).json() as PoolInfo).blocks_found).toBe(1);
    expect((await leave(v, alice)).statusCode).toBe(200);
    const last = await mineBlock(v, alice);
    expect(last.result.pool).toBeUndefined();
    expect(((await v.inject('/pool')).json() as PoolInfo).blocks_found).toBe(1);
    const metrics = await v.inject({
      url: '/admin/metrics',
      headers: { authorization: `Bearer ${v.adminToken}` },
    });
    expect(metrics.json()).toMatchObject({ blocks_accepted: 3 });
    const { minted, total } = await conservation(v);
    expect(minted).toBe(3n * HEX_BLOCK_REWARD);
    expect(total).toBe(minted);
  });
});

describe('pool_strategy proportional', () => {
  it('splits a block over the shares since the previous pool block only', async () => {
    const v = await poolValidator({ hexDifficulty: 256n, poolStrategy: 'proportional' });
    await join(v, alice);
    await join(v, bob);
    // Round 1: bob sends a share, alice finds the block.
    const b1 = await pooledChallenge(v, bob);
    expect(
      (await submitShare(v, shareSubmission(b1, bob, findShare(b1, bob, { block: false })))).statusCode,
    ).toBe(200);
    const a1 = await pooledChallenge(v, alice);
    expect(
      (await submitShare(v, shareSubmission(a1, alice, findShare(a1, alice, { block: true })))).json().kind,
    ).toBe('block');
    const bobAfterRound1 = await balance(v, BOB);
    expect(bobAfterRound1).toBe(490_000_000n); // 16 of 32: half of 0.98
    // Round 2: only alice works; bob's round-1 share is not counted again.
    const a2 = await pooledChallenge(v, alice);
    expect(
      (await submitShare(v, shareSubmission(a2, alice, findShare(a2, alice, { block: true })))).json().kind,
    ).toBe('block');
    expect(await balance(v, BOB)).toBe(bobAfterRound1);
    expect(await balance(v, ALICE)).toBe(490_000_000n + 980_000_000n);
    const { minted, total } = await conservation(v);
    expect(total).toBe(minted);
  });
});

describe('a crash while paying a pool block', () => {
  it('pays nothing (the block is not stored either), and the resent block is paid once', async () => {
    const v = await poolValidator({ hexDifficulty: 256n });
    await join(v, alice);
    await join(v, bob);
    const b = await pooledChallenge(v, bob);
    expect(
      (await submitShare(v, shareSubmission(b, bob, findShare(b, bob, { block: false })))).statusCode,
    ).toBe(200);
    const a = await pooledChallenge(v, alice);
    const body = shareSubmission(a, alice, findShare(a, alice, { block: true }));

    // The pool_blocks row is written after the payout entries: fail there, as a crash would.
    const storage = v.context.storage;
    const transaction = storage.transaction.bind(storage);
    let crash = true;
    (storage as { transaction: typeof storage.transaction }).transaction = (fn) =>
      transaction((tx) =>
        fn(
          crash
            ? new Proxy(tx, {
                get: (target, prop) =>
                  prop === 'pool'
                    ? new Proxy(target.pool, {
                        get: (pool, name) =>
                          name === 'insertBlock'
                            ? () => Promise.reject(new Error('simulated crash'))
                            : Reflect.get(pool, name).bind(pool),
                      })
                    : Reflect.get(target, prop),
              })
            : tx,
        ),
      );
    const failed = await submitShare(v, body);
    expect(failed.statusCode).toBe(500);
    expect(await balance(v, ALICE)).toBe(0n);
    expect(await balance(v, BOB)).toBe(0n);
    expect(await balance(v, POOL_REWARD_ACCOUNT)).toBe(0n);
    expect((await v.inject(`/api/hexchain/lattice/${a.coord.q}/${a.coord.r}/${a.coord.s}`)).statusCode).toBe(
      404,
    );

    crash = false;
    const again = await submitShare(v, body);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().kind).toBe('block');
    expect((await balance(v, ALICE)) + (await balance(v, BOB))).toBe(980_000_000n);
    const payouts = await v.context.storage.read((tx) => tx.ledger.list({ type: 'pool_payout', limit: 100 }));
    expect(payouts).toHaveLength(4);
    const { minted, total } = await conservation(v);
    expect(minted).toBe(HEX_BLOCK_REWARD);
    expect(total).toBe(minted);
  });
});
