import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  formatPublicKey,
  type HexChallenge,
  type KeyPair,
  taggedHash,
  toHex,
  utf8,
} from '@tensormine/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { SOAK_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import type { Validator } from '../src/app.js';
import { POOL_FEE_ACCOUNT, POOL_REWARD_ACCOUNT } from '../src/services/pool/payout.js';
import { openStorage } from '../src/store/open.js';
import { register, signedInject, testKey, testValidator } from './helpers.js';
import { submit } from './hexchain-mine.js';
import { findShare, grind, pooledChallenge, shareSubmission, submitShare } from './pool-helpers.js';

/**
 * Block withholding (issue 21): a pool member mines the pool's work and sends its shares, but
 * when a hash is also a block it leaves the pool, submits that block alone for the whole reward
 * and joins again. What binds a block to the pool is its challenge (issued to the member with
 * the pool's share terms, docs/protocol.md 4.15): such a block pays the pool whatever the
 * finder's membership when it arrives, so the cheat gains nothing.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SETTINGS = {
  hexDifficulty: 256n,
  blockIntervalMs: 2_000n,
  poolStrategy: 'pplns',
  poolPplnsWindowFactor: 8,
  poolShareIntervalMs: 1_000n,
} as const;

function pubkey(key: KeyPair): string {
  return formatPublicKey(key.publicKey);
}

function joinPool(v: Validator, key: KeyPair, hashrate: number) {
  return signedInject(
    v,
    key,
    'POST',
    '/pool/join',
    { pubkey: pubkey(key), stake_amount: '0', hashrate },
    { timestamp: v.context.now() },
  );
}

function leavePool(v: Validator, key: KeyPair) {
  return signedInject(v, key, 'POST', '/pool/leave', { pubkey: pubkey(key) }, { timestamp: v.context.now() });
}

/** Every PTM balance of the pool's accounting: the members', the pool's and its fees. */
async function ptm(v: Validator, keys: readonly KeyPair[]): Promise<Record<string, bigint>> {
  return v.context.storage.read(async (tx) => {
    const out: Record<string, bigint> = {};
    for (const account of [...keys.map(pubkey), POOL_REWARD_ACCOUNT, POOL_FEE_ACCOUNT]) {
      out[account] = await tx.ledger.balance(account, 'PTM');
    }
    return out;
  });
}

/** A validator on SQLite in `dir`, with the validator seed fixed, so that its challenges are too. */
async function seededValidator(dir: string, clock: { now: number }, seed: string): Promise<Validator> {
  const storage = await openStorage({ dataDir: dir });
  await storage.transaction((tx) =>
    tx.meta.set('validator_seed', toHex(taggedHash('withholding/seed', utf8(seed)))),
  );
  return testValidator({ ...SETTINGS, now: () => clock.now, storage });
}

