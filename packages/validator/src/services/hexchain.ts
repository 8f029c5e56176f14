import { randomBytes } from 'node:crypto';
import {
  type Coord,
  cellSelector,
  chooseTargetCell,
  coordEquals,
  depthFromParents,
  difficultyAfterBlock,
  formatAmount,
  formatCoord,
  fromHex,
  GENESIS_BLOCK_HASH,
  GENESIS_COORD,
  type HexStatus,
  type HexSubmitRequest,
  type HexSubmitResult,
  hexChallengeEntropy,
  hexChallengeHash,
  keptBody,
  type LatticePage,
  parentsRoot,
  parseCoord,
  parseHexDifficulty,
  RETARGET_WINDOW_BLOCKS,
  SseHub,
  type SseHubOptions,
  shouldRetarget,
  targetFromDifficulty,
  targetFromHex,
  targetToHex,
  toHex,
  verifyBlock,
} from '@tensormine/protocol';
import { nowSeconds, type ValidatorContext } from '../context.js';
import { ApiError, verdictError } from '../http/errors.js';
import { routeHandlers } from '../http/handlers.js';
import type { BlockRecord, ChainHead, HexChallengeRecord, TransactionOptions } from '../store/types.js';
import { LatticeState } from './hexchain/lattice-state.js';
import { challengeToWire, latticeCursor, parseLatticeCursor } from './hexchain/wire.js';
import { COUNTERS } from './metrics.js';
import type { HexchainHooks, HexchainService, PoolBlockPay } from './types.js';

/**
 * The v4.1 hexchain service (docs/protocol.md section 4, docs/.sections/validator-hexchain.md):
 * issues lattice challenges, verifies and stores blocks (the first valid block at a coordinate
 * wins), retargets the difficulty every RETARGET_WINDOW_BLOCKS blocks and serves the lattice.
 *
 * The storage is the source of truth; the in-memory `LatticeState` mirrors the committed blocks
 * and open challenges and changes only after a transaction has committed: the status and the
 * lattice reads are served from it. Accepted blocks, retargets and difficulty changes are
 * published, after their commit, on the `events` hub (GET /api/hexchain/events).
 */

/**
 * The notification channel of hexchain changes (an accepted block, a difficulty change): every
 * node sharing the database listens and catches its in-memory lattice up (docs/cluster.md).
 */
export const HEXCHAIN_CHANNEL = 'tensormine_hexchain';

/** Blocks read per catch-up query. */
const CATCH_UP_BATCH = 500;

/** In a cluster, how many times a challenge is issued again after its lattice was found stale. */
const STALE_RETRIES = 3;

/** In a cluster, the open-challenge count of the status is read from the database this often. */
const OPEN_COUNT_TTL_MS = 1_000;

/** Meta key of the genesis time t[0] in Unix ms: the first start of this database. */
export const HEX_GENESIS_TIME_META_KEY = 'hexchain.genesis_time_ms';

/** The hot paths' transactions take row locks instead of SERIALIZABLE (docs/storage.md). */
const ROW_LOCKS: TransactionOptions = { isolation: 'row-locks' };

/** The reward token of a block. */
export const HEX_REWARD_TOKEN = 'PTM';

/** The reward of one accepted block: 1 PTM (10^9 minor units), to the block's miner_pubkey. */
export const HEX_BLOCK_REWARD = 1_000_000_000n;

/** Page size of GET /api/hexchain/lattice when the query has no limit. */
export const LATTICE_DEFAULT_LIMIT = 100;

/** At most this many characters of serialized lattice pages are kept (about 100 default pages). */
const LATTICE_PAGE_CACHE_CHARS = 4 * 1024 * 1024;

/** What createHexchainService takes beside the context. */
export interface HexchainServiceOptions {
  /** GET /api/hexchain/events: replay ring, heartbeat and per-reader buffer (tests shorten them). */
  readonly events?: SseHubOptions;
  /**
   * Lets the pool (services/pool/) add share terms to a member's challenge and pay a member's
   * block by PPLNS, each inside the transaction of the challenge or the block.
   */
  readonly hooks?: HexchainHooks;
  /**
   * Several nodes share the database: the open-challenge count of the status comes from the
   * database (cached 1 s) instead of this node's own challenges.
   */
  readonly cluster?: boolean;
}

