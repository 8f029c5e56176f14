import {
  encodeHeader,
  fromHex,
  type HexSubmitRequest,
  type HexSubmitResult,
  hashMeetsTarget,
  shareTargetFromDifficulty,
  signatureFromWire,
  submissionMessage,
  targetFromHex,
  toHex,
  verify,
  verifyBlock,
} from '@tensormine/protocol';
import type { ValidatorContext } from '../../context.js';
import { ApiError, verdictError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { HexChallengeRecord, StorageTx, TransactionOptions } from '../../store/types.js';
import { COUNTERS } from '../metrics.js';
import type { HexchainService } from '../types.js';
import { backoffKey, type ShareBackoff } from './backoff.js';
import { advanceVardiff, isMember, startingShareDifficulty } from './members.js';
import { PRUNE_EXPIRY_SLACK_S } from './prune.js';
import { ShareRecorder } from './recorder.js';

/**
 * POST /api/hexchain/pool/share (docs/protocol.md section 4.13). A share is verified like a
 * block, against the member's share target instead of the block target: the challenge must
 * have been issued to the member with share terms, the pow hash is recomputed from the header
 * (which holds the member's key, so a share cannot be moved to another key), the signature by
 * the member is checked last. Then: a share already seen is `share_duplicate`; a share whose
 * challenge expired or whose cell is taken is counted as stale and refused (`share_stale`);
 * a share that meets the block target is submitted as the pool's block.
 */

export interface ShareDeps {
  readonly ctx: ValidatorContext;
  readonly chain: () => HexchainService;
  readonly backoff: ShareBackoff;
  readonly pooled: () => boolean;
}

export function shareHandlers({ ctx, chain, backoff, pooled }: ShareDeps) {
  /** Refuses a share: counts it (and, for the back-off, against address + key unless stale). */
  const refuse = async (error: ApiError, key: string | undefined): Promise<never> => {
    if (key !== undefined) await backoff.invalid(key);
    await ctx.metrics.recordRejection(error.code, 'share');
    throw error;
  };

  const recorder = new ShareRecorder(ctx.storage, {
    transaction: ROW_LOCKS,
    count: (tx, n) => tx.counters.add(COUNTERS.sharesAccepted, n),
  });

  return routeHandlers({
    async poolShare(request) {
      const body: HexSubmitRequest = request.body;
      if (!pooled()) {
        throw new ApiError(
          'pool_disabled',
          'this validator runs pool_strategy solo: it takes no shares; submit blocks to POST /api/hexchain/submit',
        );
      }
      const pubkey = body.block.miner_pubkey;
      const key = backoffKey(request.ip, pubkey);
      // One statement: the challenge, its share terms, the back-off and the member.
      const found = await ctx.storage.read((tx) => tx.pool.shareContext(body.challenge_id, key, pubkey));
      const waitMs = backoff.waitOf(found.backoff);
      if (waitMs > 0) {
        const retryAfter = Math.ceil(waitMs / 1000);
        throw new ApiError(
          'share_backoff',
          `too many invalid shares from ${pubkey} lately: wait ${retryAfter} s, then send only shares that meet your share target`,
          { retry_after_s: retryAfter },
          { 'retry-after': String(retryAfter) },
        );
      }

      const { challenge, terms } = found;
      /** Clears the back-off of this address and key after an accepted share (if it has one). */
      const cleared = async (tx: StorageTx) => {
        if (found.backoff !== undefined) await backoff.valid(tx, key);
      };
      if (challenge === undefined) {
        return refuse(
          new ApiError(
            'challenge_not_found',
            `challenge_id: no challenge ${JSON.stringify(body.challenge_id)} was issued by this validator`,
          ),
          key,
        );
      }
      if (terms === undefined && ctx.now() > (challenge.expiresAt + PRUNE_EXPIRY_SLACK_S) * 1000) {
        // Its share terms were pruned with the expired challenge: stale, like any share of an
        // expired challenge (no back-off: it may be honest work that came late).
        await ctx.storage.transaction((tx) => tx.counters.add(COUNTERS.sharesStale, 1), ROW_LOCKS);
        ctx.metrics.recordStaleShare();
        throw new ApiError(
          'share_stale',
          `challenge ${challenge.id} expired at ${challenge.expiresAt} (Unix seconds): the share is counted as stale, not paid; request a new challenge`,
          { reason: 'expired' },
        );
      }
      if (terms === undefined) {
        return refuse(
          new ApiError(
            'share_not_reserved',
            `challenge ${challenge.id} carries no share target: request challenges with your miner_pubkey while you are a pool member`,
          ),
          key,
        );
      }
      if (terms.pubkey !== pubkey) {
        return refuse(
          new ApiError(
            'pubkey_mismatch',
            `block.miner_pubkey: expected ${terms.pubkey} (the member this challenge was issued to), got ${pubkey}; a share cannot change keys`,
          ),
          key,
        );
      }
      if (!isMember(found.member)) {
        return refuse(
          new ApiError('pool_not_member', `block.miner_pubkey: ${pubkey} is not a member of the pool`),
          key,
        );
      }

      const verdict = verifyBlock(
        {
          id: challenge.id,
          coord: challenge.coord,
          challengeHash: fromHex(challenge.challengeHash, 32, 'challenge_hash'),
          target: shareTargetFromDifficulty(terms.shareDifficulty),
        },
        body,
        { requireSignature: ctx.config.requireSignatures },
      );
      if (!verdict.ok) {
        if (verdict.code === 'pow_above_target') {
          if (signedBy(challenge, body)) await countRejected(ctx, pubkey);
          return refuse(
            new ApiError(
              'share_above_target',
              `block.pow_hash: ${body.block.pow_hash} is above your share target for this challenge (share difficulty ${terms.shareDifficulty}); send only hashes at or below share_target`,
              { share_difficulty: Number(terms.shareDifficulty) },
            ),
            key,
          );
        }
        if (verdict.code === 'pow_hash_mismatch') {
          // Never the expected hash: the caller can compute it, an error must not do it for them.
          return refuse(
            new ApiError(
              'pow_hash_mismatch',
              'block.pow_hash: is not SHA-256 of the 88-byte header rebuilt from the challenge and the block fields (protocol section 4.7)',
            ),
            key,
          );
        }
        return refuse(verdictError(verdict), key);
      }

      const powHash = toHex(verdict.powHash);
      const nowMs = ctx.now();
      const isBlock = hashMeetsTarget(verdict.powHash, targetFromHex(challenge.target));
      let stale: 'expired' | 'occupied' | undefined =
        nowMs > challenge.expiresAt * 1000
          ? 'expired'
          : (await chain().isOccupied(challenge.coord))
            ? 'occupied'
            : undefined;

      let block: HexSubmitResult | null = null;
      if (isBlock && stale === undefined) {
        // The hexchain path stores and pays it (its rewardBlock hook records the share).
        const submit = chain().handlers.hexSubmit;
        if (submit === undefined) throw new Error('pool: hexSubmit is not served');
        try {
          block = await submit(request as never, ctx);
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          if (error.code === 'coordinate_occupied') stale = 'occupied';
          else if (error.code === 'challenge_expired') stale = 'expired';
          else return refuse(error, key);
        }
        if (block !== null) {
          if (found.backoff !== undefined) await ctx.storage.transaction(cleared);
          ctx.metrics.recordAccepted('share');
          const member = await ctx.storage.read((tx) => tx.pool.getMember(pubkey));
          return {
            accepted: true as const,
            kind: 'block' as const,
            share_difficulty: Number(terms.shareDifficulty),
            next_share_difficulty: Number(member?.shareDifficulty ?? terms.shareDifficulty),
            pow_hash: powHash,
            block,
          };
        }
      }

      const from = found.member;
      const share = {
        pubkey,
        challengeId: challenge.id,
        powHash,
        difficulty: terms.shareDifficulty,
        blockDifficulty: challenge.difficulty,
        stale: stale !== undefined,
        createdAtMs: nowMs,
      };
      const lastShareAt = Math.floor(nowMs / 1000);
      const vardiff = (tx: StorageTx | undefined) => ({
        nowMs,
        blockDifficulty: chain().info().difficulty,
        targetIntervalMs: ctx.config.poolShareIntervalMs,
        acceptedShares: 1,
        initial: () => {
          // Only a member without a share difficulty needs it (never on the grouped path).
          if (tx === undefined) throw new Error('pool: a starting share difficulty outside a transaction');
          return startingShareDifficulty(tx, pubkey, ctx.config.poolShareIntervalMs);
        },
      });
      /** Locks the member, advances it by this share and counts it; its next share difficulty. */
      const advance = async (tx: StorageTx) => {
        const member = await tx.pool.getMember(pubkey, { lock: true });
        if (member === undefined) throw new Error(`pool: member ${pubkey} vanished`);
        const advanced = await advanceVardiff(member, vardiff(tx));
        await tx.pool.putMember({ ...advanced, sharesAccepted: member.sharesAccepted + 1, lastShareAt });
        await tx.counters.add(COUNTERS.sharesAccepted, 1);
        return advanced.shareDifficulty;
      };
      /** The share in a transaction of its own (stale, a first share, or its member long busy). */
      const alone = () =>
        ctx.storage.transaction(async (tx) => {
          if (!(await tx.pool.insertShare(share))) return { duplicate: true as const };
          if (stale === undefined) {
            const shareDifficulty = await advance(tx);
            await cleared(tx);
            return { duplicate: false as const, shareDifficulty };
          }
          const member = await tx.pool.getMember(pubkey, { lock: true });
          if (member === undefined) throw new Error(`pool: member ${pubkey} vanished`);
          await tx.pool.putMember({ ...member, sharesStale: member.sharesStale + 1 });
          await tx.counters.add(COUNTERS.sharesStale, 1);
          return { duplicate: false as const, shareDifficulty: member.shareDifficulty };
          // Row locks: the share's pow hash is unique, the member is locked before it is read.
        }, ROW_LOCKS);
      const outcome =
        stale === undefined && from.shareDifficulty !== null
          ? // The usual share: written in the node's next group of shares with its member's
            // advance, computed from the member as read above (docs/storage.md, "Pool shares").
            await recorder.write({
              share,
              from,
              next: { ...(await advanceVardiff(from, vardiff(undefined))), lastShareAt },
              readvance: (tx) => advance(tx),
              recorded: cleared,
              alone,
            })
          : await alone();
      if (outcome.duplicate) {
        return refuse(
          new ApiError(
            'share_duplicate',
            `share ${powHash} of challenge ${challenge.id} was already submitted`,
          ),
          key,
        );
      }
      if (stale !== undefined) {
        ctx.metrics.recordStaleShare();
        throw new ApiError(
          'share_stale',
          stale === 'expired'
            ? `challenge ${challenge.id} expired at ${challenge.expiresAt} (Unix seconds): the share is counted as stale, not paid; request a new challenge`
            : `the cell of challenge ${challenge.id} is occupied: the share is counted as stale, not paid; request a new challenge`,
          { reason: stale },
        );
      }
      ctx.metrics.recordAccepted('share');
      return {
        accepted: true as const,
        kind: 'share' as const,
        share_difficulty: Number(terms.shareDifficulty),
        next_share_difficulty: Number(outcome.shareDifficulty ?? terms.shareDifficulty),
        pow_hash: powHash,
        block: null,
      };
    },
  });
}

/** Whether a share's signature verifies (to count a refused share against its member). */
function signedBy(challenge: HexChallengeRecord, body: HexSubmitRequest): boolean {
  if (body.signature === undefined) return false;
  try {
    const header = encodeHeader({
      coord: challenge.coord,
      challengeHash: fromHex(challenge.challengeHash, 32, 'challenge_hash'),
      minerPublicKey: fromHex(body.block.miner_pubkey, 32, 'block.miner_pubkey'),
      nonce: body.block.nonce,
    });
    return verify(
      signatureFromWire(body.signature),
      submissionMessage(challenge.id, header),
      fromHex(body.block.miner_pubkey, 32, 'block.miner_pubkey'),
    );
  } catch {
    return false;
  }
}

async function countRejected(ctx: ValidatorContext, pubkey: string): Promise<void> {
  await ctx.storage.transaction(async (tx) => {
    const member = await tx.pool.getMember(pubkey, { lock: true });
    if (member !== undefined)
      await tx.pool.putMember({ ...member, sharesRejected: member.sharesRejected + 1 });
  }, ROW_LOCKS);
}

/** The share path's transactions take row locks instead of SERIALIZABLE (docs/storage.md). */
const ROW_LOCKS: TransactionOptions = { isolation: 'row-locks' };
