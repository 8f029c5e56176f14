import {
  accruedYield,
  COMMON_REFUSALS,
  FEES_ACCOUNT,
  formatAmount,
  formatPrice,
  type KeyPair,
  lockTerms,
  MARKET_ACCOUNT,
  MARKET_MIN_ORDER_VALUE,
  MARKET_ROUNDING_ACCOUNT,
  MAX_FILLS_PER_ORDER,
  parseAmount,
  parsePrice,
  pplnsScore,
  pplnsScoreWindow,
  pplnsSplit,
  pplnsWeights,
  RESERVE_ACCOUNT,
  ROUTE_LIST,
  STAKE_ACCOUNT,
  swapOut,
  swapPoolAccount,
  TOKEN_SYMBOLS,
  unlockProblem,
  unstakePenalty,
  VAULT_ACCOUNT,
} from '@tensormine/protocol';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { SOAK_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import type { Validator } from '../src/app.js';
import type { EconomyGenesis } from '../src/services/economy.js';
import { HEX_BLOCK_REWARD } from '../src/services/hexchain.js';
import { POOL_FEE_ACCOUNT, POOL_REWARD_ACCOUNT, POOL_STAKE_ACCOUNT } from '../src/services/pool/payout.js';
import { conservation, hex, manualClock, type SignedPost, signedPost } from './economy-helpers.js';
import { testKey, testValidator } from './helpers.js';
import { issue, submit } from './hexchain-mine.js';
import { grind, shareSubmission, submitShare } from './pool-helpers.js';

/**
 * Model-based test: random sequences of economy operations over several keys, run against the
 * validator and against a small reference model written here (the bookkeeping is independent;
 * the arithmetic is the protocol's pure functions, tested on their own). After every step:
 * every answer (status, error code, amounts) equals the model's, every balance of every key and
 * module account equals the model's, no balance is negative, and per token the supply equals
 * genesis plus mining rewards. The mining pool is in play: keys join (escrowing a stake) and
 * leave, members mine shares, and blocks found by members are paid by PPLNS (the model keeps
 * its own list of shares and splits each block with the protocol's pplnsWeights/pplnsSplit),
 * blocks found by other keys are solo rewards.
 */

const KEYS = ['k0', 'k1', 'k2', 'k3'].map((name) => testKey(`model-${name}`));
const DEC: Record<string, number> = { PTM: 9, SOL: 9, USDC: 6 };
const POOLS = [
  { base: 'PTM', quote: 'USDC', base_reserve: '100000', quote_reserve: '5000', fee_bps: 30 },
  { base: 'SOL', quote: 'USDC', base_reserve: '100', quote_reserve: '10000', fee_bps: 25 },
];
const GENESIS: EconomyGenesis = {
  reserve: '0.5',
  pools: POOLS,
  allocations: KEYS.flatMap((k) => [
    { pubkey: hex(k), token: 'PTM', amount: '1000' },
    { pubkey: hex(k), token: 'USDC', amount: '100' },
    { pubkey: hex(k), token: 'SOL', amount: '2' },
  ]),
};

// ---------------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------------

interface MStake {
  id: string;
  owner: string;
  amount: bigint;
  yieldBps: bigint;
  penaltyBps: bigint;
  createdAt: number;
  lockExpiry: number;
  paid: bigint;
  open: boolean;
}
interface MVault {
  id: string;
  owner: string;
  token: string;
  amount: bigint;
  unlockAt: number;
  withdrawn: boolean;
}
interface MOrder {
  id: string;
  serial: number;
  owner: string;
  side: 'buy' | 'sell';
  token: string;
  price: bigint;
  amount: bigint;
  filled: bigint;
  escrow: bigint;
  status: 'open' | 'partially_filled' | 'filled' | 'cancelled';
  /** USDC moved so far: received by a sell, paid by a buy. */
  moved: bigint;
  /** sum(q x |fill price - limit|) over its fills as the incoming order (amount x price units). */
  gain: bigint;
}

type Outcome = { status: 200; body: Record<string, unknown> } | { status: number; code: string };

/** The pool terms of the validator under test (its defaults). */
const POOL_FEE_BPS = 200n;
const POOL_WINDOW_FACTOR = 2n;

class Model {
  readonly balances = new Map<string, bigint>();
  /** Pool members and their stakes. */
  readonly members = new Map<string, bigint>();
  /** Paid shares, oldest first, with their PPLNS score. */
  readonly shares: { pubkey: string; weight: bigint }[] = [];
  readonly stakes: MStake[] = [];
  readonly vaults: MVault[] = [];
  readonly orders: MOrder[] = [];
  swaps = 0;

  constructor(genesis: EconomyGenesis) {
    this.add(RESERVE_ACCOUNT, 'PTM', parseAmount(genesis.reserve, 'PTM'));
    for (const p of genesis.pools) {
      this.add(swapPoolAccount(`${p.base}/${p.quote}`), p.base, parseAmount(p.base_reserve, p.base));
      this.add(swapPoolAccount(`${p.base}/${p.quote}`), p.quote, parseAmount(p.quote_reserve, p.quote));
    }
    for (const a of genesis.allocations ?? []) this.add(a.pubkey, a.token, parseAmount(a.amount, a.token));
  }

  bal(account: string, token: string): bigint {
    return this.balances.get(`${account}|${token}`) ?? 0n;
  }

  add(account: string, token: string, delta: bigint): void {
    const next = this.bal(account, token) + delta;
    if (next < 0n) throw new Error(`model: ${account} ${token} would go negative`);
    this.balances.set(`${account}|${token}`, next);
  }

  move(from: string, to: string, token: string, amount: bigint): void {
    this.add(from, token, -amount);
    this.add(to, token, amount);
  }

  insufficient(account: string, token: string, amount: bigint): Outcome | undefined {
    return this.bal(account, token) < amount ? { status: 409, code: 'insufficient_balance' } : undefined;
  }

  transfer(from: string, to: string, token: string, amount: bigint): Outcome {
    if (from === to) return { status: 400, code: 'validation_failed' };
    if (amount === 0n) return { status: 422, code: 'amount_too_small' };
    const no = this.insufficient(from, token, amount);
    if (no) return no;
    this.move(from, to, token, amount);
    return { status: 200, body: { amount: formatAmount(amount, token), token } };
  }

  stake(owner: string, amount: bigint, days: 0 | 7 | 30, now: number): Outcome {
    if (amount === 0n) return { status: 422, code: 'amount_too_small' };
    const no = this.insufficient(owner, 'PTM', amount);
    if (no) return no;
    const t = lockTerms(days);
    const id = `s-${this.stakes.length + 1}`;
    this.move(owner, STAKE_ACCOUNT, 'PTM', amount);
    this.stakes.push({
      id,
      owner,
      amount,
      yieldBps: t.yieldBps,
      penaltyBps: t.penaltyBps,
      createdAt: now,
      lockExpiry: now + days * 86_400,
      paid: 0n,
      open: true,
    });
    return { status: 200, body: { stake_id: id, amount: formatAmount(amount, 'PTM') } };
  }

  #yield(s: MStake, now: number): bigint {
    const due = accruedYield(s.amount, s.yieldBps, s.createdAt, now) - s.paid;
    const reserve = this.bal(RESERVE_ACCOUNT, 'PTM');
    const d = due > 0n ? due : 0n;
    return d < reserve ? d : reserve;
  }

  claim(owner: string, id: string, now: number): Outcome {
    const s = this.stakes.find((x) => x.id === id && x.owner === owner && x.open);
    if (!s) return { status: 404, code: 'stake_not_found' };
    const pay = this.#yield(s, now);
    this.move(RESERVE_ACCOUNT, owner, 'PTM', pay);
    s.paid += pay;
    return { status: 200, body: { claimed: formatAmount(pay, 'PTM') } };
  }

  unstake(owner: string, id: string, now: number): Outcome {
    const s = this.stakes.find((x) => x.id === id && x.owner === owner && x.open);
    if (!s) return { status: 404, code: 'stake_not_found' };
    const pay = this.#yield(s, now);
    this.move(RESERVE_ACCOUNT, owner, 'PTM', pay);
    const penalty = unstakePenalty(s.amount, s.penaltyBps, s.lockExpiry, now);
    this.move(STAKE_ACCOUNT, owner, 'PTM', s.amount);
    this.move(owner, RESERVE_ACCOUNT, 'PTM', penalty);
    s.paid += pay;
    s.open = false;
    return {
      status: 200,
      body: {
        returned: formatAmount(s.amount - penalty, 'PTM'),
        penalty: formatAmount(penalty, 'PTM'),
        yield_paid: formatAmount(pay, 'PTM'),
      },
    };
  }

  swap(owner: string, from: string, to: string, amount: bigint, min: bigint): Outcome {
    if (amount === 0n) return { status: 422, code: 'amount_too_small' };
    const pool = POOLS.find(
      (p) => (p.base === from && p.quote === to) || (p.base === to && p.quote === from),
    );
    if (!pool) return { status: 404, code: 'swap_pool_not_found' };
    const account = swapPoolAccount(`${pool.base}/${pool.quote}`);
    const m = swapOut(this.bal(account, from), this.bal(account, to), amount, BigInt(pool.fee_bps));
    if (m.amountOut === 0n) return { status: 422, code: 'amount_too_small' };
    if (m.amountOut < min) return { status: 409, code: 'slippage_exceeded' };
    const no = this.insufficient(owner, from, amount);
    if (no) return no;
    this.move(owner, account, from, m.netIn);
    this.move(owner, FEES_ACCOUNT, from, m.fee);
    this.move(account, owner, to, m.amountOut);
    this.swaps++;
    return {
      status: 200,
      body: { to_amount: formatAmount(m.amountOut, to), fee: formatAmount(m.fee, from) },
    };
  }

  vaultDeposit(owner: string, token: string, amount: bigint, unlockAt: number, now: number): Outcome {
    if (amount === 0n) return { status: 422, code: 'amount_too_small' };
    if (unlockProblem(unlockAt, now) !== undefined) return { status: 422, code: 'unlock_time_invalid' };
    const no = this.insufficient(owner, token, amount);
    if (no) return no;
    this.move(owner, VAULT_ACCOUNT, token, amount);
    const id = `v-${this.vaults.length + 1}`;
    this.vaults.push({ id, owner, token, amount, unlockAt, withdrawn: false });
    return { status: 200, body: { vault_id: id, withdrawn: false } };
  }

  vaultWithdraw(owner: string, id: string, now: number): Outcome {
    const v = this.vaults.find((x) => x.id === id && x.owner === owner);
    if (!v) return { status: 404, code: 'vault_not_found' };
    if (v.withdrawn) return { status: 409, code: 'vault_withdrawn' };
    if (now < v.unlockAt) return { status: 409, code: 'vault_locked' };
    this.move(VAULT_ACCOUNT, owner, v.token, v.amount);
    v.withdrawn = true;
    return { status: 200, body: { vault_id: id, withdrawn: true } };
  }

  place(owner: string, side: 'buy' | 'sell', token: string, amount: bigint, price: bigint): Outcome {
    if (amount === 0n || price === 0n) return { status: 422, code: 'amount_too_small' };
    // value(q, p) = q x p / 10^(token decimals + 12) USDC minor units, exactly.
    const unit = 10n ** BigInt(DEC[token]! + 12);
    const down = (n: bigint) => n / unit;
    const up = (n: bigint) => (n + unit - 1n) / unit;
    if (down(amount * price) < MARKET_MIN_ORDER_VALUE) return { status: 422, code: 'order_below_minimum' };
    const escrow = side === 'sell' ? amount : up(amount * price);
    const escrowToken = side === 'sell' ? token : 'USDC';
    const no = this.insufficient(owner, escrowToken, escrow);
    if (no) return no;
    this.move(owner, MARKET_ACCOUNT, escrowToken, escrow);
    const serial = this.orders.length + 1;
    const taker: MOrder = {
      id: `o-${serial}`,
      serial,
      owner,
      side,
      token,
      price,
      amount,
      filled: 0n,
      escrow,
      status: 'open',
      moved: 0n,
      gain: 0n,
    };
    this.orders.push(taker);
    // What an order has moved after its fills: a sell floor(value(filled, limit)) + floor(gain),
    // a buy ceil(value(filled, limit)) - floor(gain) (docs/economy.md, "rounding").
    const due = (o: MOrder) =>
      o.side === 'sell' ? down(o.filled * o.price) + down(o.gain) : up(o.filled * o.price) - down(o.gain);
    const escrowOf = (o: MOrder) => (o.side === 'sell' ? o.token : 'USDC');
    // Filled: the rest of a buy's escrow goes back. About to rest (a maker after its fill, the
    // taker once matching stops) with a remainder worth less than the minimum at its limit: the
    // remainder is returned and the order closed.
    const close = (o: MOrder, rests: boolean) => {
      const done = o.filled === o.amount;
      if (!done && (!rests || down((o.amount - o.filled) * o.price) >= MARKET_MIN_ORDER_VALUE)) {
        o.status = o.filled > 0n ? 'partially_filled' : 'open';
        return;
      }
      if (o.escrow > 0n) this.move(MARKET_ACCOUNT, o.owner, escrowOf(o), o.escrow);
      o.escrow = 0n;
      o.status = done ? 'filled' : 'cancelled';
    };
    const fills: { counter_order_id: string; amount: string; price: string }[] = [];
    const resting = (o: MOrder) => o.status === 'open' || o.status === 'partially_filled';
    const book = this.orders
      .filter((o) => o !== taker && resting(o) && o.side !== side && o.token === token && o.owner !== owner)
      .sort((a, b) =>
        a.price === b.price
          ? a.serial - b.serial
          : (side === 'buy' ? a.price < b.price : a.price > b.price)
            ? -1
            : 1,
      );
    for (const maker of book) {
      if (!resting(taker) || fills.length >= MAX_FILLS_PER_ORDER) break;
      if (side === 'buy' ? maker.price > price : maker.price < price) break;
      const rest = taker.amount - taker.filled;
      const makerRest = maker.amount - maker.filled;
      const q = rest < makerRest ? rest : makerRest;
      const buyer = side === 'buy' ? taker : maker;
      const seller = side === 'buy' ? maker : taker;
      this.move(MARKET_ACCOUNT, buyer.owner, token, q);
      taker.filled += q;
      maker.filled += q;
      taker.gain += q * (price > maker.price ? price - maker.price : maker.price - price);
      const pays = due(buyer) - buyer.moved;
      const receives = due(seller) - seller.moved;
      buyer.moved += pays;
      seller.moved += receives;
      // What the buyer paid beyond what the seller received is the market's rounding.
      this.move(MARKET_ACCOUNT, MARKET_ROUNDING_ACCOUNT, 'USDC', pays - receives);
      this.move(MARKET_ACCOUNT, seller.owner, 'USDC', receives);
      buyer.escrow -= pays;
      seller.escrow -= q;
      close(buyer, buyer === maker);
      close(seller, seller === maker);
      fills.push({
        counter_order_id: maker.id,
        amount: formatAmount(q, token),
        price: formatPrice(maker.price),
      });
    }
    if (resting(taker)) close(taker, true);
    return {
      status: 200,
      body: {
        order_id: taker.id,
        status: taker.status,
        filled_amount: formatAmount(taker.filled, token),
        fills,
      },
    };
  }

  poolJoin(who: string, stake: bigint): Outcome {
    if (this.members.has(who)) return { status: 409, code: 'pool_already_member' };
    if (stake > 0n) {
      const no = this.insufficient(who, 'PTM', stake);
      if (no) return no;
      this.move(who, POOL_STAKE_ACCOUNT, 'PTM', stake);
    }
    this.members.set(who, stake);
    return { status: 200, body: { joined: true, stake_amount: formatAmount(stake, 'PTM') } };
  }

  poolLeave(who: string): Outcome {
    const stake = this.members.get(who);
    if (stake === undefined) return { status: 409, code: 'pool_not_member' };
    if (stake > 0n) this.move(POOL_STAKE_ACCOUNT, who, 'PTM', stake);
    this.members.delete(who);
    return { status: 200, body: { left: true, returned_stake: formatAmount(stake, 'PTM') } };
  }

  /** A member's share (score S / D). */
  share(who: string, weight: bigint): void {
    this.shares.push({ pubkey: who, weight });
  }

  /** A member's block: its share, then the reward minted to the pool and split by PPLNS. */
  poolBlock(finder: string, weight: bigint): bigint {
    this.share(finder, weight);
    const weights = pplnsWeights([...this.shares].reverse(), pplnsScoreWindow(POOL_WINDOW_FACTOR));
    const split = pplnsSplit({ reward: HEX_BLOCK_REWARD, feeBps: POOL_FEE_BPS, weights, finder });
    this.add(POOL_REWARD_ACCOUNT, 'PTM', HEX_BLOCK_REWARD);
    for (const p of split.payouts) this.move(POOL_REWARD_ACCOUNT, p.pubkey, 'PTM', p.amount);
    this.move(POOL_REWARD_ACCOUNT, POOL_FEE_ACCOUNT, 'PTM', split.fee);
    return split.payouts.find((p) => p.pubkey === finder)?.amount ?? 0n;
  }

  /** A block of a key that is not a member: the solo reward. */
  soloBlock(finder: string): void {
    this.add(finder, 'PTM', HEX_BLOCK_REWARD);
  }

  cancel(owner: string, id: string): Outcome {
    const o = this.orders.find((x) => x.id === id && x.owner === owner);
    if (!o) return { status: 404, code: 'order_not_found' };
    if (o.status === 'filled' || o.status === 'cancelled') return { status: 409, code: 'order_not_open' };
    const token = o.side === 'sell' ? o.token : 'USDC';
    this.move(MARKET_ACCOUNT, owner, token, o.escrow);
    const returned = o.escrow;
    o.escrow = 0n;
    o.status = 'cancelled';
    return { status: 200, body: { returned: { token, amount: formatAmount(returned, token) } } };
  }
}

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