/** Creates the hexchain service: loads the stored blocks into a lattice and the live difficulty. */
export async function createHexchainService(
  ctx: ValidatorContext,
  options: HexchainServiceOptions = {},
): Promise<HexchainService> {
  const hooks = options.hooks ?? {};
  const state = new LatticeState();
  const lattice = state.lattice;
  const events = new SseHub(options.events ?? {});

  /** Random per process: tells this node's own notifications from the other nodes'. */
  const instance = toHex(randomBytes(8));
  const { head, blocks, genesisTimeMs, openExpiries } = await ctx.storage.transaction(async (tx) => {
    let genesis = await tx.meta.get(HEX_GENESIS_TIME_META_KEY);
    if (genesis === undefined) {
      genesis = String(ctx.now());
      await tx.meta.set(HEX_GENESIS_TIME_META_KEY, genesis);
    }
    return {
      head: await tx.blocks.head(),
      blocks: await tx.blocks.all(),
      genesisTimeMs: BigInt(genesis),
      openExpiries: await tx.hexChallenges.openExpiries(nowSeconds(ctx)),
    };
  });
  let difficulty = difficultyOf(head);

  for (const block of blocks) state.add(block);
  for (const expiresAt of openExpiries) state.addOpenChallenge(expiresAt);

  // Difficulty writes (retargets, admin changes) are numbered in the chain head inside their
  // transaction, so that the in-memory value follows the commit order across nodes.
  let appliedSeq = head.difficultySeq;
  /** Applies a numbered difficulty; true when it was newer than the one held. */
  const applyDifficulty = (seq: number, value: bigint): boolean => {
    if (seq <= appliedSeq) return false;
    appliedSeq = seq;
    const changed = value !== difficulty;
    difficulty = value;
    state.version++;
    return changed;
  };
  /** The live difficulty of a chain head (the configured one until the first write). */
  function difficultyOf(chain: ChainHead): bigint {
    return chain.difficulty === null ? ctx.config.hexDifficulty : parseHexDifficulty(chain.difficulty);
  }

  const rejectBlock = async (error: ApiError): Promise<never> => {
    await ctx.metrics.recordRejection(error.code, 'block');
    throw error;
  };

  /** The answer to an accepted block. */
  const acceptance = (block: BlockRecord, pool: PoolBlockPay | undefined): HexSubmitResult => ({
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
  });
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
    const verdict = verifyBlock(
      {
        id: challenge.id,
        coord: challenge.coord,
        challengeHash: fromHex(challenge.challengeHash, 32, 'challenge_hash'),
        target: targetFromHex(challenge.target),
      },
      body,
      { requireSignature: ctx.config.requireSignatures },
    );
    return verdict.ok && toHex(verdict.blockHash) === stored.blockHash ? storedAcceptance(stored) : undefined;
  };

  const handlers = routeHandlers({
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
        const check = options.cluster === true && attempt < STALE_RETRIES;
        record = await ctx.storage.transaction(async (tx) => {
          if (check) {
            const [newer] = await tx.blocks.list(state.appliedHeight, 1);
            if (newer !== undefined && state.block(newer.coord) === undefined) return undefined;
          }
          const serial = await tx.hexChallenges.nextSerial();
          const entropy = hexChallengeEntropy(ctx.seed, serial);
          // The lattice only holds committed blocks, and blocks are never removed: the parents
          // read here stay occupied, so the depth fixed now is final.
          const coord = chooseTargetCell(lattice.frontier(), cellSelector(slot, slotHash, entropy));
          const parents = lattice.parentsOf(coord);
          const target = targetFromDifficulty(difficulty);
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
            difficulty,
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
        if (record === undefined) await catchUp();
      }
      state.addOpenChallenge(record.challenge.expiresAt);
      return { ...challengeToWire(record.challenge), ...record.extras };
    },

    async hexSubmit(request) {
      const body = request.body;
      const pubkey = body.block.miner_pubkey;
      // Issued together: one round trip on PostgreSQL.
      const [challenge, device] = await ctx.storage.read((tx) =>
        Promise.all([tx.hexChallenges.get(body.challenge_id), tx.devices.get(pubkey)]),
      );
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
      if (device === undefined) return rejectBlock(notRegistered('block.miner_pubkey', pubkey));
      if (challenge.minerPubkey !== null && challenge.minerPubkey !== pubkey) {
        return rejectBlock(
          new ApiError(
            'pubkey_mismatch',
            `block.miner_pubkey: expected ${challenge.minerPubkey} (the key this challenge was issued to), got ${pubkey}`,
          ),
        );
      }

      const verdict = verifyBlock(
        {
          id: challenge.id,
          coord: challenge.coord,
          challengeHash: fromHex(challenge.challengeHash, 32, 'challenge_hash'),
          target: targetFromHex(challenge.target),
        },
        body,
        { requireSignature: ctx.config.requireSignatures },
      );
      if (!verdict.ok) {
        return rejectBlock(verdictError(verdict));
      }

      const blockHash = toHex(verdict.blockHash);
      const outcome = await ctx.storage
        .transaction(async (tx) => {
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
          // What does not need the height first, so that the chain head, the one lock every
          // block takes (blocks commit one after the other), is held only for the end of the
          // transaction (docs/storage.md). A pool block is paid after (its payout records the
          // height); one whose miner left the pool meanwhile falls back to the solo rule. Row
          // locks in the order of every hot path: accounts, then the miner's rows.
          const solo = !(await hooks.poolMember?.(tx, pubkey));
          const stats = () =>
            Promise.all([
              tx.counters.add(COUNTERS.blocksAccepted, 1),
              tx.miners.record(pubkey, { blocksAccepted: 1, seenAt: acceptedAt }),
              tx.devices.touch(pubkey, acceptedAt),
            ]);
          if (solo) await Promise.all([tx.ledger.apply([reward]), stats()]);
          const appended = await tx.blocks.append({
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
          });
          // Someone else's block holds the cell (or this very block, sent twice at once): the
          // reward written above is rolled back with the transaction.
          if (appended === undefined) throw new CellTaken();
          const { block } = appended;
          const height = block.height;
          const pool = solo ? undefined : await hooks.rewardBlock?.(tx, block, HEX_BLOCK_REWARD);
          const retarget = shouldRetarget(height, RETARGET_WINDOW_BLOCKS);
          const start = height - RETARGET_WINDOW_BLOCKS;
          const [startBlock] = await Promise.all([
            retarget && start !== 0 ? tx.blocks.byHeight(start) : undefined,
            solo
              ? undefined
              : (pool === undefined ? tx.ledger.apply([reward]) : Promise.resolve()).then(stats),
          ]);

          // The retarget rule (protocol 4.6), in the same transaction so that a crash cannot
          // keep the block and lose the new difficulty.
          const old = difficultyOf(appended.head);
          let next = old;
          let seq = 0;
          if (retarget) {
            if (start !== 0 && startBlock === undefined) {
              throw new Error(`hexchain: block at height ${start} is missing; cannot retarget`);
            }
            next = difficultyAfterBlock({
              difficulty: old,
              height,
              blockTimeMs: BigInt(acceptedAtMs),
              windowStartTimeMs: startBlock === undefined ? genesisTimeMs : BigInt(startBlock.timestampMs),
              windowBlocks: RETARGET_WINDOW_BLOCKS,
              intervalMs: ctx.config.blockIntervalMs,
            });
            seq = (await tx.blocks.setDifficulty(next)).head.difficultySeq;
          }
          await tx.notify(HEXCHAIN_CHANNEL, JSON.stringify({ from: instance, height }));
          return { accepted: true as const, block, pool, old, next, seq };
        }, ROW_LOCKS)
        .catch((error: unknown) => {
          if (error instanceof CellTaken) return { accepted: false as const };
          throw error;
        });

      if (!outcome.accepted) {
        const winner = await ctx.storage.read((tx) => tx.blocks.get(challenge.coord));
        if (winner !== undefined && winner.blockHash === blockHash) return storedAcceptance(winner);
        return rejectBlock(occupied(challenge.coord, winner?.blockHash, winner?.depth));
      }
      if (outcome.block.height > state.appliedHeight + 1) {
        // Blocks of other nodes committed before this one are not applied yet (their
        // notification is on its way), and this block may rest on them: apply them all in
        // height order, this one included, before answering.
        await catchUp();
      } else if (state.add(outcome.block)) {
        publishBlock(outcome.block, outcome.old, outcome.next);
      }
      applyDifficulty(outcome.seq, outcome.next);
      if (outcome.next !== outcome.old) {
        ctx.log.info(
          { height: outcome.block.height, from: outcome.old.toString(), to: outcome.next.toString() },
          'hexchain difficulty retargeted',
        );
      }
      return acceptance(outcome.block, outcome.pool);
    },

    async hexStatus(request) {
      // The answer is kept serialized until the lattice, the difficulty or the open-challenge count
      // changes: most requests cost one comparison, no allocation and no serialization. In a
      // cluster the open challenges are every node's, read from the database at most once a second.
      if (options.cluster && ctx.now() - openCount.atMs > OPEN_COUNT_TTL_MS) await refreshOpenCount();
      const open = options.cluster ? openCount.value : state.openChallenges(nowSeconds(ctx));
      if (statusBody === undefined || statusBody.version !== state.version || statusBody.open !== open) {
        // Made by the route's own response serializer (the HexStatus schema), like any answer.
        const text = request.reply.serializeInput(status(open), '200') as string;
        statusBody = { version: state.version, open, body: keptBody(text) };
      }
      request.reply.header('content-type', 'application/json; charset=utf-8');
      // Sent as it is (Fastify serializes objects only).
      return statusBody.body as unknown as HexStatus;
    },

    async hexLattice(request) {
      const limit = request.query.limit ?? LATTICE_DEFAULT_LIMIT;
      const after = request.query.cursor === undefined ? 0 : parseLatticeCursor(request.query.cursor);
      // Pages are kept serialized until the next block (a page holds `total` and may grow):
      // clients syncing the lattice read the same pages, at up to a hundred blocks each.
      if (pages.version !== state.version || pages.size > LATTICE_PAGE_CACHE_CHARS) {
        pages = { version: state.version, bodies: new Map(), size: 0 };
      }
      const key = `${after} ${limit}`;
      let kept = pages.bodies.get(key);
      if (kept === undefined) {
        const page = state.page(after, limit);
        const body: LatticePage = {
          blocks: page.blocks,
          next_cursor: page.more && page.lastHeight !== undefined ? latticeCursor(page.lastHeight) : null,
          total: state.blockCount,
        };
        // The route's own response serializer (the lattice page schema), like any answer.
        const text = request.reply.serializeInput(body, '200') as string;
        kept = keptBody(text);
        pages.bodies.set(key, kept);
        pages.size += text.length;
      }
      request.reply.header('content-type', 'application/json; charset=utf-8');
      return kept as unknown as LatticePage;
    },

    async hexBlock(request) {
      const coord = parseCoord(request.params);
      if (coordEquals(coord, GENESIS_COORD)) {
        throw new ApiError(
          'block_not_found',
          `coordinate ${formatCoord(coord)} holds the genesis block, which has no header (no pow_hash, nonce or miner); its hash is genesis_hash in GET /api/hexchain/status`,
          { genesis_hash: GENESIS_BLOCK_HASH },
        );
      }
      const block = state.block(coord);
      if (block === undefined) {
        throw new ApiError(
          'block_not_found',
          `coordinate ${formatCoord(coord)}: no block occupies it${lattice.isFrontier(coord) ? ' (it is on the frontier: a challenge may target it)' : ''}`,
        );
      }
      return block;
    },

    async hexEvents(request) {
      const header = request.raw.headers['last-event-id'];
      const lastEventId = typeof header === 'string' ? header : request.query.last_event_id;
      if (events.full) {
        throw new ApiError(
          'service_unavailable',
          `the event stream has its maximum of ${events.size} subscribers; retry later or follow a status proxy`,
        );
      }
      const reply = request.reply;
      reply.hijack();
      reply.raw.writeHead(200, SSE_HEADERS);
      const unsubscribe = events.subscribe(reply.raw, lastEventId);
      reply.raw.on('close', () => unsubscribe?.());
      return '';
    },
  });

  /** Serialized pages of GET /api/hexchain/lattice by "after limit", for one lattice version. */
  let pages = { version: -1, bodies: new Map<string, string | Buffer>(), size: 0 };
  /** The serialized status and what it was made from. */
  let statusBody: { version: number; open: number; body: string | Buffer } | undefined;
  /** The status body; its lattice part is rebuilt only after a block or a difficulty change. */
  let cached: { version: number; body: Omit<HexStatus, 'open_challenges'> } | undefined;
  const status = (openChallenges: number): HexStatus => {
    if (cached === undefined || cached.version !== state.version) {
      const height = lattice.height;
      cached = {
        version: state.version,
        body: {
          occupied: lattice.size,
          max_depth: state.maxDepth,
          depth_distribution: state.depthDistribution(),
          frontier_size: lattice.frontierSize,
          difficulty: Number(difficulty),
          target: targetToHex(targetFromDifficulty(difficulty)),
          block_interval_s: Number(ctx.config.blockIntervalMs) / 1000,
          blocks_until_retarget: RETARGET_WINDOW_BLOCKS - (height % RETARGET_WINDOW_BLOCKS),
          last_block_at: state.lastBlockAtMs === null ? null : Math.floor(state.lastBlockAtMs / 1000),
          genesis_hash: GENESIS_BLOCK_HASH,
        },
      };
    }
    return { ...cached.body, open_challenges: openChallenges };
  };

  /** In a cluster: the open challenges of every node, read at most once a second. */
  const openCount = { value: 0, atMs: Number.NEGATIVE_INFINITY };
  let openRead: Promise<void> | undefined;
  const refreshOpenCount = (): Promise<void> => {
    openRead ??= ctx.storage
      .read((tx) => tx.hexChallenges.countOpen(nowSeconds(ctx)))
      .then((value) => {
        openCount.value = value;
        openCount.atMs = ctx.now();
      })
      .finally(() => {
        openRead = undefined;
      });
    return openRead;
  };

  /**
   * Catches the lattice up with the committed blocks (of any node) and the difficulty: reads
   * the blocks above the applied height, applies the new ones and publishes them on the event
   * stream. Runs one at a time; a call during a run is served by one more run after it.
   */
  const catchUpOnce = async (): Promise<void> => {
    for (;;) {
      const after = state.appliedHeight;
      const read = await ctx.storage.read(async (tx) => {
        const [blocks, head] = await Promise.all([tx.blocks.list(after, CATCH_UP_BATCH), tx.blocks.head()]);
        return { blocks, head };
      });
      const next = difficultyOf(read.head);
      const old = difficulty;
      let retargeted = false;
      for (const block of read.blocks) {
        if (!state.add(block)) continue;
        const retarget = shouldRetarget(block.height, RETARGET_WINDOW_BLOCKS);
        retargeted ||= retarget;
        publishBlock(block, old, retarget ? next : old);
      }
      if (applyDifficulty(read.head.difficultySeq, next) && !retargeted) {
        events.publish('difficulty', { from: Number(old), to: Number(next), at: nowSeconds(ctx) });
      }
      if (read.blocks.length < CATCH_UP_BATCH) return;
    }
  };
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const catchUp = (): Promise<void> => {
    if (queued !== undefined) return queued;
    if (running === undefined) {
      running = catchUpOnce().finally(() => {
        running = undefined;
      });
      return running;
    }
    queued = running
      .catch(() => {})
      .then(() => {
        queued = undefined;
        return catchUp();
      });
    return queued;
  };
  const stopListening = await ctx.storage.listen(HEXCHAIN_CHANNEL, (payload) => {
    let from: unknown;
    try {
      from = (JSON.parse(payload) as { from?: unknown }).from;
    } catch {
      from = undefined;
    }
    // This node's own commits are applied by the request that made them.
    if (from === instance) return;
    catchUp().catch((error: unknown) =>
      ctx.log.warn({ err: error }, 'hexchain: could not catch the lattice up'),
    );
  });

  /** Publishes an accepted block (and the retarget its height ran) after the commit. */
  const publishBlock = (block: BlockRecord, old: bigint, next: bigint): void => {
    const wire = state.block(block.coord);
    if (wire === undefined) return;
    events.publish('block', {
      height: block.height,
      block: wire,
      occupied: lattice.size,
      frontier_size: lattice.frontierSize,
      max_depth: state.maxDepth,
      blocks_until_retarget: RETARGET_WINDOW_BLOCKS - (lattice.height % RETARGET_WINDOW_BLOCKS),
    });
    if (shouldRetarget(block.height, RETARGET_WINDOW_BLOCKS)) {
      events.publish('retarget', {
        height: block.height,
        from: Number(old),
        to: Number(next),
        at: Math.floor(block.timestampMs / 1000),
      });
    }
  };

  return {
    handlers,
    events,
    info: () => ({ difficulty, occupied: lattice.size }),
    isOccupied: (coord) => lattice.get(coord) !== undefined,
    async setDifficulty(value) {
      const next = parseHexDifficulty(value);
      const { seq, from } = await ctx.storage.transaction(async (tx) => {
        const { previous, head } = await tx.blocks.setDifficulty(next);
        await tx.notify(HEXCHAIN_CHANNEL, JSON.stringify({ from: instance }));
        return {
          seq: head.difficultySeq,
          from: previous === null ? ctx.config.hexDifficulty : parseHexDifficulty(previous),
        };
      }, ROW_LOCKS);
      applyDifficulty(seq, next);
      if (from !== next) {
        events.publish('difficulty', { from: Number(from), to: Number(next), at: nowSeconds(ctx) });
      }
    },
    catchUp,
    appliedHeight: () => state.appliedHeight,
    async close() {
      events.close();
      await stopListening();
    },
  };
}

/** The coordinate of a block being appended is taken: its transaction rolls back. */
class CellTaken extends Error {
  constructor() {
    super('the coordinate is occupied');
  }
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

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

function notRegistered(field: string, pubkey: string): ApiError {
  return new ApiError(
    'miner_not_registered',
    `${field}: ${pubkey} is not registered; register it with POST /devices/register`,
  );
}
