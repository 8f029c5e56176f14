import { formatPublicKey, type HexChallenge, type KeyPair, type PoolInfo } from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import { SLOW_TEST_TIMEOUT_MS, SOAK_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import type { Validator } from '../src/app.js';
import { POOL_FEE_ACCOUNT } from '../src/services/pool/payout.js';
import { register, testKey, testValidator } from './helpers.js';
import { conservation, grind, join, pooledChallenge, shareSubmission, submitShare } from './pool-helpers.js';

/**
 * A pool of simulated miners against an in-process validator with a fake clock. Each tick every
 * active miner hashes `rate` nonces of its current challenge and sends every share it finds;
 * a share that is a block is the pool's block. The block difficulty D is retargeted by the
 * chain as usual (every 12 blocks toward one block per 2 ticks), so it moves during a run.
 *
 * Work is measured as what it was worth: each hash tried counts 1 / D, D the block difficulty
 * of the challenge it was tried on (the expected number of blocks it stands for). A raw hash
 * count would be the wrong yardstick whenever D moves: a hash at D = 128 is worth twice a hash
 * at D = 256, and a miner whose work clusters where D is low (the hopper below: its work is a
 * fixed burst per block, so it does more of the pool's work when blocks come fast) would seem
 * overpaid. Pay is what pool_payout credited.
 */

interface SimMiner {
  readonly name: string;
  readonly key: KeyPair;
  readonly rate: number;
  /** Whether it mines in this tick (ticks since the pool's last block). */
  readonly active: (ticksSinceBlock: number) => boolean;
  challenge: HexChallenge | undefined;
  nonce: number;
  /** Sum over the hashes it tried of 1 / D. */
  work: number;
}

interface SimResult {
  readonly blocks: number;
  readonly work: Map<string, number>;
  readonly paid: Map<string, bigint>;
}

const TICK_MS = 1_000;

async function simulate(
  v: Validator,
  clock: { now: number },
  miners: SimMiner[],
  blocksWanted: number,
): Promise<SimResult> {
  for (const m of miners) {
    await register(v, m.key);
    // Declares its rate: the first share difficulty is one share per tick (then vardiff).
    expect((await join(v, m.key, '0', m.rate)).statusCode).toBe(200);
  }
  let blocks = 0;
  let sinceBlock = 0;
  for (let tick = 0; blocks < blocksWanted; tick++) {
    expect(tick).toBeLessThan(blocksWanted * 50);
    clock.now += TICK_MS;
    for (const m of miners) {
      if (!m.active(sinceBlock)) continue;
      m.challenge ??= await pooledChallenge(v, m.key);
      const hashes = grind(m.challenge, m.key, m.nonce, m.rate);
      m.nonce += m.rate;
      // Work is the hashes actually tried: the rest of the tick after a block or a stale share
      // is on a new challenge, next tick.
      for (const h of hashes) {
        m.work += 1 / m.challenge.difficulty;
        if (!h.share) continue;
        const res = await submitShare(v, shareSubmission(m.challenge, m.key, h.nonce));
        if (res.statusCode === 200 && res.json().kind === 'block') {
          blocks++;
          sinceBlock = -1;
          for (const other of miners) other.challenge = undefined; // the lattice moved: new work
          break;
        }
        if (res.statusCode !== 200) {
          expect(res.json().code, res.body).toBe('share_stale');
          m.challenge = undefined;
          break;
        }
      }
      if (m.challenge === undefined) m.nonce = 0;
    }
    sinceBlock++;
  }
  const paid = new Map<string, bigint>();
  await v.context.storage.read(async (tx) => {
    for (const m of miners)
      paid.set(m.name, await tx.pool.paidTotal(formatPublicKey(m.key.publicKey), 'PTM'));
  });
  return { blocks, work: new Map(miners.map((m) => [m.name, m.work])), paid };
}

function fractions<T extends number | bigint>(values: Map<string, T>): Map<string, number> {
  let total = 0;
  for (const value of values.values()) total += Number(value);
  return new Map([...values].map(([k, value]) => [k, Number(value) / total]));
}

function miner(
  seed: number,
  name: string,
  rate: number,
  active: (t: number) => boolean = () => true,
): SimMiner {
  return {
    name,
    key: testKey(`pool-sim-${seed}-${name}`),
    rate,
    active,
    challenge: undefined,
    nonce: 0,
    work: 0,
  };
}

function simValidator(clock: { now: number }): Promise<Validator> {
  return testValidator({
    now: () => clock.now,
    hexDifficulty: 256n,
    blockIntervalMs: 2_000n,
    poolStrategy: 'pplns',
    poolPplnsWindowFactor: 8,
    poolShareIntervalMs: 1_000n,
  });
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

function sampleSd(xs: readonly number[]): number {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

/**
 * 1:2:5, one run of 400 blocks (window 8 blocks' worth). Six runs of 400 blocks,
 * seeds 1 to 6 (measured 2026-11-24 with this file, POOL_SIM_SEED and POOL_SIM_LOG): paid minus
 * work fraction had a sample standard deviation of 0.007 (one), 0.012 (two) and 0.017 (five),
 * the largest deviation 0.026, the means +0.003, -0.008 and +0.006 (none significant at 6
 * runs). We allow 0.06: 3.5 standard deviations of the noisiest miner, so an honest run fails
 * less than once in a thousand while a miner paid 6 % of the pool's pay beyond its work fails.
 */
const BOUND = 0.06;

/**
 * The hopper: RUNS runs (seeds 1..RUNS) of HOPPER_BLOCKS blocks. Its excess, paid minus work
 * fraction, is averaged over the runs; the test fails when the mean is above
 * T_ONE_SIDED x s / sqrt(RUNS), s the runs' sample standard deviation: a one-sided t-test at
 * the 0.5 % level of "the hopper earns no more than its work" (t quantile 4.03 for 5 degrees
 * of freedom). Before shares were scored by S / D (protocol 4.15) the excess was +0.011 on
 * average over 8 runs of 400 blocks (s = 0.012; +0.032 against raw hash counts); since then,
 * see docs/protocol.md 4.15 for the measured mean and spread.
 */
const RUNS = 6;
const HOPPER_BLOCKS = 300;
const T_ONE_SIDED = 4.03;

describe('pooled mining simulation (PPLNS)', () => {
  it('pays three miners with hash rates 1:2:5 in proportion to their work', {
    timeout: SLOW_TEST_TIMEOUT_MS,
  }, async () => {
    const clock = { now: Date.now() };
    const v = await simValidator(clock);
    const seed = Number(process.env.POOL_SIM_SEED ?? 1);
    const miners = [miner(seed, 'one', 16), miner(seed, 'two', 32), miner(seed, 'five', 80)];
    const result = await simulate(v, clock, miners, 400);
    const work = fractions(result.work);
    const paid = fractions(result.paid);
    if (process.env.POOL_SIM_LOG)
      console.log(JSON.stringify({ blocks: result.blocks, work: [...work], paid: [...paid] }));
    for (const m of miners) {
      const w = work.get(m.name) ?? 0;
      const p = paid.get(m.name) ?? 0;
      expect(
        Math.abs(p - w),
        `${m.name}: paid ${p.toFixed(4)} of the pay for ${w.toFixed(4)} of the work`,
      ).toBeLessThan(BOUND);
    }
    // Exactly: everything minted is in some account; the pool kept exactly its fee.
    const { minted, total } = await conservation(v);
    expect(total).toBe(minted);
    const info = (await v.inject('/pool')).json() as PoolInfo;
    expect(info.blocks_found).toBe(result.blocks);
    const fees = await v.context.storage.read((tx) => tx.ledger.balance(POOL_FEE_ACCOUNT, 'PTM'));
    let paidTotal = 0n;
    for (const value of result.paid.values()) paidTotal += value;
    expect(paidTotal + fees).toBe(minted);
    await v.close();
  });

  it('pays a pool hopper (mining only right after each block) no more than its work', {
    timeout: SOAK_TEST_TIMEOUT_MS,
  }, async () => {
    const excess: number[] = [];
    for (let seed = 1; seed <= RUNS; seed++) {
      const clock = { now: Date.now() };
      const v = await simValidator(clock);
      const miners = [miner(seed, 'steady', 48), miner(seed, 'hopper', 96, (t) => t < 1)];
      const result = await simulate(v, clock, miners, HOPPER_BLOCKS);
      await v.close();
      const w = fractions(result.work).get('hopper') ?? 0;
      const p = fractions(result.paid).get('hopper') ?? 0;
      excess.push(p - w);
      if (process.env.POOL_SIM_LOG)
        console.log(JSON.stringify({ seed, blocks: result.blocks, work: w, paid: p }));
    }
    const m = mean(excess);
    const s = sampleSd(excess);
    const bound = (T_ONE_SIDED * s) / Math.sqrt(RUNS);
    if (process.env.POOL_SIM_LOG) console.log(JSON.stringify({ excess, mean: m, sd: s, bound }));
    expect(
      m,
      `hopper: paid minus work fraction over ${RUNS} runs: ${excess.map((x) => x.toFixed(4)).join(', ')} (mean ${m.toFixed(4)}, s ${s.toFixed(4)})`,
    ).toBeLessThanOrEqual(bound);
    // And no single run is grossly off either way.
    for (const x of excess) expect(Math.abs(x)).toBeLessThan(0.08);
  });
});
