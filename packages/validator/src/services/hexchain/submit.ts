import {
  type Coord,
  formatAmount,
  formatCoord,
  fromHex,
  type HexSubmitRequest,
  type HexSubmitResult,
  type SseHub,
  targetFromHex,
  toHex,
  verifyBlock,
} from '@tensormine/protocol';
import { nowSeconds, type ValidatorContext } from '../../context.js';
import { ApiError, verdictError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { BlockRecord, HexChallengeRecord } from '../../store/types.js';
import { COUNTERS } from '../metrics.js';
import type { HexchainHooks, PoolBlockPay } from '../types.js';
import { notRegistered } from './challenges.js';
import { type LiveDifficulty, retargetIn } from './difficulty.js';
import { publishBlock } from './events.js';
import type { LatticeState } from './lattice-state.js';
import type { ClusterSync } from './sync.js';

/** The reward token of a block. */
export const HEX_REWARD_TOKEN = 'PTM';

/** The reward of one accepted block: 1 PTM (10^9 minor units), to the block's miner_pubkey. */
export const HEX_BLOCK_REWARD = 1_000_000_000n;

/** What the submit route reads and calls. */
export interface SubmitDeps {
  readonly ctx: ValidatorContext;
  readonly state: LatticeState;
  readonly difficulty: LiveDifficulty;
  readonly sync: ClusterSync;
  readonly events: SseHub;
  readonly hooks: HexchainHooks;
  /** t[0], the window start of the first retarget. */
  readonly genesisTimeMs: bigint;
}

/**
 * POST /api/hexchain/submit: verifies a block and stores it (the first valid block at a
 * coordinate wins) with its reward and the retarget its height runs, in one transaction; the
 * lattice and the event stream change after the commit.
 */
export function submitHandlers({ ctx, state, difficulty, sync, events, hooks, genesisTimeMs }: SubmitDeps) {
  const lattice = state.lattice;

  /** The consensus check of a submission against the challenge it answers (docs/protocol.md 4.9). */
  const verify = (challenge: HexChallengeRecord, body: HexSubmitRequest) =>
    verifyBlock(
      {
        id: challenge.id,
        coord: challenge.coord,
        challengeHash: fromHex(challenge.challengeHash, 32, 'challenge_hash'),
        target: targetFromHex(challenge.target),
      },
      body,
      { requireSignature: ctx.config.requireSignatures },
    );

  const rejectBlock = async (error: ApiError): Promise<never> => {
    await ctx.metrics.recordRejection(error.code, 'block');
    throw error;
  };

  /** The acceptance of a stored block (a resent block gets the first answer again). */
  const storedAcceptance = async (block: BlockRecord): Promise<HexSubmitResult> => {
    const poolBlock = hooks.poolBlock;
    const pool =
      poolBlock === undefined ? undefined : await ctx.storage.read((tx) => poolBlock(tx, block.blockHash));
    return acceptance(block, pool);
  };

  /**
   * The acceptance of this very block when it was accepted before: the block at the
   * challenge's cell answers this challenge, by this key, with this nonce and pow_hash, and the
   * submission verifies (its signature too). Only when the cell is taken (no read otherwise).
   */
  const acceptedBefore = async (
    challenge: HexChallengeRecord,
    body: HexSubmitRequest,
  ): Promise<HexSubmitResult | undefined> => {
    if (lattice.get(challenge.coord) === undefined) return undefined;
    const stored = await ctx.storage.read((tx) => tx.blocks.get(challenge.coord));
    const b = body.block;
    if (
      stored === undefined ||
      stored.challengeId !== challenge.id ||
      stored.minerPubkey !== b.miner_pubkey ||
      stored.nonce !== b.nonce ||
      stored.powHash !== b.pow_hash
    ) {
      return undefined;
    }
    const verdict = verify(challenge, body);
    return verdict.ok && toHex(verdict.blockHash) === stored.blockHash ? storedAcceptance(stored) : undefined;
  };

  return routeHandlers({
    async hexSubmit(request) {
      const body = request.body;
      const challenge = await ctx.storage.read((tx) => tx.hexChallenges.get(body.challenge_id));
      if (challenge === undefined) {
        return rejectBlock(
          new ApiError(
            'challenge_not_found',
            `challenge_id: no challenge ${JSON.stringify(body.challenge_id)} was issued by this validator`,
          ),
        );
      }
      // The same block again by the same key (a client retrying after a lost answer): the
      // original acceptance, also after the challenge expired; never coordinate_occupied.
      const earlier = await acceptedBefore(challenge, body);
      if (earlier !== undefined) return earlier;
      // One expiry rule for v4.0 and v4.1: accepted through the second expires_at, in whole
      // Unix seconds (docs/validator.md).
      const now = nowSeconds(ctx);
      if (now > challenge.expiresAt) {
        return rejectBlock(
          new ApiError(
            'challenge_expired',
            `challenge ${challenge.id} expired at ${challenge.expiresAt} (Unix seconds), it is now ${now}; request a new one`,
            { expires_at: challenge.expiresAt, now },
          ),
        );
      }
      const holder = lattice.get(challenge.coord);
      if (holder !== undefined) {
        return rejectBlock(occupied(challenge.coord, toHex(holder.blockHash), holder.depth));
      }
      const pubkey = body.block.miner_pubkey;
      const device = await ctx.storage.read((tx) => tx.devices.get(pubkey));
      if (device === undefined) return rejectBlock(notRegistered('block.miner_pubkey', pubkey));
      if (challenge.minerPubkey !== null && challenge.minerPubkey !== pubkey) {
        return rejectBlock(
          new ApiError(
            'pubkey_mismatch',
            `block.miner_pubkey: expected ${challenge.minerPubkey} (the key this challenge was issued to), got ${pubkey}`,
          ),
        );
      }

      const verdict = verify(challenge, body);
      if (!verdict.ok) {
        return rejectBlock(verdictError(verdict));
      }

      const blockHash = toHex(verdict.blockHash);
      const outcome = await ctx.storage.transaction(async (tx) => {
        const acceptedAtMs = ctx.now();
        const acceptedAt = Math.floor(acceptedAtMs / 1000);
        const height = (await tx.blocks.count()) + 1;
        const block: BlockRecord = {
          coord: challenge.coord,
          blockHash,
          powHash: toHex(verdict.powHash),
          depth: challenge.depth,
          parents: challenge.parents.map((p) => p.coord),
          minerPubkey: pubkey,
          nonce: verdict.nonce,
          challengeId: challenge.id,
          slot: challenge.slot,
          difficulty: challenge.difficulty,
          timestampMs: acceptedAtMs,
          height,
        };
        if (!(await tx.blocks.insert(block))) {
          const winner = await tx.blocks.get(challenge.coord);
          return { accepted: false as const, winner };
        }
        // A block of the pool (pool work, or a member's) is paid by the pool; any other solo.
        const pool = await hooks.rewardBlock?.(tx, block, HEX_BLOCK_REWARD);
        if (pool === undefined) {
          await tx.ledger.apply([
            {
              type: 'mining_reward',
              pubkey,
              token: HEX_REWARD_TOKEN,
              amount: HEX_BLOCK_REWARD,
              timestamp: acceptedAt,
              ref: blockHash,
              idempotencyKey: `block:${blockHash}`,
            },
          ]);
        }
        await tx.counters.add(COUNTERS.blocksAccepted, 1);
        await tx.miners.record(pubkey, { blocksAccepted: 1, seenAt: acceptedAt });
        await tx.devices.touch(pubkey, acceptedAt);
        const retarget = await retargetIn(tx, difficulty, {
          height,
          blockTimeMs: acceptedAtMs,
          genesisTimeMs,
          intervalMs: ctx.config.blockIntervalMs,
        });
        await sync.notify(tx, height);
        return { accepted: true as const, block, pool, ...retarget };
      });

      if (!outcome.accepted) {
        const winner = outcome.winner;
        if (winner !== undefined && winner.blockHash === blockHash) return storedAcceptance(winner);
        return rejectBlock(occupied(challenge.coord, winner?.blockHash, winner?.depth));
      }
      if (outcome.block.height > state.appliedHeight + 1) {
        // Blocks of other nodes committed before this one are not applied yet (their
        // notification is on its way), and this block may rest on them: apply them all in
        // height order, this one included, before answering.
        await sync.catchUp();
      } else if (state.add(outcome.block)) {
        publishBlock(events, state, outcome.block, outcome.old, outcome.next);
      }
      difficulty.apply(outcome.seq, outcome.next);
      if (outcome.next !== outcome.old) {
        ctx.log.info(
          { height: outcome.block.height, from: outcome.old.toString(), to: outcome.next.toString() },
          'hexchain difficulty retargeted',
        );
      }
      return acceptance(outcome.block, outcome.pool);
    },
  });
}

/** The answer to an accepted block. */
function acceptance(block: BlockRecord, pool: PoolBlockPay | undefined): HexSubmitResult {
  return {
    accepted: true,
    depth: block.depth,
    block_hash: block.blockHash,
    coord: { q: block.coord.q, r: block.coord.r, s: block.coord.s },
    reward: formatAmount(pool === undefined ? HEX_BLOCK_REWARD : pool.finderPayout, HEX_REWARD_TOKEN),
    token: HEX_REWARD_TOKEN,
    ...(pool === undefined
      ? {}
      : {
          pool: {
            reward: formatAmount(pool.reward, HEX_REWARD_TOKEN),
            fee: formatAmount(pool.fee, HEX_REWARD_TOKEN),
            finder_payout: formatAmount(pool.finderPayout, HEX_REWARD_TOKEN),
            payees: pool.payees,
            window: Number(pool.window),
          },
        }),
  };
}

function occupied(coord: Coord, blockHash: string | undefined, depth: number | undefined): ApiError {
  const by = blockHash === undefined ? 'another block' : `block ${blockHash} (depth ${depth})`;
  return new ApiError(
    'coordinate_occupied',
    `coordinate ${formatCoord(coord)} is already occupied by ${by}; the first valid block wins: request a new challenge`,
    {
      coord: { q: coord.q, r: coord.r, s: coord.s },
      ...(blockHash === undefined ? {} : { block_hash: blockHash }),
      ...(depth === undefined ? {} : { depth }),
    },
  );
}
