import {
  clampShareDifficulty,
  formatAmount,
  MAX_HEX_DIFFICULTY,
  ProtocolError,
  parseAmount,
  pplnsWindow,
  scoreToDifficulty,
  shareTargetFromDifficulty,
  targetToHex,
} from '@tensormine/protocol';
import { nowSeconds, type ValidatorContext } from '../context.js';
import { ApiError } from '../http/errors.js';
import { routeHandlers } from '../http/handlers.js';
import { InsufficientBalanceError, type PoolBlockRecord, type StorageTx } from '../store/types.js';
import { HEX_BLOCK_REWARD } from './hexchain.js';
import { ShareBackoff } from './pool/backoff.js';
import {
  advanceVardiff,
  isMember,
  newMember,
  startingShareDifficulty,
  VARDIFF_NOT_STARTED,
} from './pool/members.js';
import { type PayoutTerms, POOL_STAKE_ACCOUNT, payPoolBlock, windowWeights } from './pool/payout.js';
import { type PruneResult, prunePool } from './pool/prune.js';
import { shareHandlers } from './pool/shares.js';
import type { HexchainHooks, HexchainService, Service } from './types.js';

/**
 * The mining pool (docs/protocol.md sections 4.13 to 4.16, docs/validator.md "Mining pool"):
 * membership with a stake escrowed in `@pool`, share terms on a member's challenges (vardiff),
 * shares (POST /api/hexchain/pool/share), PPLNS payouts of the pool's blocks, and the pool's
 * public state (GET /pool, GET /pool/status, GET /pool/members/:pubkey).
 */

export const POOL_TOKEN = 'PTM';

/** How often shares and back-offs are pruned. */
const PRUNE_EVERY_MS = 60_000;

/** A member counts as online when its last accepted share is this recent (or 2 block intervals). */
const ONLINE_WINDOW_S = 600;

export interface PoolService extends Service {
  /** The hooks the hexchain service calls inside its transactions. */
  readonly hooks: HexchainHooks;
  /** Connects the hexchain service (created after the pool, with its hooks). */
  attach(hexchain: HexchainService): void;
  /** One pruning run (shares no longer needed, forgotten back-offs); also run every minute. */
  prune(): Promise<PruneResult>;
  /** Stops the pruning timer. */
  close(): void;
}

