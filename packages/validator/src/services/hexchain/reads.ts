import {
  coordEquals,
  formatCoord,
  GENESIS_BLOCK_HASH,
  GENESIS_COORD,
  type HexStatus,
  keptBody,
  type LatticePage,
  parseCoord,
  RETARGET_WINDOW_BLOCKS,
  targetFromDifficulty,
  targetToHex,
} from '@tensormine/protocol';
import { nowSeconds, type ValidatorContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { LiveDifficulty } from './difficulty.js';
import type { LatticeState } from './lattice-state.js';
import { blockToWire, latticeCursor, parseLatticeCursor } from './wire.js';

/** Page size of GET /api/hexchain/lattice when the query has no limit. */
export const LATTICE_DEFAULT_LIMIT = 100;

/** At most this many characters of serialized lattice pages are kept (about 100 default pages). */
const LATTICE_PAGE_CACHE_CHARS = 4 * 1024 * 1024;

/** In a cluster, the open-challenge count of the status is read from the database this often. */
const OPEN_COUNT_TTL_MS = 1_000;

/** What the lattice reads are served from. */
export interface ReadDeps {
  readonly ctx: ValidatorContext;
  readonly state: LatticeState;
  readonly difficulty: LiveDifficulty;
  /** Several nodes share the database: the open-challenge count comes from the database. */
  readonly cluster: boolean;
}

/**
 * GET /api/hexchain/status, /lattice and /block/:q/:r/:s. The status comes from the in-memory
 * lattice state (never waiting for the database); the lattice pages and a block from the
 * storage (the node does not keep the blocks in memory); the status and the pages are kept
 * serialized until the lattice or the difficulty changes.
 */
export function latticeReadHandlers({ ctx, state, difficulty, cluster }: ReadDeps) {
  const lattice = state.lattice;

  /** Serialized pages of GET /api/hexchain/lattice by "after limit", for one lattice version. */
  let pages = { version: -1, bodies: new Map<string, string | Buffer>(), size: 0 };
  /** The serialized status and what it was made from. */
  let statusBody: { version: number; open: number; body: string | Buffer } | undefined;
  /** The status body; its lattice part is rebuilt only after a block or a difficulty change. */
  let cached: { version: number; body: Omit<HexStatus, 'open_challenges'> } | undefined;
  const status = (openChallenges: number): HexStatus => {
    if (cached === undefined || cached.version !== state.version) {
      const height = lattice.height;
      const value = difficulty.value;
      cached = {
        version: state.version,
        body: {
          occupied: lattice.size,
          max_depth: state.maxDepth,
          depth_distribution: state.depthDistribution(),
          frontier_size: lattice.frontierSize,
          difficulty: Number(value),
          target: targetToHex(targetFromDifficulty(value)),
          block_interval_s: Number(ctx.config.blockIntervalMs) / 1000,
          blocks_until_retarget: RETARGET_WINDOW_BLOCKS - (height % RETARGET_WINDOW_BLOCKS),
          last_block_at: state.lastBlockAtMs === null ? null : Math.floor(state.lastBlockAtMs / 1000),
          genesis_hash: GENESIS_BLOCK_HASH,
        },
      };
    }
    return { ...cached.body, open_challenges: openChallenges };
  };

  /**
   * In a cluster: the open challenges of every node, read at most once a second, with this
   * node's own changes since the read (challenges issued, closed or expired here) added at
   * once: a client sees its own challenge counted without waiting for the next read.
   */
  const openCount = { value: 0, own: 0, atMs: Number.NEGATIVE_INFINITY };
  let openRead: Promise<void> | undefined;
  const refreshOpenCount = (): Promise<void> => {
    const own = state.openChallenges(nowSeconds(ctx));
    openRead ??= ctx.storage
      .read((tx) => tx.hexChallenges.countOpen(nowSeconds(ctx)))
      .then((value) => {
        openCount.value = value;
        openCount.own = own;
        openCount.atMs = ctx.now();
      })
      .finally(() => {
        openRead = undefined;
      });
    return openRead;
  };

  return routeHandlers({
    async hexStatus(request) {
      // The answer is kept serialized until the lattice, the difficulty or the open-challenge count
      // changes: most requests cost one comparison, no allocation and no serialization. In a
      // cluster the open challenges are every node's, read from the database at most once a second.
      if (cluster && ctx.now() - openCount.atMs > OPEN_COUNT_TTL_MS) await refreshOpenCount();
      const own = state.openChallenges(nowSeconds(ctx));
      const open = cluster ? Math.max(0, openCount.value + own - openCount.own) : own;
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
        // From the storage, up to the height this node has applied (the page and `total` agree).
        const version = state.version;
        const applied = state.appliedHeight;
        const rows = (await ctx.storage.read((tx) => tx.blocks.list(after, limit))).filter(
          (b) => b.height <= applied,
        );
        const lastHeight = rows.at(-1)?.height;
        const body: LatticePage = {
          blocks: rows.map(blockToWire),
          next_cursor:
            rows.length === limit && lastHeight !== undefined && lastHeight < applied
              ? latticeCursor(lastHeight)
              : null,
          total: applied,
        };
        // The route's own response serializer (the lattice page schema), like any answer.
        const text = request.reply.serializeInput(body, '200') as string;
        kept = keptBody(text);
        // Kept only if no block was applied while it was read.
        if (pages.version === version) {
          pages.bodies.set(key, kept);
          pages.size += text.length;
        }
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
      const block = await ctx.storage.read((tx) => tx.blocks.get(coord));
      if (block === undefined) {
        throw new ApiError(
          'block_not_found',
          `coordinate ${formatCoord(coord)}: no block occupies it${lattice.isFrontier(coord) ? ' (it is on the frontier: a challenge may target it)' : ''}`,
        );
      }
      return blockToWire(block);
    },
  });
}
