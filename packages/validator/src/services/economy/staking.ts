import {
  bpsToFraction,
  formatAmount,
  lockExpiry,
  lockTerms,
  RESERVE_ACCOUNT,
  STAKE_ACCOUNT,
  unstakePenalty,
  yieldDue,
  yieldPayable,
} from '@tensormine/protocol';
import { nowSeconds } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { NewLedgerEntry, StakeRecord, StorageTx } from '../../store/types.js';
import { positiveAmount } from './amounts.js';
import { executeOnce } from './requests.js';

/** The staked token. */
export const STAKE_TOKEN = 'PTM';

const due = (s: StakeRecord, now: number) =>
  yieldDue({ principal: s.amount, rateBps: s.yieldBps, createdAt: s.createdAt, yieldPaid: s.yieldPaid }, now);

async function ownOpenStake(tx: StorageTx, id: string, pubkey: string): Promise<StakeRecord> {
  const stake = await tx.economy.stakes.get(id);
  if (stake === undefined || stake.pubkey !== pubkey || stake.closedAt !== null) {
    throw new ApiError(
      'stake_not_found',
      `no open stake position ${id} belongs to ${pubkey}; list yours with GET /stake/${pubkey}`,
      { stake_id: id },
    );
  }
  return stake;
}

/** The entries paying `amount` of yield from the reserve to `pubkey`. */
function yieldEntries(pubkey: string, amount: bigint, now: number, ref: string): NewLedgerEntry[] {
  if (amount === 0n) return [];
  return [
    { type: 'yield', pubkey: RESERVE_ACCOUNT, token: STAKE_TOKEN, amount: -amount, timestamp: now, ref },
    { type: 'yield', pubkey, token: STAKE_TOKEN, amount, timestamp: now, ref },
  ];
}

/** POST /stake, POST /unstake, POST /claim, GET /stake/:pubkey (rules: protocol economy/stake.ts). */
export function stakingHandlers() {
  return routeHandlers({
    async stake({ body, raw, claimNonce }, ctx) {
      const terms = lockTerms(body.lock_period_days);
      const amount = positiveAmount(body.amount, STAKE_TOKEN);
      return executeOnce(ctx, raw, claimNonce, 'stake', async (tx, now) => {
        const serial = await tx.economy.stakes.nextSerial();
        const id = `s-${serial}`;
        await tx.ledger.apply([
          {
            type: 'stake',
            pubkey: body.pubkey,
            token: STAKE_TOKEN,
            amount: -amount,
            timestamp: now,
            ref: id,
          },
          { type: 'stake', pubkey: STAKE_ACCOUNT, token: STAKE_TOKEN, amount, timestamp: now, ref: id },
        ]);
        const record: StakeRecord = {
          id,
          serial,
          pubkey: body.pubkey,
          token: STAKE_TOKEN,
          amount,
          lockDays: terms.days,
          yieldBps: terms.yieldBps,
          penaltyBps: terms.penaltyBps,
          createdAt: now,
          lockExpiry: lockExpiry(now, terms.days),
          yieldPaid: 0n,
          lastClaimAt: now,
          closedAt: null,
        };
        await tx.economy.stakes.insert(record);
        return {
          stake_id: id,
          amount: formatAmount(amount, STAKE_TOKEN),
          token: STAKE_TOKEN,
          lock_period_days: terms.days,
          lock_expiry: record.lockExpiry,
          yield_rate: bpsToFraction(terms.yieldBps),
          created_at: now,
        };
      });
    },

    /**
     * Closes a position: pays the unclaimed yield (capped by the reserve), then returns the
     * principal minus the early-unstake penalty, which goes to the reserve.
     */
    async unstake({ body, raw, claimNonce }, ctx) {
      return executeOnce(ctx, raw, claimNonce, 'unstake', async (tx, now) => {
        const stake = await ownOpenStake(tx, body.stake_id, body.pubkey);
        const reserve = await tx.ledger.balance(RESERVE_ACCOUNT, STAKE_TOKEN);
        const paid = yieldPayable(due(stake, now), reserve);
        const penalty = unstakePenalty(stake.amount, stake.penaltyBps, stake.lockExpiry, now);
        const entries: NewLedgerEntry[] = [
          ...yieldEntries(stake.pubkey, paid, now, stake.id),
          {
            type: 'unstake',
            pubkey: STAKE_ACCOUNT,
            token: STAKE_TOKEN,
            amount: -stake.amount,
            timestamp: now,
            ref: stake.id,
          },
          {
            type: 'unstake',
            pubkey: stake.pubkey,
            token: STAKE_TOKEN,
            amount: stake.amount,
            timestamp: now,
            ref: stake.id,
          },
        ];
        if (penalty > 0n) {
          entries.push(
            {
              type: 'penalty',
              pubkey: stake.pubkey,
              token: STAKE_TOKEN,
              amount: -penalty,
              timestamp: now,
              ref: stake.id,
            },
            {
              type: 'penalty',
              pubkey: RESERVE_ACCOUNT,
              token: STAKE_TOKEN,
              amount: penalty,
              timestamp: now,
              ref: stake.id,
            },
          );
        }
        await tx.ledger.apply(entries);
        await tx.economy.stakes.close(stake.id, stake.yieldPaid + paid, now);
        return {
          stake_id: stake.id,
          returned: formatAmount(stake.amount - penalty, STAKE_TOKEN),
          penalty: formatAmount(penalty, STAKE_TOKEN),
          yield_paid: formatAmount(paid, STAKE_TOKEN),
          token: STAKE_TOKEN,
          unstaked_at: now,
        };
      });
    },

    async claimYield({ body, raw, claimNonce }, ctx) {
      return executeOnce(ctx, raw, claimNonce, 'claimYield', async (tx, now) => {
        const stake = await ownOpenStake(tx, body.stake_id, body.pubkey);
        const reserve = await tx.ledger.balance(RESERVE_ACCOUNT, STAKE_TOKEN);
        const paid = yieldPayable(due(stake, now), reserve);
        await tx.ledger.apply(yieldEntries(stake.pubkey, paid, now, stake.id));
        await tx.economy.stakes.recordClaim(stake.id, stake.yieldPaid + paid, now);
        return {
          stake_id: stake.id,
          claimed: formatAmount(paid, STAKE_TOKEN),
          token: STAKE_TOKEN,
          claimed_at: now,
        };
      });
    },

    /** yield_earned: what a claim would pay now (the due yield, capped by the reserve). */
    async getStakes({ params }, ctx) {
      const now = nowSeconds(ctx);
      const { stakes, reserve } = await ctx.storage.read(async (tx) => ({
        stakes: await tx.economy.stakes.listOpen(params.pubkey, 1000),
        reserve: await tx.ledger.balance(RESERVE_ACCOUNT, STAKE_TOKEN),
      }));
      return {
        stakes: stakes.map((s) => ({
          stake_id: s.id,
          amount: formatAmount(s.amount, s.token),
          token: s.token,
          yield_earned: formatAmount(yieldPayable(due(s, now), reserve), s.token),
          lock_expiry: s.lockExpiry,
          lock_period_days: s.lockDays,
          yield_rate: bpsToFraction(s.yieldBps),
          created_at: s.createdAt,
        })),
      };
    },
  });
}
