import {
  cellSelector,
  chooseTargetCell,
  depthFromParents,
  hexChallengeEntropy,
  hexChallengeHash,
  parentsRoot,
  targetFromDifficulty,
  targetToHex,
  toHex,
} from '@tensormine/protocol';
import { nowSeconds, type ValidatorContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { HexChallengeRecord, TransactionOptions } from '../../store/types.js';
import { COUNTERS } from '../metrics.js';
import type { HexchainHooks } from '../types.js';
import type { LiveDifficulty } from './difficulty.js';
import type { LatticeState } from './lattice-state.js';
import type { ClusterSync } from './sync.js';
import { challengeToWire } from './wire.js';

/** In a cluster, how many times a challenge is issued again after its lattice was found stale. */
const STALE_RETRIES = 3;

/** What the challenge route reads and calls. */
export interface ChallengeDeps {
  readonly ctx: ValidatorContext;
  readonly state: LatticeState;
  readonly difficulty: LiveDifficulty;
  readonly sync: ClusterSync;
  readonly hooks: HexchainHooks;
  /** Several nodes share the database: check the lattice is not stale before issuing. */
  readonly cluster: boolean;
}

/** POST /api/hexchain/challenge: a target cell on the frontier, its parents and target. */
export function challengeHandlers({ ctx, state, difficulty, sync, hooks, cluster }: ChallengeDeps) {
  const lattice = state.lattice;
  return routeHandlers({
    async hexChallenge(request) {
      const { slot, slot_hash: slotHash, miner_pubkey: minerPubkey } = request.body;
      if (minerPubkey !== undefined) {
        const device = await ctx.storage.read((tx) => tx.devices.get(minerPubkey));
        if (device === undefined) throw notRegistered('miner_pubkey', minerPubkey);
      }
      const issuedAt = nowSeconds(ctx);
      // In a cluster the lattice may lag another node's block by the time its notification
      // takes: the transaction checks that no block above the applied height is committed (a
      // frontier cell or a parent read here could be stale otherwise), and after a catch-up the
      // issue is tried again (at most STALE_RETRIES times; then the cell is still a valid one,
      // only maybe taken).
      let record:
        | {
            challenge: HexChallengeRecord;
            extras: Awaited<ReturnType<NonNullable<HexchainHooks['challengeTerms']>>>;
          }
        | undefined;
      for (let attempt = 0; record === undefined; attempt++) {
        const check = cluster && attempt < STALE_RETRIES;
        record = await ctx.storage.transaction(async (tx) => {
          // Issued together (one round trip on PostgreSQL): a serial drawn for a stale attempt is
          // a gap, as a rolled-back draw always left.
          const [newer, serial] = await Promise.all([
            // Blocks are applied in height order: one above the applied height is not applied.
            check ? tx.blocks.list(state.appliedHeight, 1).then(([first]) => first) : undefined,
            tx.hexChallenges.nextSerial(),
          ]);
          if (newer !== undefined) return undefined;
          const entropy = hexChallengeEntropy(ctx.seed, serial);
          // The lattice only holds committed blocks, and blocks are never removed: the parents
          // read here stay occupied, so the depth fixed now is final.
          const coord = chooseTargetCell(lattice.frontier(), cellSelector(slot, slotHash, entropy));
          const parents = lattice.parentsOf(coord);
          const live = difficulty.value;
          const target = targetFromDifficulty(live);
          const challengeHash = toHex(
            hexChallengeHash({ coord, slot, slotHash, target, parentsRoot: parentsRoot(parents), entropy }),
          );
          const challenge: HexChallengeRecord = {
            id: `h-${challengeHash.slice(0, 24)}`,
            serial,
            coord,
            slot,
            slotHash,
            challengeHash,
            target: targetToHex(target),
            difficulty: live,
            entropy: toHex(entropy),
            parents: parents.map((p) => ({ coord: p.coord, blockHash: toHex(p.blockHash), depth: p.depth })),
            depth: depthFromParents(parents),
            minerPubkey: minerPubkey ?? null,
            issuedAt,
            expiresAt: issuedAt + ctx.runtime.challengeTtlS,
          };
          const [, , extras] = await Promise.all([
            tx.hexChallenges.insert(challenge),
            tx.counters.add(COUNTERS.hexChallengesIssued, 1),
            hooks.challengeTerms?.(tx, challenge),
          ]);
          return { challenge, extras };
          // Row locks: the serial is a sequence, the lattice is this node's memory, the pool's
          // terms lock the member's row (docs/storage.md).
        }, ROW_LOCKS);
        if (record === undefined) await sync.catchUp();
      }
      ctx.metrics.recordIssued('hexchain');
      state.addOpenChallenge(record.challenge.expiresAt);
      return { ...challengeToWire(record.challenge), ...record.extras };
    },
  });
}

/** The hot paths' transactions take row locks instead of SERIALIZABLE (docs/storage.md). */
export const ROW_LOCKS: TransactionOptions = { isolation: 'row-locks' };

/** The 403 for a key that never registered (a challenge for it, or a block by it). */
export function notRegistered(field: string, pubkey: string): ApiError {
  return new ApiError(
    'miner_not_registered',
    `${field}: ${pubkey} is not registered; register it with POST /devices/register`,
  );
}
