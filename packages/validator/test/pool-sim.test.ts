import { formatPublicKey, type HexChallenge, type KeyPair, type PoolInfo } from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import type { Validator } from '../src/app.js';
import { POOL_FEE_ACCOUNT } from '../src/services/pool/payout.js';
import { register, testKey, testValidator } from './helpers.js';
import { conservation, grind, join, pooledChallenge, shareSubmission, submitShare } from './pool-helpers.js';

/**
 * A pool of simulated miners against an in-process validator with a fake clock. Each tick every
 * active miner hashes `rate` nonces of its current challenge and sends every share it finds;
 * a share that is a block is the pool's block. Work is counted in hashes, the only honest
 * measure of it; pay is what pool_payout credited.
 */

interface SimMiner {
  readonly name: string;
  readonly key: KeyPair;
  readonly rate: number;
  /** Whether it mines in this tick (ticks since the pool's last block). */
  readonly active: (ticksSinceBlock: number) => boolean;
  challenge: HexChallenge | undefined;
  nonce: number;
  hashes: number;
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
    expect((await join(v, m.key)).statusCode).toBe(200);
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
        m.hashes++;
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
  return { blocks, work: new Map(miners.map((m) => [m.name, m.hashes])), paid };
}

function fractions<T extends number | bigint>(values: Map<string, T>): Map<string, number> {
  let total = 0;
  for (const value of values.values()) total += Number(value);
  return new Map([...values].map(([k, value]) => [k, Number(value) / total]));
}

function miner(name: string, rate: number, active: (t: number) => boolean = () => true): SimMiner {
  return { name, key: testKey(`pool-sim-${name}`), rate, active, challenge: undefined, nonce: 0, hashes: 0 };
}

/**
 * The bound: block difficulty 256, window 8 x 256 = 2048 difficulty units (about 40 to 130
 * shares). Measured over 600-block runs the paid fractions were within 0.011 of the work
 * fractions (and the hopper at most 0.026 above its work); 400 blocks, as here, has a standard
 * deviation of about 0.012. We allow 0.05 absolute (about 4 sigma).
 */
const BOUND = 0.05;

/**
 * The hopper's pay is noisier: its work comes in bursts right after blocks, so its shares are
 * correlated with the block times. Five runs of 300 to 400 blocks gave +0.002, +0.007, +0.026,
 * +0.034 and +0.080 over its work fraction (mean +0.03): within 0.05 most of the time, once
 * outside. We allow 0.10 here; whether a small positive bias remains is an open question (see
 * the report of issue 11), so this test guards against a gross hopping gain, not a 3 % one.
 */
const HOPPER_BOUND = 0.1;

describe('pooled mining simulation (PPLNS)', () => {
  it('pays three miners with hash rates 1:2:5 in proportion to their work', {
    timeout: 240_000,
  }, async () => {
    const clock = { now: Date.now() };
    const v = await testValidator({
      now: () => clock.now,
      hexDifficulty: 256n,
      blockIntervalMs: 2_000n,
      poolStrategy: 'pplns',
      poolPplnsWindowFactor: 8,
      poolShareIntervalMs: 1_000n,
    });
    const miners = [miner('one', 16), miner('two', 32), miner('five', 80)];
    const result = await simulate(v, clock, miners, 400);
    const work = fractions(result.work);
    if (process.env.POOL_SIM_LOG)
      console.log(
        JSON.stringify({ blocks: result.blocks, work: [...work], paid: [...fractions(result.paid)] }),
      );
    const paid = fractions(result.paid);
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
  });

  it('pays a pool hopper (mining only right after each block) no more than its work', {
    timeout: 240_000,
  }, async () => {
    const clock = { now: Date.now() };
    const v = await testValidator({
      now: () => clock.now,
      hexDifficulty: 256n,
      blockIntervalMs: 2_000n,
      poolStrategy: 'pplns',
      poolPplnsWindowFactor: 8,
      poolShareIntervalMs: 1_000n,
    });
    const miners = [miner('steady', 48), miner('hopper', 96, (t) => t < 1)];
    const result = await simulate(v, clock, miners, 400);
    const work = fractions(result.work);
    if (process.env.POOL_SIM_LOG)
      console.log(
        JSON.stringify({ blocks: result.blocks, work: [...work], paid: [...fractions(result.paid)] }),
      );
    const paid = fractions(result.paid);
    const w = work.get('hopper') ?? 0;
    const p = paid.get('hopper') ?? 0;
    expect(p, `hopper: paid ${p.toFixed(4)} for ${w.toFixed(4)} of the work`).toBeLessThan(w + HOPPER_BOUND);
  });
});
