import { nowSeconds, type ValidatorContext } from '../../context.js';
import type { StorageTx } from '../../store/types.js';
import { type PayoutTerms, windowWeights } from './payout.js';

/**
 * Pruning the pool's shares (docs/protocol.md section 4.16). A share is kept while something
 * still needs it: the PPLNS window (every share from the oldest one the window counts now, a
 * window cut at MAX_WINDOW_SHARES included; the window only moves forward, so older shares are
 * never counted again), a proportional round
 * (every share since the pool's last block), and duplicate detection (a share whose challenge
 * has not expired could be sent again; once it has, a resent share is stale anyway). The rest is
 * deleted oldest first, in transactions of at most PRUNE_BATCH rows, at most PRUNE_MAX_BATCHES
 * per run, so that a run never holds the database for long. The share terms of expired
 * challenges (`pool_challenges`: a share or block for them is refused as expired) and the
 * back-off entries older than the back-off's memory are deleted the same way.
 */

/** Rows deleted per transaction. */
export const PRUNE_BATCH = 2_000;
/** Transactions per run at most (the next run goes on). */
export const PRUNE_MAX_BATCHES = 50;
/**
 * Slack on the challenge expiry, seconds: a share is pruned only once its challenge expired
 * this long ago (clocks of several validator nodes on one database may differ a little).
 */
export const PRUNE_EXPIRY_SLACK_S = 60;

export interface PruneResult {
  /** Shares deleted. */
  readonly shares: number;
  /** Share terms of expired challenges deleted. */
  readonly challenges: number;
  /** Back-off entries deleted. */
  readonly backoffs: number;
  /** Shares with an id below this one were eligible (the oldest share still needed). */
  readonly keepFromId: number;
  /** Whether the run stopped at PRUNE_MAX_BATCHES with more to delete. */
  readonly more: boolean;
}

export async function prunePool(
  ctx: ValidatorContext,
  terms: PayoutTerms,
  backoffForgetMs: number,
  limits: { readonly batch?: number; readonly maxBatches?: number } = {},
): Promise<PruneResult> {
  const batch = limits.batch ?? PRUNE_BATCH;
  const maxBatches = limits.maxBatches ?? PRUNE_MAX_BATCHES;
  const keepFromId = await ctx.storage.read(async (tx) => {
    const read = await windowWeights(tx, terms);
    let keep = read.oldestShareId;
    if (terms.strategy === 'proportional') {
      const after = (await tx.pool.lastBlock())?.lastShareId ?? 0;
      if (after + 1 < keep) keep = after + 1;
    }
    return keep;
  });
  const expiredBeforeS = nowSeconds(ctx) - PRUNE_EXPIRY_SLACK_S;
  const backoffBefore = ctx.now() - backoffForgetMs;
  // One budget of transactions for the three deletions, taken in order.
  let batches = 0;
  let more = false;
  const drain = async (remove: (tx: StorageTx) => Promise<number>): Promise<number> => {
    let removed = 0;
    for (;;) {
      if (batches >= maxBatches) {
        more = true;
        return removed;
      }
      batches++;
      const n = await ctx.storage.transaction(remove);
      removed += n;
      if (n < batch) return removed;
    }
  };
  const shares = await drain((tx) => tx.pool.pruneShares(keepFromId, expiredBeforeS, batch));
  const challenges = await drain((tx) => tx.pool.pruneChallengeTerms(expiredBeforeS, batch));
  const backoffs = await drain((tx) => tx.pool.pruneBackoff(backoffBefore, batch));
  if (shares > 0 || challenges > 0 || backoffs > 0) {
    ctx.log.debug({ shares, challenges, backoffs, keepFromId, more }, 'pool pruned');
  }
  return { shares, challenges, backoffs, keepFromId, more };
}