const key = fc.integer({ min: 0, max: KEYS.length - 1 });
const token = fc.constantFrom('PTM', 'USDC', 'SOL');
/** Amounts in minor units, mostly small, sometimes zero or more than anyone holds. */
const minor = (t: string) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(0n) },
    { weight: 12, arbitrary: fc.bigInt({ min: 1n, max: 50n * 10n ** BigInt(DEC[t]!) }) },
    { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 5000n * 10n ** BigInt(DEC[t]!) }) },
  );
const withToken = <T>(f: (t: string) => fc.Arbitrary<T>) =>
  token.chain((t) => f(t).map((v) => [t, v] as const));

type Op =
  | { op: 'transfer'; from: number; to: number; token: string; amount: bigint }
  | { op: 'stake'; who: number; amount: bigint; days: 0 | 7 | 30 }
  | { op: 'claim' | 'unstake'; who: number; pick: number }
  | { op: 'swap'; who: number; from: string; to: string; amount: bigint; minShare: number }
  | { op: 'vaultDeposit'; who: number; token: string; amount: bigint; ahead: number }
  | { op: 'vaultWithdraw'; who: number; pick: number }
  | { op: 'place'; who: number; side: 'buy' | 'sell'; token: string; amount: bigint; priceIdx: number }
  | { op: 'cancel'; who: number; pick: number }
  | { op: 'time'; seconds: number }
  | { op: 'poolJoin'; who: number; amount: bigint }
  | { op: 'poolLeave'; who: number }
  | { op: 'poolMine'; who: number; hashes: number }
  | { op: 'retry' };

