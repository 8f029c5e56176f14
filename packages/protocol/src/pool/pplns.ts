/**
 * PPLNS, pay per last N shares (docs/protocol.md section 4.15): when the pool finds a block,
 * the reward minus the pool fee is split over the most recent shares whose difficulties add up
 * to the window N (in difficulty units), in proportion to difficulty. Exact integers: every
 * minor unit of the reward is accounted for.
 */

/** The default window: 2 x the block difficulty (N = 2D). */
export const PPLNS_WINDOW_FACTOR_DEFAULT = 2n;

/** Fees are in basis points: 100 = 1 %. */
export const BPS = 10_000n;

export interface PplnsShare {
  readonly pubkey: string;
  /** The share difficulty the share was mined at (its weight). */
  readonly difficulty: bigint;
}

/** The window N of a block of difficulty D: factor x D. */
export function pplnsWindow(blockDifficulty: bigint, factor: bigint): bigint {
  return blockDifficulty * factor;
}

/**
 * The weight of each member in the window: walk the shares newest first, each counting its
 * difficulty, the oldest one only partly so that the weights add up to exactly `window` (or to
 * less, when the pool has fewer shares than that). Members appear in the order of their newest
 * share.
 * @param sharesNewestFirst shares, newest first (an iterable, so a store can stream them).
 */
export function pplnsWeights(sharesNewestFirst: Iterable<PplnsShare>, window: bigint): Map<string, bigint> {
  const weights = new Map<string, bigint>();
  let left = window;
  for (const share of sharesNewestFirst) {
    if (left <= 0n) break;
    if (share.difficulty <= 0n) continue;
    let counted = share.difficulty;
    if (counted > left) counted = left; // bigints: no Math.min

    weights.set(share.pubkey, (weights.get(share.pubkey) ?? 0n) + counted);
    left -= counted;
  }
  return weights;
}

export interface PplnsSplitInput {
  /** The block reward, minor units. */
  readonly reward: bigint;
  /** The pool fee in basis points, 0..10 000. */
  readonly feeBps: bigint;
  /** From pplnsWeights. */
  readonly weights: ReadonlyMap<string, bigint>;
  /** The member whose share was the block: receives the rounding remainder. */
  readonly finder: string;
}

export interface PplnsPayout {
  readonly pubkey: string;
  readonly amount: bigint;
}

export interface PplnsSplit {
  /** floor(reward * feeBps / 10 000). */
  readonly fee: bigint;
  /** Payouts, sorted by pubkey, every amount > 0. */
  readonly payouts: readonly PplnsPayout[];
  /** The part of the finder's payout that is the rounding remainder (< number of members). */
  readonly remainder: bigint;
}

/**
 *     fee       = floor(reward * feeBps / 10 000)
 *     net       = reward - fee
 *     W         = sum of weights
 *     payout_i  = floor(net * w_i / W)
 *     remainder = net - sum(payout_i)          -> added to the finder's payout
 *
 * With no weight at all (W = 0) the finder gets the whole net. Invariant:
 * sum(payouts) + fee == reward.
 */
export function pplnsSplit(input: PplnsSplitInput): PplnsSplit {
  const { reward, feeBps, weights, finder } = input;
  if (reward < 0n) throw new RangeError(`pplnsSplit: reward must be >= 0, got ${reward}`);
  if (feeBps < 0n || feeBps > BPS)
    throw new RangeError(`pplnsSplit: feeBps must be in [0, 10000], got ${feeBps}`);
  const fee = (reward * feeBps) / BPS;
  const net = reward - fee;
  let total = 0n;
  for (const w of weights.values()) {
    if (w < 0n) throw new RangeError('pplnsSplit: negative weight');
    total += w;
  }
  const amounts = new Map<string, bigint>();
  let paid = 0n;
  if (total > 0n) {
    for (const [pubkey, w] of weights) {
      const amount = (net * w) / total;
      amounts.set(pubkey, amount);
      paid += amount;
    }
  }
  const remainder = net - paid;
  amounts.set(finder, (amounts.get(finder) ?? 0n) + remainder);
  const payouts = [...amounts]
    .filter(([, amount]) => amount > 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([pubkey, amount]) => ({ pubkey, amount }));
  return { fee, payouts, remainder };
}