describe('block withholding', () => {
  it('a block of pool work submitted alone after leaving pays the pool exactly as the pooled block', async () => {
    const honest = testKey('withhold-exact-honest');
    const cheat = testKey('withhold-exact-cheat');
    const clock = { now: Date.now() };
    const base = mkdtempSync(join(tmpdir(), 'tm-withhold-'));
    dirs.push(base);
    // The common past: both members send a few shares, then the cheat gets a challenge and
    // finds a block on it.
    let challenge: HexChallenge;
    {
      const v = await seededValidator(join(base, 'before'), clock, 'exact');
      for (const key of [honest, cheat]) {
        await register(v, key);
        expect((await joinPool(v, key, 1)).statusCode).toBe(200);
      }
      for (const key of [honest, cheat]) {
        const c = await pooledChallenge(v, key);
        let from = 0;
        for (let i = 0; i < 3; i++) {
          const nonce = findShare(c, key, { block: false, share: true }, from);
          expect((await submitShare(v, shareSubmission(c, key, nonce))).json().kind).toBe('share');
          from = nonce + 1;
        }
      }
      challenge = await pooledChallenge(v, cheat);
      expect(challenge.share_target).toBeDefined();
      await v.close();
    }
    const nonce = findShare(challenge, cheat, { block: true });
    const block = shareSubmission(challenge, cheat, nonce);
    cpSync(join(base, 'before'), join(base, 'pooled'), { recursive: true });
    cpSync(join(base, 'before'), join(base, 'withheld'), { recursive: true });

    // As a member: the block through the share route.
    const pooled = await seededValidator(join(base, 'pooled'), clock, 'exact');
    const viaPool = await submitShare(pooled, block);
    expect(viaPool.json(), viaPool.body).toMatchObject({ kind: 'block' });
    const pooledResult = viaPool.json().block;
    const pooledBalances = await ptm(pooled, [honest, cheat]);
    await pooled.close();

    // The cheat: leaves, submits the same block to the solo route, joins again.
    const withheld = await seededValidator(join(base, 'withheld'), clock, 'exact');
    expect((await leavePool(withheld, cheat)).statusCode).toBe(200);
    const alone = await submit(withheld, block);
    expect(alone.statusCode, alone.body).toBe(200);
    expect((await joinPool(withheld, cheat, 1)).statusCode).toBe(200);
    expect(alone.json()).toEqual(pooledResult);
    expect(alone.json().pool).toBeDefined();
    expect(await ptm(withheld, [honest, cheat])).toEqual(pooledBalances);
    // The honest member was paid for its shares; the cheat got its payout, not the block.
    expect(pooledBalances[pubkey(honest)]).toBeGreaterThan(0n);
    expect(BigInt(Math.round(Number(alone.json().reward) * 1e9))).toBeLessThan(1_000_000_000n);
    const entries = await withheld.context.storage.read((tx) =>
      tx.ledger.list({ pubkey: pubkey(cheat), type: 'mining_reward', limit: 10 }),
    );
    expect(entries).toEqual([]);
    await withheld.close();
  });

  /**
   * The attack as measured in the issue, simulated: an honest member and a withholder with the
   * same hash rate mine the pool's work for 60 blocks (D = 256, moved by the retarget as usual,
   * PPLNS window 8 blocks' worth). The withholder sends its shares like the honest one, but a
   * share that is a block it takes out of the pool as described. The measure is pay per unit of
   * work (the sum of 1 / D over the hashes tried): the withholder's over the honest member's.
   * Each run is seeded (keys, validator seed, clock), so it repeats exactly on any machine; the
   * ratio is noisy from run to run (PPLNS luck over 60 blocks), so RUNS runs are averaged and a
   * one-sided t-test at the 0.5 % level (t = 4.03 for 5 degrees of freedom) must not find the
   * withholder paid more: mean <= 1 + 4.03 x s / sqrt(RUNS).
   * Measured 2026-11-26 (POOL_SIM_LOG=1, WH_SEEDS=1,...,8): with the fix, ratios 1.084, 0.688,
   * 1.035, 0.983, 0.982, 1.116, 1.213, 1.063 (mean 1.02, s 0.155); before it (a member's block
   * paid solo once it had left), 2.50, 1.48, 2.71, 2.66, 2.07, 2.91, 2.75, 2.81 (mean 2.49): the
   * withholder earned two and a half times the honest member's pay per unit of work.
   */
  it('a withholding member earns no more per unit of work than an honest one (seeded runs)', {
    timeout: SOAK_TEST_TIMEOUT_MS,
  }, async () => {
    const BLOCKS = 60;
    const ratios: number[] = [];
    const seeds = (process.env.WH_SEEDS ?? '1,2,3,4,5,6').split(',');
    for (const seed of seeds) {
      const clock = { now: Date.now() };
      const dir = mkdtempSync(join(tmpdir(), 'tm-withhold-sim-'));
      dirs.push(dir);
      const v = await seededValidator(dir, clock, `sim-${seed}`);
      const miners = [
        { name: 'honest', key: testKey(`withhold-${seed}-honest`), cheats: false },
        { name: 'withholder', key: testKey(`withhold-${seed}-withholder`), cheats: true },
      ].map((m) => ({
        ...m,
        challenge: undefined as HexChallenge | undefined,
        nonce: 0,
        work: 0,
        withheld: 0,
      }));
      const RATE = 32;
      for (const m of miners) {
        await register(v, m.key);
        expect((await joinPool(v, m.key, RATE)).statusCode).toBe(200);
      }
      let blocks = 0;
      for (let tick = 0; blocks < BLOCKS; tick++) {
        expect(tick).toBeLessThan(BLOCKS * 50);
        clock.now += 1_000;
        for (const m of miners) {
          m.challenge ??= await pooledChallenge(v, m.key);
          const c = m.challenge;
          for (const h of grind(c, m.key, m.nonce, RATE)) {
            m.work += 1 / c.difficulty;
            if (!h.share) continue;
            const submission = shareSubmission(c, m.key, h.nonce);
            if (h.block && m.cheats) {
              expect((await leavePool(v, m.key)).statusCode).toBe(200);
              const res = await submit(v, submission);
              expect(res.statusCode, res.body).toBe(200);
              expect((await joinPool(v, m.key, RATE)).statusCode).toBe(200);
              m.withheld++;
            } else {
              const res = await submitShare(v, submission);
              if (res.statusCode !== 200) {
                expect(res.json().code, res.body).toBe('share_stale');
                m.challenge = undefined;
                break;
              }
              if (res.json().kind !== 'block') continue;
            }
            blocks++;
            for (const other of miners) other.challenge = undefined;
            break;
          }
          m.nonce = m.challenge === undefined ? 0 : m.nonce + RATE;
        }
      }
      const paid = await ptm(
        v,
        miners.map((m) => m.key),
      );
      const perWork = miners.map((m) => Number(paid[pubkey(m.key)]) / m.work);
      const ratio = perWork[1]! / perWork[0]!;
      ratios.push(ratio);
      if (process.env.POOL_SIM_LOG) {
        console.log(
          JSON.stringify({
            seed,
            blocks,
            withheld: miners[1]!.withheld,
            perWork,
            ratio,
            work: miners.map((m) => m.work),
          }),
        );
      }
      expect(miners[1]!.withheld).toBeGreaterThan(0);
      await v.close();
    }
    // Per run the withholder may be lucky or not; over the runs it earns no more.
    const mean = ratios.reduce((sum, r) => sum + r, 0) / ratios.length;
    const sd = Math.sqrt(ratios.reduce((sum, r) => sum + (r - mean) ** 2, 0) / (ratios.length - 1));
    const bound = 1 + (4.03 * sd) / Math.sqrt(ratios.length);
    expect(
      mean,
      `withholder / honest pay per unit of work: ${ratios.map((r) => r.toFixed(3)).join(', ')} (mean ${mean.toFixed(3)}, s ${sd.toFixed(3)})`,
    ).toBeLessThanOrEqual(bound);
  });
});