const PRICES: Record<string, string[]> = {
  PTM: ['0.04', '0.049', '0.05', '0.051', '0.06', '0.000000001', '0.0512345678901'],
  SOL: ['90', '99.5', '100', '100.25', '110'],
};

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(key, key, withToken(minor))
      .map(([from, to, [t, amount]]) => ({ op: 'transfer' as const, from, to, token: t, amount })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(key, minor('PTM'), fc.constantFrom(0 as const, 7 as const, 30 as const))
      .map(([who, amount, days]) => ({ op: 'stake' as const, who, amount, days })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(key, fc.nat(20), fc.constantFrom('claim' as const, 'unstake' as const))
      .map(([who, pick, op]) => ({ op, who, pick })),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        key,
        fc.constantFrom(['PTM', 'USDC'], ['USDC', 'PTM'], ['SOL', 'USDC'], ['USDC', 'SOL'], ['PTM', 'SOL']),
        fc.nat(110),
      )
      .chain(([who, [from, to], minShare]) =>
        minor(from!).map((amount) => ({ op: 'swap' as const, who, from: from!, to: to!, amount, minShare })),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(key, withToken(minor), fc.integer({ min: -10, max: 7 * 86_400 }))
      .map(([who, [t, amount], ahead]) => ({ op: 'vaultDeposit' as const, who, token: t, amount, ahead })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(key, fc.nat(20)).map(([who, pick]) => ({ op: 'vaultWithdraw' as const, who, pick })),
  },
  {
    weight: 5,
    arbitrary: fc
      .tuple(key, fc.constantFrom('buy' as const, 'sell' as const), fc.constantFrom('PTM', 'SOL'), fc.nat(6))
      .chain(([who, side, t, priceIdx]) =>
        fc
          .bigInt({ min: 0n, max: (t === 'PTM' ? 200n : 1n) * 10n ** 9n })
          .map((amount) => ({ op: 'place' as const, who, side, token: t, amount, priceIdx })),
      ),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(key, fc.nat(40)).map(([who, pick]) => ({ op: 'cancel' as const, who, pick })),
  },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 1, max: 3 * 86_400 }).map((seconds) => ({ op: 'time' as const, seconds })),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'retry' as const }) },
  {
    weight: 2,
    arbitrary: fc.tuple(key, minor('PTM')).map(([who, amount]) => ({ op: 'poolJoin' as const, who, amount })),
  },
  { weight: 1, arbitrary: key.map((who) => ({ op: 'poolLeave' as const, who })) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(key, fc.integer({ min: 1, max: 160 }))
      .map(([who, hashes]) => ({ op: 'poolMine' as const, who, hashes })),
  },
);

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