export function createPoolService(ctx: ValidatorContext): PoolService {
  let hexchain: HexchainService | undefined;
  const chain = (): HexchainService => {
    if (hexchain === undefined) throw new Error('pool: the hexchain service is not attached');
    return hexchain;
  };
  const pooled = () => ctx.runtime.poolStrategy !== 'solo';
  const terms = (): PayoutTerms => ({
    strategy: ctx.runtime.poolStrategy === 'proportional' ? 'proportional' : 'pplns',
    feeBps: BigInt(ctx.config.poolFeeBps),
    windowFactor: BigInt(ctx.config.poolPplnsWindowFactor),
    token: POOL_TOKEN,
  });
  const backoff = new ShareBackoff(ctx.storage, { now: ctx.now });
  const roundDurationS = () => Math.max(1, Number(ctx.config.blockIntervalMs / 1000n));

  const hooks: HexchainHooks = {
    async challengeTerms(tx, challenge) {
      if (!pooled() || challenge.minerPubkey === null) return undefined;
      // Locked: the member is read, then written (row-locks transactions, docs/storage.md).
      const member = await tx.pool.getMember(challenge.minerPubkey, { lock: true });
      if (!isMember(member)) return undefined;
      const next = await advanceVardiff(member, {
        nowMs: ctx.now(),
        blockDifficulty: challenge.difficulty,
        targetIntervalMs: ctx.config.poolShareIntervalMs,
        acceptedShares: 0,
        initial: () => startingShareDifficulty(tx, member.pubkey, ctx.config.poolShareIntervalMs),
      });
      await tx.pool.putMember(next);
      const shareDifficulty = next.shareDifficulty ?? challenge.difficulty;
      await tx.pool.putChallengeTerms({ challengeId: challenge.id, pubkey: member.pubkey, shareDifficulty });
      return {
        share_difficulty: Number(shareDifficulty),
        share_target: targetToHex(shareTargetFromDifficulty(shareDifficulty)),
      };
    },

    async poolMember(tx, pubkey, challengeId) {
      const { terms: challengeTerms, member } = await tx.pool.getMemberAndTerms(pubkey, challengeId);
      return challengeTerms?.pubkey === pubkey || (pooled() && isMember(member));
    },

    async rewardBlock(tx, block, reward) {
      // What binds a block to the pool (protocol 4.15): its challenge was issued to the finder
      // with the pool's share terms (pool work), whatever the finder's membership now (a member
      // that left to submit a block of pool work alone is paid as if it had stayed), or the
      // finder is a member while the pool is on.
      const challengeTerms = await tx.pool.getChallengeTerms(block.challengeId);
      const poolWork = challengeTerms !== undefined && challengeTerms.pubkey === block.minerPubkey;
      const member = await tx.pool.getMember(block.minerPubkey, { lock: true });
      if (!poolWork && !(pooled() && isMember(member))) return undefined;
      if (member === undefined) throw new Error(`pool: share terms for ${block.minerPubkey}, never a member`);
      // The block is also the finder's share (when its challenge carried share terms), counted
      // before the window is read; a share already recorded under this hash is not counted twice.
      let counted = 0;
      if (poolWork) {
        const inserted = await tx.pool.insertShare({
          pubkey: block.minerPubkey,
          challengeId: block.challengeId,
          powHash: block.powHash,
          difficulty: challengeTerms.shareDifficulty,
          blockDifficulty: block.difficulty,
          stale: false,
          createdAtMs: block.timestampMs,
        });
        if (inserted) counted = 1;
      }
      const advanced = await advanceVardiff(member, {
        nowMs: block.timestampMs,
        blockDifficulty: block.difficulty,
        targetIntervalMs: ctx.config.poolShareIntervalMs,
        acceptedShares: counted,
        initial: () => startingShareDifficulty(tx, member.pubkey, ctx.config.poolShareIntervalMs),
      });
      await tx.pool.putMember({
        ...advanced,
        sharesAccepted: member.sharesAccepted + counted,
        blocksFound: member.blocksFound + 1,
        lastShareAt: Math.floor(block.timestampMs / 1000),
      });
      await tx.counters.add('pool_blocks_found', 1);
      if (counted === 1) await tx.counters.add('pool_shares_accepted', 1);
      return payPoolBlock(tx, terms(), block, reward);
    },

    async poolBlock(tx, blockHash) {
      const b = await tx.pool.getBlock(blockHash);
      // A block paid before the finder's payout was recorded is answered as it was then.
      if (b === undefined || b.finderPayout === null) return undefined;
      return {
        reward: b.reward,
        fee: b.fee,
        finderPayout: b.finderPayout,
        payees: b.payees,
        window: b.window,
      };
    },
  };

  /** What the pool would pay each member for a block found now. */
  const estimate = async (tx: StorageTx) => {
    const { weights, window } = await windowWeights(tx, terms());
    let total = 0n;
    for (const w of weights.values()) total += w;
    return { weights, window, total };
  };

  const handlers = routeHandlers({
    async getPool() {
      const difficulty = chain().info().difficulty;
      const s = await ctx.storage.read(async (tx) => ({
        totals: await tx.pool.totals(),
        blocks: await tx.pool.countBlocks(),
        last: await tx.pool.lastBlock(),
      }));
      return {
        type: ctx.runtime.poolStrategy,
        miners: s.totals.members,
        stake: formatAmount(s.totals.stake, POOL_TOKEN),
        minimum_stake: formatAmount(ctx.config.poolMinimumStake, POOL_TOKEN),
        fee: ctx.config.poolFeeBps / 10_000,
        round_duration: roundDurationS(),
        token: POOL_TOKEN,
        fee_bps: ctx.config.poolFeeBps,
        pplns_window_factor: ctx.config.poolPplnsWindowFactor,
        pplns_window: Number(pplnsWindow(difficulty, BigInt(ctx.config.poolPplnsWindowFactor))),
        // What vardiff uses, exactly; and for display the nearest whole second (at least 1).
        share_interval_s: Math.max(1, Math.round(Number(ctx.config.poolShareIntervalMs) / 1000)),
        share_interval_ms: Number(ctx.config.poolShareIntervalMs),
        blocks_found: s.blocks,
        last_block: s.last === undefined ? null : poolBlockToWire(s.last),
      };
    },

    async getPoolStatus() {
      const now = nowSeconds(ctx);
      const since = now - Math.max(ONLINE_WINDOW_S, 2 * roundDurationS());
      const s = await ctx.storage.read(async (tx) => ({
        totals: await tx.pool.totals(),
        online: await tx.pool.countActive(since),
        blocks: await tx.pool.countBlocks(),
        last: await tx.pool.lastBlock(),
      }));
      const lastAt = s.last === undefined ? now : Math.floor(s.last.foundAtMs / 1000);
      return {
        type: ctx.runtime.poolStrategy,
        miners_online: s.online,
        total_stake: formatAmount(s.totals.stake, POOL_TOKEN),
        round_duration: roundDurationS(),
        fee: ctx.config.poolFeeBps / 10_000,
        round: s.blocks,
        round_ends_at: Math.max(now, lastAt + roundDurationS()),
        minimum_stake: formatAmount(ctx.config.poolMinimumStake, POOL_TOKEN),
      };
    },

    async getPoolMember({ params }) {
      const pubkey = params.pubkey;
      const s = await ctx.storage.read(async (tx) => ({
        member: await tx.pool.getMember(pubkey),
        paid: await tx.pool.paidTotal(pubkey, POOL_TOKEN),
        window: await estimate(tx),
      }));
      const m = s.member;
      const weight = s.window.weights.get(pubkey) ?? 0n;
      const reward = HEX_BLOCK_REWARD;
      const net = reward - (reward * BigInt(ctx.config.poolFeeBps)) / 10_000n;
      const estimated = s.window.total === 0n ? 0n : (net * weight) / s.window.total;
      return {
        pubkey,
        member: isMember(m),
        stake: formatAmount(isMember(m) ? m.stake : 0n, POOL_TOKEN),
        joined_at: m?.joinedAt ?? null,
        share_difficulty: m?.shareDifficulty === null || m === undefined ? null : Number(m.shareDifficulty),
        shares_accepted: m?.sharesAccepted ?? 0,
        shares_stale: m?.sharesStale ?? 0,
        shares_rejected: m?.sharesRejected ?? 0,
        blocks_found: m?.blocksFound ?? 0,
        last_share_at: m?.lastShareAt ?? null,
        window_weight: Number(scoreToDifficulty(weight, chain().info().difficulty)),
        estimated_payout: formatAmount(estimated, POOL_TOKEN),
        paid_total: formatAmount(s.paid, POOL_TOKEN),
        token: POOL_TOKEN,
      };
    },

    async poolJoin({ body }) {
      if (!pooled()) throw poolDisabled();
      const pubkey = body.pubkey;
      let stake: bigint;
      try {
        stake = parseAmount(body.stake_amount, POOL_TOKEN, 'stake_amount');
      } catch (error) {
        if (error instanceof ProtocolError) throw new ApiError('invalid_amount', error.message);
        throw error;
      }
      if (stake < ctx.config.poolMinimumStake) {
        throw new ApiError(
          'stake_below_minimum',
          `stake_amount: expected at least the pool's minimum_stake ${formatAmount(ctx.config.poolMinimumStake, POOL_TOKEN)} PTM, got ${body.stake_amount}`,
          { minimum_stake: formatAmount(ctx.config.poolMinimumStake, POOL_TOKEN) },
        );
      }
      const nowMs = ctx.now();
      const joinedAt = Math.floor(nowMs / 1000);
      const startDifficulty = await ctx.storage.transaction(async (tx) => {
        if ((await tx.devices.get(pubkey)) === undefined) {
          throw new ApiError(
            'miner_not_registered',
            `pubkey: ${pubkey} is not registered; register it with POST /devices/register before joining the pool`,
          );
        }
        const existing = await tx.pool.getMember(pubkey);
        if (isMember(existing)) {
          throw new ApiError(
            'pool_already_member',
            `pubkey: ${pubkey} is already a member of the pool (joined at ${existing.joinedAt}, stake ${formatAmount(existing.stake, POOL_TOKEN)} PTM); leave first to change the stake`,
          );
        }
        if (stake > 0n) {
          const ref = `pool-join:${pubkey}:${nowMs}`;
          try {
            await tx.ledger.apply([
              { type: 'pool_join', pubkey, token: POOL_TOKEN, amount: -stake, timestamp: joinedAt, ref },
              {
                type: 'pool_join',
                pubkey: POOL_STAKE_ACCOUNT,
                token: POOL_TOKEN,
                amount: stake,
                timestamp: joinedAt,
                ref,
              },
            ]);
          } catch (error) {
            if (error instanceof InsufficientBalanceError) {
              throw new ApiError(
                'insufficient_balance',
                `stake_amount: the PTM balance of ${pubkey} is ${formatAmount(error.balance, POOL_TOKEN)}, lower than ${body.stake_amount}`,
                { balance: formatAmount(error.balance, POOL_TOKEN), required: body.stake_amount },
              );
            }
            throw error;
          }
        }
        // The starting share difficulty (protocol 4.14): one share per interval at the declared
        // hash rate, else the difficulty it left with, else its device type's nominal rate.
        const interval = ctx.config.poolShareIntervalMs;
        const start =
          body.hashrate !== undefined
            ? clampShareDifficulty((BigInt(body.hashrate) * interval) / 1000n, MAX_HEX_DIFFICULTY)
            : (existing?.shareDifficulty ?? (await startingShareDifficulty(tx, pubkey, interval)));
        await tx.pool.putMember({
          ...(existing ?? newMember(pubkey, nowMs)),
          stake,
          joinedAt,
          shareDifficulty: start,
          vardiffSinceMs: VARDIFF_NOT_STARTED,
          vardiffShares: 0,
        });
        return start;
      });
      return {
        joined: true as const,
        pubkey,
        stake_amount: formatAmount(stake, POOL_TOKEN),
        joined_at: joinedAt,
        share_difficulty: Number(clampShareDifficulty(startDifficulty, chain().info().difficulty)),
      };
    },

    async poolLeave({ body, signer }) {
      const pubkey = body.pubkey ?? signer;
      if (pubkey === undefined) throw new ApiError('signature_required', 'POST /pool/leave must be signed');
      const nowMs = ctx.now();
      const returned = await ctx.storage.transaction(async (tx) => {
        const member = await tx.pool.getMember(pubkey);
        if (!isMember(member)) {
          throw new ApiError('pool_not_member', `pubkey: ${pubkey} is not a member of the pool`);
        }
        if (member.stake > 0n) {
          const at = Math.floor(nowMs / 1000);
          const ref = `pool-leave:${pubkey}:${nowMs}`;
          await tx.ledger.apply([
            {
              type: 'pool_leave',
              pubkey: POOL_STAKE_ACCOUNT,
              token: POOL_TOKEN,
              amount: -member.stake,
              timestamp: at,
              ref,
            },
            { type: 'pool_leave', pubkey, token: POOL_TOKEN, amount: member.stake, timestamp: at, ref },
          ]);
        }
        await tx.pool.putMember({ ...member, stake: 0n, joinedAt: null });
        return member.stake;
      });
      return { left: true as const, pubkey, returned_stake: formatAmount(returned, POOL_TOKEN) };
    },

    ...shareHandlers({ ctx, chain, backoff, pooled }),
  });

  const prune = () => prunePool(ctx, terms(), backoff.forgetMs);
  const pruner = setInterval(() => {
    prune().catch((error: unknown) => ctx.log.warn({ err: error }, 'could not prune pool shares'));
  }, PRUNE_EVERY_MS);
  pruner.unref();

  return {
    handlers,
    hooks,
    attach(service) {
      hexchain = service;
    },
    prune,
    close: () => clearInterval(pruner),
  };
}

export function poolDisabled(): ApiError {
  return new ApiError(
    'pool_disabled',
    'this validator runs pool_strategy solo: it takes no pool members and no shares (an operator can switch it with POST /admin/config pool_strategy pplns)',
  );
}

function poolBlockToWire(b: PoolBlockRecord) {
  return {
    block_hash: b.blockHash,
    coord: { q: b.coord.q, r: b.coord.r, s: b.coord.s },
    height: b.height,
    finder: b.finder,
    reward: formatAmount(b.reward, POOL_TOKEN),
    fee: formatAmount(b.fee, POOL_TOKEN),
    window: Number(b.window),
    payees: b.payees,
    found_at: Math.floor(b.foundAtMs / 1000),
  };
}
