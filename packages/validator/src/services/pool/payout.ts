import {
  type PplnsShare,
  pplnsScore,
  pplnsScoreWindow,
  pplnsSplit,
  pplnsWeights,
  scoreToDifficulty,
} from '@tensormine/protocol';
import type { BlockRecord, NewLedgerEntry, StorageTx } from '../../store/types.js';
import type { PoolBlockPay } from '../types.js';

/**
 * Paying a pool block (docs/protocol.md section 4.15), inside the block's transaction: the
 * reward is minted to the pool's reward account, then moved out to the members by PPLNS
 * (`pool_payout` pairs) and to the fee account (`fee` pair). Every pair is balanced, every entry
 * has an idempotency key derived from the block hash, and the `pool_blocks` row is written in
 * the same transaction: a block is paid once, whole, or not at all.
 */

/** Module accounts (not public keys: they start with `@`). */
export const POOL_STAKE_ACCOUNT = '@pool';
export const POOL_REWARD_ACCOUNT = '@pool:rewards';
export const POOL_FEE_ACCOUNT = '@pool:fees';

/**
 * Shares read per page while filling the window: the first page holds FIRST_PAGE, each next
 * one twice the last, up to PAGE. A window is read at every pool block (and by each estimate),
 * and vardiff keeps it near a few shares per member per block interval: a first page of PAGE
 * rows would read and decode many times the rows the window counts.
 */
const FIRST_PAGE = 64;
const PAGE = 1_000;

/**
 * At most this many shares are read for one window (a bound on the block transaction and on
 * GET /pool/members): with vardiff keeping each member near one share per interval, a window of
 * 2 x D holds far fewer; a window cut here counts only its newest shares.
 */
export const MAX_WINDOW_SHARES = 200_000;

export interface PayoutTerms {
  readonly strategy: 'pplns' | 'proportional';
  readonly feeBps: bigint;
  readonly windowFactor: bigint;
  readonly token: string;
}

/** The window read for a block (or an estimate) now. */
export interface WindowRead {
  /** Each member's score in the window (fixed point, PPLNS_SCORE_SCALE = one block's worth). */
  readonly weights: Map<string, bigint>;
  /** The window in scores (PPLNS: factor x 2^64; proportional: the scores since the last block). */
  readonly window: bigint;
  /** The newest share when it was read. */
  readonly lastShareId: number;
  /** The oldest share counted (lastShareId + 1 when none): older ones are no longer needed. */
  readonly oldestShareId: number;
}

/**
 * The weights of the window now: PPLNS counts the newest shares up to `factor` blocks' worth
 * of score; proportional counts every share since the pool's previous block. A share's score
 * is its share difficulty over the block difficulty of its challenge (protocol 4.15).
 */
export async function windowWeights(
  tx: StorageTx,
  terms: Pick<PayoutTerms, 'strategy' | 'windowFactor'>,
): Promise<WindowRead> {
  const lastShareId = await tx.pool.lastShareId();
  let afterId = 0;
  let window: bigint | undefined = pplnsScoreWindow(terms.windowFactor);
  if (terms.strategy === 'proportional') {
    afterId = (await tx.pool.lastBlock())?.lastShareId ?? 0;
    window = undefined;
  }
  const shares: PplnsShare[] = [];
  let sum = 0n;
  let before = lastShareId + 1;
  let oldestShareId = lastShareId + 1;
  let limit = FIRST_PAGE;
  while ((window === undefined || sum < window) && shares.length < MAX_WINDOW_SHARES) {
    // Never past MAX_WINDOW_SHARES: a cut window holds exactly its newest MAX_WINDOW_SHARES.
    limit = Math.min(limit, MAX_WINDOW_SHARES - shares.length);
    const page = await tx.pool.sharesBefore(before, afterId, limit);
    for (const share of page) {
      if (window !== undefined && sum >= window) break;
      const weight = pplnsScore(share.difficulty, share.blockDifficulty);
      shares.push({ pubkey: share.pubkey, weight });
      sum += weight;
      oldestShareId = share.id;
    }
    const last = page.at(-1);
    if (page.length < limit || last === undefined) break;
    before = last.id;
    limit = Math.min(PAGE, limit * 2);
  }
  const effective = window ?? sum;
  return { weights: pplnsWeights(shares, effective), window: effective, lastShareId, oldestShareId };
}

/** Pays `block` by the pool's rule. Returns what it paid. */
export async function payPoolBlock(
  tx: StorageTx,
  terms: PayoutTerms,
  block: BlockRecord,
  reward: bigint,
): Promise<PoolBlockPay> {
  const read = await windowWeights(tx, terms);
  const { weights, lastShareId } = read;
  const window = scoreToDifficulty(read.window, block.difficulty);
  const split = pplnsSplit({ reward, feeBps: terms.feeBps, weights, finder: block.minerPubkey });
  const timestamp = Math.floor(block.timestampMs / 1000);
  const ref = block.blockHash;
  const base = { token: terms.token, timestamp, ref };
  const entries: NewLedgerEntry[] = [
    {
      ...base,
      type: 'mining_reward',
      pubkey: POOL_REWARD_ACCOUNT,
      amount: reward,
      idempotencyKey: `block:${ref}`,
    },
  ];
  for (const { pubkey, amount } of split.payouts) {
    entries.push(
      {
        ...base,
        type: 'pool_payout',
        pubkey: POOL_REWARD_ACCOUNT,
        amount: -amount,
        idempotencyKey: `pool-payout:${ref}:${pubkey}:out`,
      },
      { ...base, type: 'pool_payout', pubkey, amount, idempotencyKey: `pool-payout:${ref}:${pubkey}` },
    );
  }
  if (split.fee > 0n) {
    entries.push(
      {
        ...base,
        type: 'fee',
        pubkey: POOL_REWARD_ACCOUNT,
        amount: -split.fee,
        idempotencyKey: `pool-fee:${ref}:out`,
      },
      {
        ...base,
        type: 'fee',
        pubkey: POOL_FEE_ACCOUNT,
        amount: split.fee,
        idempotencyKey: `pool-fee:${ref}`,
      },
    );
  }
  await tx.ledger.apply(entries);
  const finderPayout = split.payouts.find((p) => p.pubkey === block.minerPubkey)?.amount ?? 0n;
  await tx.pool.insertBlock({
    blockHash: block.blockHash,
    height: block.height,
    coord: block.coord,
    finder: block.minerPubkey,
    reward,
    fee: split.fee,
    window,
    lastShareId,
    payees: split.payouts.length,
    foundAtMs: block.timestampMs,
    finderPayout,
  });
  return { reward, fee: split.fee, finderPayout, payees: split.payouts.length, window };
}