/**
 * The codes a POST route may answer by docs/api.md "Refusals" (the route table): the common
 * ones and the route's own. Every refusal the model run meets must be one of them.
 */
function documentedRefusals(url: string): Set<string> {
  const route = ROUTE_LIST.find((r) => r.service === 'validator' && r.method === 'POST' && r.url === url);
  if (route?.refusals === undefined) throw new Error(`no documented refusals for POST ${url}`);
  return new Set(
    [...COMMON_REFUSALS.request, ...COMMON_REFUSALS.signed, ...COMMON_REFUSALS.any, ...route.refusals].map(
      (r) => r.code,
    ),
  );
}

function outcomeOf(res: LightMyRequestResponse, url: string): Outcome {
  const body = res.json();
  if (res.statusCode === 200) return { status: 200, body };
  expect(
    documentedRefusals(url).has(body.code),
    `POST ${url} answered ${body.code}, not in docs/api.md`,
  ).toBe(true);
  return { status: res.statusCode, code: body.code };
}

function expectOutcome(actual: Outcome, expected: Outcome, what: string): void {
  if (expected.status === 200) {
    expect(actual.status, `${what}: ${JSON.stringify(actual)}`).toBe(200);
    expect((actual as { body: Record<string, unknown> }).body, what).toMatchObject(
      (expected as { body: Record<string, unknown> }).body,
    );
  } else {
    expect(actual, what).toEqual(expected);
  }
}

