import {
  type Coord,
  formatAmount,
  formatCoord,
  fromHex,
  type HexSubmitRequest,
  type HexSubmitResult,
  RETARGET_WINDOW_BLOCKS,
  targetFromHex,
  toHex,
  verifyBlock,
} from '@tensormine/protocol';
import { nowSeconds, type ValidatorContext } from '../../context.js';
import { ApiError, verdictError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type {
  AppendedBlock,
  BlockRecord,
  ChainHead,
  DifficultyWrite,
  HexChallengeRecord,
  NewBlockRecord,
  StorageTx,
} from '../../store/types.js';
import type { HexchainHooks, PoolBlockPay } from '../types.js';
import { notRegistered, ROW_LOCKS } from './challenges.js';
import { type LiveDifficulty, nextRetarget, plannedRetarget, retargetIn } from './difficulty.js';
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
  readonly hooks: HexchainHooks;
  /** t[0], the window start of the first retarget. */
  readonly genesisTimeMs: bigint;
  /** Other nodes may write to the same database (PostgreSQL). */
  readonly cluster?: boolean;
}

/**
 * On a shared database, at most this many block transactions of one node at once. A block plans
 * its retarget from the committed head read in its first round trip; with at most this many per
 * node in flight, fewer than a window (12) of blocks land between that read and its append up to
 * three nodes, so a block never lands on a retarget height it did not plan for (which would
 * refuse it and re-run its transaction), and the head's queue stays short.
 */
const BLOCKS_IN_FLIGHT = 4;

/**
 * The keys whose last block's check this node remembers (pool member or not): a guess of the
 * next block's shape only, so a stale one (the key joined or left the pool since, through any
 * node) costs a re-run or a round trip, never a wrong payout. About 200 bytes a key.
 */
const POOL_GUESSES = 65_536;

/** What the pool check last answered per key: at most `size` keys, the least recently set forgotten first. */
class Guesses {
  readonly #answers = new Map<string, boolean>();
  constructor(private readonly size: number) {}
  get(pubkey: string): boolean | undefined {
    return this.#answers.get(pubkey);
  }
  set(pubkey: string, member: boolean): void {
    this.#answers.delete(pubkey);
    this.#answers.set(pubkey, member);
    if (this.#answers.size > this.size) {
      const oldest = this.#answers.keys().next();
      if (oldest.done !== true) this.#answers.delete(oldest.value);
    }
  }
}

/**
 * A node that applied no other node's block for this long plans a block's retarget from the
 * head its own last append returned, without reading the head (see `knownHead` in
 * `submitHandlers`). A network makes one block per 10 s: a node beside others sees theirs well
 * within it.
 */
const ALONE_MS = 60_000;

/** First come, first served: at most `size` calls of `run` at once. */
class Limiter {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next === undefined) this.#free++;
      else next();
    }
  }
}

/**
 * POST /api/hexchain/submit: verifies a block and stores it (the first valid block at a
 * coordinate wins) with its reward and the retarget its height runs, in one transaction; the
 * lattice and the event stream change after the commit.
 */
