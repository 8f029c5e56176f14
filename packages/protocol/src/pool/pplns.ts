/**
 * PPLNS, pay per last N shares (docs/protocol.md section 4.15): when the pool finds a block,
 * the reward minus the pool fee is split over the most recent shares whose scores add up to the
 * window, in proportion to score. A share's score is the number of blocks its work was worth
 * when it was mined: its share difficulty over the block difficulty of its challenge, so that a
 * share's expected pay is the same whenever it was mined, across difficulty changes too. Exact
 * integers: scores are fixed point (PPLNS_SCORE_SCALE), every minor unit of the reward is
 * accounted for.
 */

/** The default window: 2 blocks' worth of work (N = 2D at a constant difficulty D). */
export const PPLNS_WINDOW_FACTOR_DEFAULT = 2n;

/** Fees are in basis points: 100 = 1 %. */
export const BPS = 10_000n;

/** Scores are fixed point: a score of 1 block's worth of work is 2^64. */
export const PPLNS_SCORE_SCALE = 2n ** 64n;

export interface PplnsShare {
  readonly pubkey: string;
  /** Its weight in the window: its score (pplnsScore), or any unit the window is given in. */
  readonly weight: bigint;
}

/**
 * The score of a share: floor(shareDifficulty x 2^64 / blockDifficulty), the blocks' worth of
 * work it stands for (a share of difficulty S mined under block difficulty D is a block with
 * probability S / D) in fixed point. With D <= 2^53 - 1 and S >= 16, a score is >= 2^15, so
 * the floor costs less than 2^-15 of it.
 */
export function pplnsScore(shareDifficulty: bigint, blockDifficulty: bigint): bigint {
  if (shareDifficulty <= 0n || blockDifficulty <= 0n)
    throw new RangeError(
      `pplnsScore: difficulties must be > 0, got ${shareDifficulty} and ${blockDifficulty}`,
    );
  return (shareDifficulty * PPLNS_SCORE_SCALE) / blockDifficulty;
}

/** The window in scores: factor blocks' worth of work, factor x 2^64. */
export function pplnsScoreWindow(factor: bigint): bigint {
  return factor * PPLNS_SCORE_SCALE;
}

/** The window in difficulty units at block difficulty D: factor x D (what GET /pool publishes). */
export function pplnsWindow(blockDifficulty: bigint, factor: bigint): bigint {
  return blockDifficulty * factor;
}

/** A score as difficulty units at block difficulty D: floor(score x D / 2^64). */
export function scoreToDifficulty(score: bigint, blockDifficulty: bigint): bigint {
  return (score * blockDifficulty) / PPLNS_SCORE_SCALE;
}

/**
 * The weight of each member in the window: walk the shares newest first, each counting its
 * weight, the oldest one only partly so that the weights add up to exactly `window` (or to
 * less, when the pool has fewer shares than that). Members appear in the order of their newest
 * share.
 * @param sharesNewestFirst shares, newest first (an iterable, so a store can stream them).
 */
export function pplnsWeights(sharesNewestFirst: Iterable<PplnsShare>, window: bigint): Map<string, bigint> {
  const weights = new Map<string, bigint>();
  let left = window;
  for (const share of sharesNewestFirst) {
    if (left <= 0n) break;
    if (share.weight <= 0n) continue;
    let counted = share.weight;
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