async function runSequence(ops: readonly Op[]): Promise<void> {
  const clock = manualClock();
  // Block difficulty 64 (then retargeted every 12 blocks); a member's first share difficulty is
  // 16 (it declares 1 H/s), so a few dozen hashes find shares and blocks.
  const v: Validator = await testValidator({
    now: clock.now,
    genesis: GENESIS,
    poolStrategy: 'pplns',
    hexDifficulty: 64n,
  });
  expect(BigInt(v.config.poolFeeBps)).toBe(POOL_FEE_BPS);
  expect(BigInt(v.config.poolPplnsWindowFactor)).toBe(POOL_WINDOW_FACTOR);
  for (const k of KEYS) {
    const res = await signedPost(
      k,
      '/devices/register',
      { pubkey: hex(k), device_type: 'native' },
      {
        timestamp: clock.now(),
      },
    ).send(v);
    expect(res.statusCode, res.body).toBe(200);
  }
  const model = new Model(GENESIS);
  const accounts = [
    ...KEYS.map(hex),
    RESERVE_ACCOUNT,
    STAKE_ACCOUNT,
    VAULT_ACCOUNT,
    MARKET_ACCOUNT,
    MARKET_ROUNDING_ACCOUNT,
    FEES_ACCOUNT,
    ...POOLS.map((p) => swapPoolAccount(`${p.base}/${p.quote}`)),
    POOL_STAKE_ACCOUNT,
    POOL_REWARD_ACCOUNT,
    POOL_FEE_ACCOUNT,
  ];
  let last: { request: SignedPost; response: LightMyRequestResponse } | undefined;
  try {
    for (const [step, op] of ops.entries()) {
      const what = `step ${step} ${JSON.stringify(op, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))}`;
      const now = Math.floor(clock.now() / 1000);
      // Pool join and leave are not exactly-once operations (a resent copy is a replay): `retry`
      // resends only the others.
      const send = async (k: KeyPair, url: string, body: unknown, retriable = true) => {
        const request = signedPost(k, url, body, { timestamp: clock.now() });
        const response = await request.send(v);
        if (retriable) last = { request, response };
        return outcomeOf(response, url);
      };
      // Mostly one of the key's own records, sometimes anyone's, sometimes an unknown id.
      const pickId = (
        list: readonly { id: string; owner: string }[],
        owner: string,
        pick: number,
        prefix: string,
      ) => {
        const own = list.filter((x) => x.owner === owner);
        if (pick % 4 !== 3 && own.length > 0) return own[pick % own.length]!.id;
        return list.length > 0 && pick % 8 !== 7 ? list[pick % list.length]!.id : `${prefix}-999`;
      };
      switch (op.op) {
        case 'transfer': {
          const from = KEYS[op.from]!;
          const to = op.to === op.from ? from : KEYS[op.to]!;
          const actual = await send(from, '/transfer', {
            from: hex(from),
            to: hex(to),
            token: op.token,
            amount: formatAmount(op.amount, op.token),
          });
          expectOutcome(actual, model.transfer(hex(from), hex(to), op.token, op.amount), what);
          break;
        }
        case 'stake': {
          const k = KEYS[op.who]!;
          const actual = await send(k, '/stake', {
            amount: formatAmount(op.amount, 'PTM'),
            lock_period_days: op.days,
            pubkey: hex(k),
          });
          expectOutcome(actual, model.stake(hex(k), op.amount, op.days, now), what);
          break;
        }
        case 'claim':
        case 'unstake': {
          const k = KEYS[op.who]!;
          const id = pickId(model.stakes, hex(k), op.pick, 's');
          const actual = await send(k, op.op === 'claim' ? '/claim' : '/unstake', {
            stake_id: id,
            pubkey: hex(k),
          });
          const expected = op.op === 'claim' ? model.claim(hex(k), id, now) : model.unstake(hex(k), id, now);
          expectOutcome(actual, expected, what);
          break;
        }
        case 'swap': {
          const k = KEYS[op.who]!;
          // min_received: a share (0..110 %) of what the model says the swap yields now.
          const pool = POOLS.find(
            (p) => [p.base, p.quote].includes(op.from) && [p.base, p.quote].includes(op.to),
          );
          let min = 0n;
          if (pool && op.amount > 0n) {
            const account = swapPoolAccount(`${pool.base}/${pool.quote}`);
            const m = swapOut(
              model.bal(account, op.from),
              model.bal(account, op.to),
              op.amount,
              BigInt(pool.fee_bps),
            );
            min = (m.amountOut * BigInt(op.minShare)) / 100n;
          }
          const actual = await send(k, '/swap/execute', {
            from_token: op.from,
            to_token: op.to,
            amount: formatAmount(op.amount, op.from),
            min_received: formatAmount(min, op.to),
            pubkey: hex(k),
          });
          expectOutcome(actual, model.swap(hex(k), op.from, op.to, op.amount, min), what);
          break;
        }
        case 'vaultDeposit': {
          const k = KEYS[op.who]!;
          const actual = await send(k, '/vault/deposit', {
            token: op.token,
            amount: formatAmount(op.amount, op.token),
            unlock_at: now + op.ahead,
            pubkey: hex(k),
          });
          expectOutcome(actual, model.vaultDeposit(hex(k), op.token, op.amount, now + op.ahead, now), what);
          break;
        }
        case 'vaultWithdraw': {
          const k = KEYS[op.who]!;
          const id = pickId(model.vaults, hex(k), op.pick, 'v');
          const actual = await send(k, '/vault/withdraw', { vault_id: id, pubkey: hex(k) });
          expectOutcome(actual, model.vaultWithdraw(hex(k), id, now), what);
          break;
        }
        case 'place': {
          const k = KEYS[op.who]!;
          const priceText = PRICES[op.token]![op.priceIdx % PRICES[op.token]!.length]!;
          const actual = await send(k, '/marketplace/order', {
            type: op.side,
            token: op.token,
            amount: formatAmount(op.amount, op.token),
            price: priceText,
            pubkey: hex(k),
          });
          const price = parsePrice(priceText);
          expectOutcome(actual, model.place(hex(k), op.side, op.token, op.amount, price), what);
          break;
        }
        case 'cancel': {
          const k = KEYS[op.who]!;
          const id = pickId(model.orders, hex(k), op.pick, 'o');
          const actual = await send(k, '/marketplace/cancel', { order_id: id, pubkey: hex(k) });
          expectOutcome(actual, model.cancel(hex(k), id), what);
          break;
        }
        case 'time':
          clock.advance(op.seconds);
          break;
        case 'poolJoin': {
          const k = KEYS[op.who]!;
          const actual = await send(
            k,
            '/pool/join',
            {
              pubkey: hex(k),
              stake_amount: formatAmount(op.amount, 'PTM'),
              hashrate: 1,
            },
            false,
          );
          expectOutcome(actual, model.poolJoin(hex(k), op.amount), what);
          break;
        }
        case 'poolLeave': {
          const k = KEYS[op.who]!;
          const actual = await send(k, '/pool/leave', { pubkey: hex(k) }, false);
          expectOutcome(actual, model.poolLeave(hex(k)), what);
          break;
        }
        case 'poolMine': {
          // A member sends every share of `hashes` nonces (up to its first block); another key
          // mines on until a block, which is its own (solo).
          const k = KEYS[op.who]!;
          const challenge = await issue(v, { miner_pubkey: hex(k) });
          const member = model.members.has(hex(k));
          expect(challenge.share_difficulty !== undefined, what).toBe(member);
          if (!member) {
            let nonce = 0;
            for (; ; nonce += 256) {
              const found = grind(challenge, k, nonce, 256).find((h) => h.block);
              if (found === undefined) continue;
              const res = await submit(v, shareSubmission(challenge, k, found.nonce));
              expect(res.statusCode, `${what}: ${res.body}`).toBe(200);
              expect(res.json().pool, what).toBeUndefined();
              model.soloBlock(hex(k));
              break;
            }
            break;
          }
          const weight = pplnsScore(BigInt(challenge.share_difficulty!), BigInt(challenge.difficulty));
          for (const h of grind(challenge, k, 0, op.hashes)) {
            if (!h.share) continue;
            const res = await submitShare(v, shareSubmission(challenge, k, h.nonce));
            expect(res.statusCode, `${what}: ${res.body}`).toBe(200);
            const body = res.json();
            expect(body.kind, what).toBe(h.block ? 'block' : 'share');
            if (!h.block) {
              model.share(hex(k), weight);
              continue;
            }
            const payout = model.poolBlock(hex(k), weight);
            expect(body.block.reward, what).toBe(formatAmount(payout, 'PTM'));
            expect(body.block.pool.finder_payout, what).toBe(formatAmount(payout, 'PTM'));
            break; // the cell is taken: the rest of this challenge would be stale
          }
          break;
        }
        case 'retry': {
          if (!last) break;
          // The identical signed request again: the stored result, or the replay refusal.
          const again = await last.request.send(v);
          if (last.response.statusCode === 200) {
            expect(again.statusCode, what).toBe(200);
            expect(again.json(), what).toEqual(last.response.json());
          } else {
            // A refused request stored nothing and recorded no nonce: its copy is checked again
            // (the state did not change, so it is refused the same way), or refused as expired
            // once the clock has moved past the signed-request window.
            const first = [last.response.statusCode, last.response.json().code];
            expect([first, [401, 'request_expired']], what).toContainEqual([
              again.statusCode,
              again.json().code,
            ]);
          }
          break;
        }
      }
      // After every step: every balance equals the model's (none negative), and conservation.
      const stored = await v.context.storage.read(async (tx) => {
        const out = new Map<string, bigint>();
        for (const account of accounts) {
          for (const b of await tx.ledger.balances(account)) out.set(`${account}|${b.token}`, b.amount);
        }
        return out;
      });
      // Compared here, then one assertion listing every difference: 96 expect() calls a step
      // (about 350,000 in the test) cost seconds of CPU and said no more.
      const wrong: string[] = [];
      for (const account of accounts) {
        for (const t of TOKEN_SYMBOLS) {
          const actual = stored.get(`${account}|${t}`) ?? 0n;
          const wanted = model.bal(account, t);
          if (actual < 0n) wrong.push(`${account} ${t} negative: ${actual}`);
          if (actual !== wanted) wrong.push(`balance of ${account} in ${t}: ${actual}, the model ${wanted}`);
        }
      }
      expect(wrong, what).toEqual([]);
      const { supply, issued } = await conservation(v);
      expect(supply, what).toEqual(issued);
    }
  } finally {
    await v.close();
  }
}

describe('the economy against a reference model', () => {
  it('answers like the model, keeps every balance equal to it and conserves every token', {
    timeout: SOAK_TEST_TIMEOUT_MS,
  }, async () => {
    await fc.assert(fc.asyncProperty(fc.array(opArb, { minLength: 300, maxLength: 600 }), runSequence), {
      numRuns: Number(process.env.ECONOMY_MODEL_RUNS ?? 8),
      endOnFailure: true,
    });
  });
});