export function submitHandlers({
  ctx,
  state,
  difficulty,
  sync,
  hooks,
  genesisTimeMs,
  cluster = false,
}: SubmitDeps) {
  const inFlight = new Limiter(cluster ? BLOCKS_IN_FLIGHT : Number.POSITIVE_INFINITY);
  const poolGuesses = new Guesses(POOL_GUESSES);
  /**
   * The newest chain head this node has been answered (by its own appends, or read): a block
   * plans its retarget from it instead of reading the committed head while the node is alone on
   * its database (no other node's block applied for ALONE_MS) and has applied nothing newer
   * (a difficulty change). Only a plan: `blocks.appendLast` checks it, and a block landing on a
   * retarget height it did not plan for is refused and re-run (below). Beside other nodes a
   * block reads the head, as every block did before: their blocks, not yet applied here, would
   * make a head this node was answered stale by more than a window (12) of blocks often enough
   * to re-run a few percent of blocks in a burst at three nodes.
   */
  let knownHead: ChainHead | undefined;
  /** When this node last applied a block it had not appended itself (another node's). */
  let othersSeenAtMs = Number.NEGATIVE_INFINITY;
  /** Blocks this node appended, not yet known here (their transactions have not returned). */
  let unlearned = 0;
  const learnHead = (head: ChainHead): void => {
    if (
      knownHead === undefined ||
      head.height > knownHead.height ||
      (head.height === knownHead.height && head.difficultySeq > knownHead.difficultySeq)
    ) {
      knownHead = head;
    }
  };
  /** The known head, if the node is alone and applied nothing newer since (see `knownHead`). */
  const freshHead = (): ChainHead | undefined => {
    if (knownHead === undefined) return undefined;
    const now = ctx.now();
    // Applied beyond the known head by more than this node's own blocks whose answers are
    // still on their way (one may be applied from its notification first): another node's.
    if (state.appliedHeight - knownHead.height > unlearned) othersSeenAtMs = now;
    const alone = now - othersSeenAtMs >= ALONE_MS;
    return alone && knownHead.difficultySeq >= difficulty.appliedSeq ? knownHead : undefined;
  };
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
   * challenge's cell (`stored`) answers this challenge, by this key, with this nonce and
   * pow_hash, and the submission verifies (its signature too).
   */
  const acceptedBefore = async (
    challenge: HexChallengeRecord,
    body: HexSubmitRequest,
    stored: BlockRecord | undefined,
  ): Promise<HexSubmitResult | undefined> => {
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

  /** The block the next retarget's window starts at, and its acceptance time (read once per window). */
  let windowStart: { readonly height: number; readonly timeMs: bigint } | undefined;
  const windowStartOf = async (tx: StorageTx, height: number): Promise<bigint> => {
    if (height === 0) return genesisTimeMs;
    if (windowStart?.height === height) return windowStart.timeMs;
    const block = await tx.blocks.byHeight(height);
    if (block === undefined)
      throw new Error(`hexchain: block at height ${height} is missing; cannot retarget`);
    windowStart = { height, timeMs: BigInt(block.timestampMs) };
    return windowStart.timeMs;
  };

  return routeHandlers({
    async hexSubmit(request) {
      const body = request.body;
      const pubkey = body.block.miner_pubkey;
      // Whether the block is likely a pool block chooses the shape of its transaction, which
      // decides it again (below): what that check last found for this key on this node, else
      // the pool's rows, read with the challenge and the miner's device (two statements issued
      // together, one round trip on PostgreSQL); a key this node knows, one statement.
      const guess = poolGuesses.get(pubkey);
      const [{ challenge, device }, likelyPool] = await ctx.storage.read((tx) =>
        Promise.all([
          tx.hexChallenges.getWithDevice(body.challenge_id, pubkey),
          guess ?? hooks.poolMember?.(tx, pubkey, body.challenge_id) ?? false,
        ]),
      );
      if (challenge === undefined) {
        return rejectBlock(
          new ApiError(
            'challenge_not_found',
            `challenge_id: no challenge ${JSON.stringify(body.challenge_id)} was issued by this validator`,
          ),
        );
      }
      // The block at the cell, read only when this node does not know the cell to be free (a
      // cell it knows taken, or one its lattice does not reach yet).
      const holder =
        state.occupancy(challenge.coord) === 'free'
          ? undefined
          : await ctx.storage.read((tx) => tx.blocks.get(challenge.coord));
      // The same block again by the same key (a client retrying after a lost answer): the
      // original acceptance, also after the challenge expired; never coordinate_occupied.
      const earlier = await acceptedBefore(challenge, body, holder);
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
      // A taken cell is refused before the proof of work is checked; for a cell taken since,
      // the storage decides (the first block appended wins).
      if (holder !== undefined) return rejectBlock(occupied(challenge.coord, holder.blockHash, holder.depth));
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
      const newBlock: NewBlockRecord = {
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
        timestampMs: 0,
      };
      /**
       * The block's transaction. A solo block (as the read above found it: `poolGuess` false)
       * takes two round trips on PostgreSQL: the membership check, the reward's account lock,
       * the miner's rows and the committed head (read without a lock) in one; then the reward's
       * writes, the chain head's append with the block, its notification and the retarget
       * write planned for the next retarget height (`blocks.appendLast`, one statement), the
       * counters and the COMMIT in the other, so that the head, the one lock every block takes
       * (blocks commit one after the other), is held only for the COMMIT (docs/storage.md). A
       * block that lands on a retarget height it did not plan for is refused, and re-run with
       * `append` in the middle of the transaction and the retarget after it (`last` false), the
       * shape a pool block always has (its payout records the height; one whose miner left the
       * pool meanwhile falls back to the solo rule). Should the check find the miner in the pool
       * after all (it joined meanwhile), the attempt rolls back and runs as a pool block.
       */
      const store = (poolGuess: boolean, last: boolean): Promise<Stored> => {
        let appending: Promise<AppendedBlock | { readonly refused: 'taken' | 'retarget' }> | undefined;
        let planned: DifficultyWrite | undefined;
        const run = ctx.storage.transaction(async (tx) => {
          appending = undefined;
          planned = undefined;
          const acceptedAtMs = ctx.now();
          const acceptedAt = Math.floor(acceptedAtMs / 1000);
          const reward = {
            type: 'mining_reward' as const,
            pubkey,
            token: HEX_REWARD_TOKEN,
            amount: HEX_BLOCK_REWARD,
            timestamp: acceptedAt,
            ref: blockHash,
            idempotencyKey: `block:${blockHash}`,
          };
          // The miner's row and the device's touch: one statement on PostgreSQL. (No counter:
          // the node's count of accepted blocks is the chain's height, services/metrics.ts.)
          const stats = () => tx.miners.recordAndTouch(pubkey, { blocksAccepted: 1, seenAt: acceptedAt });
          const block = { ...newBlock, timestampMs: acceptedAtMs };
          const append = () => tx.blocks.append(block);
          // Row locks in the order of every hot path: accounts, then the miner's rows, then the
          // chain head.
          let solo: boolean;
          let appended: AppendedBlock | undefined;
          if (!poolGuess) {
            // (The committed head, read without a lock, for the retarget's plan below, unless
            // this node knows the newest one.)
            const fresh = last ? freshHead() : undefined;
            const [member, , , committed] = await Promise.all([
              hooks.poolMember?.(tx, pubkey, challenge.id),
              tx.ledger.apply([reward]),
              stats(),
              last && fresh === undefined ? tx.blocks.head() : undefined,
            ]);
            poolGuesses.set(pubkey, member === true);
            if (member === true) throw new PoolBlockAfterAll();
            if (last) {
              // Left in flight: it goes out with the COMMIT (a refusal fails the transaction).
              // The retarget write should the block land on the next retarget height above the
              // committed head (read in this round trip, or the one this node was last answered
              // when it has applied nothing newer since: not its applied state alone, which may
              // be behind other nodes' blocks).
              if (committed !== undefined) learnHead(committed);
              const head = committed ?? fresh ?? (await tx.blocks.head());
              const next = nextRetarget(head.height);
              const retarget = plannedRetarget(difficulty, head, {
                height: next.height,
                blockTimeMs: acceptedAtMs,
                windowStartTimeMs: await windowStartOf(tx, next.windowStart),
                intervalMs: ctx.config.blockIntervalMs,
              });
              planned = retarget;
              appending = tx.blocks.appendLast(
                block,
                RETARGET_WINDOW_BLOCKS,
                sync.blockNote(block, retarget),
                retarget,
              );
              appending.catch(() => undefined);
              return undefined;
            }
            solo = true;
            appended = await append();
          } else {
            solo = !(await hooks.poolMember?.(tx, pubkey, challenge.id));
            poolGuesses.set(pubkey, !solo);
            if (solo) await Promise.all([tx.ledger.apply([reward]), stats()]);
            appended = await append();
          }
          // Someone else's block holds the cell (or this very block, sent twice at once): the
          // reward written above is rolled back with the transaction.
          if (appended === undefined) throw new CellTaken();
          const pool = solo ? undefined : await hooks.rewardBlock?.(tx, appended.block, HEX_BLOCK_REWARD);
          if (!solo) await (pool === undefined ? tx.ledger.apply([reward]) : undefined);
          if (!solo) await stats();
          const retarget = await retargetIn(tx, difficulty, {
            head: appended.head,
            blockTimeMs: acceptedAtMs,
            genesisTimeMs,
            intervalMs: ctx.config.blockIntervalMs,
          });
          await sync.notifyBlock(tx, appended.block, appended.head.difficultySeq, retarget.write);
          return {
            accepted: true as const,
            block: appended.block,
            pool,
            seqBefore: appended.head.difficultySeq,
            write: retarget.write,
            head:
              retarget.write === undefined
                ? appended.head
                : {
                    height: appended.head.height,
                    difficulty: retarget.write.value,
                    difficultySeq: retarget.write.seq,
                  },
          };
        }, ROW_LOCKS);
        return run.then(
          async (done) => {
            if (done !== undefined) {
              learnHead(done.head);
              return done;
            }
            const appended = await appending;
            if (appended === undefined || 'refused' in appended) {
              throw new Error('hexchain: a block transaction committed without its block');
            }
            learnHead(appended.head);
            // Landed on the retarget height planned: it made that write (the head's count after it).
            const write =
              planned !== undefined && planned.height === appended.block.height ? planned : undefined;
            return {
              accepted: true as const,
              block: appended.block,
              pool: undefined,
              seqBefore: appended.head.difficultySeq - (write === undefined ? 0 : 1),
              write,
              head: appended.head,
            };
          },
          async (error: unknown) => {
            const refused = await appending?.then(
              (outcome) => ('refused' in outcome ? outcome.refused : undefined),
              () => undefined,
            );
            if (refused === 'taken') throw new CellTaken();
            // Another node's blocks brought the head to a retarget height: appended mid-transaction.
            if (refused === 'retarget') return store(poolGuess, false);
            throw error;
          },
        );
      };
      const outcome = await inFlight.run(async () => {
        unlearned++;
        try {
          return await store(likelyPool === true, true)
            .catch((error: unknown) => {
              if (error instanceof PoolBlockAfterAll) return store(true, false);
              throw error;
            })
            .catch((error: unknown) => {
              if (error instanceof CellTaken) return { accepted: false as const };
              throw error;
            });
        } finally {
          unlearned--;
        }
      });

      if (!outcome.accepted) {
        const winner = await ctx.storage.read((tx) => tx.blocks.get(challenge.coord));
        if (winner !== undefined && winner.blockHash === blockHash) return storedAcceptance(winner);
        return rejectBlock(occupied(challenge.coord, winner?.blockHash, winner?.depth));
      }
      // Applied (and published) in the chain's order: at once when nothing of another node came
      // before it, else after the writes that did (their notification is on its way, and this
      // block may rest on their blocks), before answering.
      ctx.metrics.recordAccepted('block');
      await sync.committedBlock(outcome.block, outcome.seqBefore, outcome.write);
      return acceptance(outcome.block, outcome.pool);
    },
  });
}

/** A block's transaction committed: the block and what followers and the answer need. */
interface Stored {
  readonly accepted: true;
  readonly block: BlockRecord;
  readonly pool: PoolBlockPay | undefined;
  /** The difficulty writes committed when the block was appended. */
  readonly seqBefore: number;
  /** The retarget write of the block's height, if any. */
  readonly write: DifficultyWrite | undefined;
  /** The chain head after the block's transaction. */
  readonly head: ChainHead;
}

/** A block stored as solo whose miner the transaction found in the pool: it rolls back, to run as a pool block. */
class PoolBlockAfterAll extends Error {
  constructor() {
    super('the miner is a pool member');
  }
}

/** The coordinate of a block being appended is taken: its transaction rolls back. */
class CellTaken extends Error {
  constructor() {
    super('the coordinate is occupied');
  }
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
