import type { TensormineClient } from '@tensormine/client';
import {
  type DashboardBlocks,
  type HexBlock,
  type HexEvent,
  MAX_PAGE_LIMIT,
  type RecentBlock,
  SseHub,
  type SseHubOptions,
} from '@tensormine/protocol';

/**
 * The proxy's view of the lattice: every mined block (loaded page by page at start, then kept
 * up to date from ONE upstream event stream), the live statistics of GET /api/live, and the hub
 * that re-serves the upstream events to any number of browsers. Events keep their upstream
 * ids, so a browser's Last-Event-ID means the same thing to the proxy and to the validator.
 */

/** A block as the mirror keeps it (the columns of GET /api/dashboard/blocks). */
interface MirroredBlock {
  readonly height: number;
  readonly q: number;
  readonly r: number;
  readonly depth: number;
  readonly miner: number;
  readonly timestamp: number;
  readonly difficulty: number;
  readonly blockHash: string;
}

/**
 * The hash rate and the block time over the time actually mined: the work of the blocks (their
 * difficulty: expected hashes) over the gaps between them, leaving out the idle gaps, when
 * nobody mined: longer than 20 times the median gap and than 10 s (continuous mining gives
 * such a gap with a probability of about 2^-20). The dashboard's page computes the same
 * (public/panels.js, tensormineMinedRate). Undefined for fewer than 2 blocks.
 */
export function minedRate(
  blocks: readonly { readonly timestamp: number; readonly difficulty: number }[],
): { hashesPerSecond: number; blockSeconds: number; idleGaps: number } | undefined {
  if (blocks.length < 2) return undefined;
  const gaps = blocks.slice(1).map((b, i) => Math.max(0, b.timestamp - blocks[i]!.timestamp));
  const sorted = [...gaps].sort((a, b) => a - b);
  const idle = Math.max(20 * sorted[Math.floor(sorted.length / 2)]!, 10);
  let span = 0;
  let work = 0;
  let counted = 0;
  gaps.forEach((gap, i) => {
    if (gap > idle) return;
    span += gap;
    work += blocks[i + 1]!.difficulty;
    counted++;
  });
  return {
    hashesPerSecond: span > 0 ? work / span : 0,
    blockSeconds: counted > 0 ? span / counted : 0,
    idleGaps: gaps.length - counted,
  };
}

/** Blocks the hashrate and the mean block time are estimated over. */
export const RATE_WINDOW_BLOCKS = 64;

export interface MirrorOptions {
  readonly client: TensormineClient;
  readonly events?: SseHubOptions;
  /** Called after every upstream event is applied (the proxy drops its read cache). */
  readonly onChange?: () => void;
  /** No upstream byte for this long means a dead stream (default 45000). */
  readonly idleTimeoutMs?: number;
  readonly log?: (message: string) => void;
}

export class LatticeMirror {
  readonly hub: SseHub;
  readonly #client: TensormineClient;
  readonly #options: MirrorOptions;
  readonly #blocks: MirroredBlock[] = [];
  readonly #byCoord = new Map<string, MirroredBlock>();
  readonly #miners: string[] = [];
  readonly #minerIndex = new Map<string, number>();
  readonly #abort = new AbortController();
  #lastEventId: string | null = null;
  /** The next load starts from an empty mirror (the upstream lattice may have changed). */
  #reset = false;
  #streamOpen = false;
  #loading: Promise<void> | undefined;
  #ready: Promise<void>;
  #resolveReady!: () => void;
  /** Upstream stream connections opened so far (one at a time). */
  upstreamConnections = 0;

  constructor(options: MirrorOptions) {
    this.#client = options.client;
    this.#options = options;
    this.hub = new SseHub({ heartbeatMs: 15_000, ...options.events });
    this.#ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });
  }

  /** Resolves once the first full load is done. */
  get ready(): Promise<void> {
    return this.#ready;
  }

  get streamOpen(): boolean {
    return this.#streamOpen;
  }

  get lastEventId(): string | null {
    return this.#lastEventId;
  }

  get size(): number {
    return this.#blocks.length;
  }

  /** Follows the upstream stream; each (re)open reloads the lattice, so a gap cannot stay. */
  start(): void {
    void (async () => {
      const events = this.#client.hexchain.events({
        signal: this.#abort.signal,
        idleTimeoutMs: this.#options.idleTimeoutMs ?? 45_000,
        onOpen: (endpoint) => {
          this.#streamOpen = true;
          this.upstreamConnections++;
          this.#options.log?.(`event stream open on ${endpoint}`);
          // Events that arrive during the load are applied too: a block is keyed by its
          // coordinate, so seeing it twice is harmless.
          if (this.#lastEventId === null) void this.reload();
        },
        onReconnect: ({ delayMs }) => {
          this.#streamOpen = false;
          this.#options.log?.(`event stream broke; reconnecting in ${delayMs} ms`);
        },
      });
      try {
        for await (const event of events) this.#apply(event);
      } catch (error) {
        this.#options.log?.(
          `event stream refused: ${error instanceof Error ? error.message : String(error)}; lattice reads continue`,
        );
        await this.reload();
      } finally {
        this.#streamOpen = false;
      }
    })();
  }

  stop(): void {
    this.#abort.abort();
    this.hub.close();
  }

  /** Loads every block again (at start, and after a reset of the upstream stream). */
  reload(): Promise<void> {
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  async #load(): Promise<void> {
    for (let attempt = 0; !this.#abort.signal.aborted; attempt++) {
      try {
        let cursor: string | undefined;
        let height = 0;
        if (this.#reset) {
          this.#blocks.length = 0;
          this.#byCoord.clear();
          this.#reset = false;
        }
        do {
          const page = await this.#client.hexchain.lattice(
            cursor === undefined ? { limit: MAX_PAGE_LIMIT } : { limit: MAX_PAGE_LIMIT, cursor },
          );
          // Pages come in height order from height 1.
          for (const block of page.blocks) this.#add(block, ++height);
          cursor = page.next_cursor ?? undefined;
        } while (cursor !== undefined);
        this.#blocks.sort((a, b) => a.height - b.height);
        this.#resolveReady();
        this.#options.onChange?.();
        return;
      } catch (error) {
        this.#options.log?.(`lattice load failed: ${error instanceof Error ? error.message : String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 500 * 2 ** attempt)));
      }
    }
  }

  #apply(event: HexEvent): void {
    if (event.event === 'reset') {
      // Events were missed upstream: forget the replay ring, tell the browsers, load again.
      this.hub.clear();
      this.hub.announce('reset', event.data);
      this.#reset = true;
      void this.reload();
      return;
    }
    if (event.event === 'block') this.#add(event.data.block, event.data.height);
    if (event.id !== '') this.#lastEventId = event.id;
    this.hub.publish(event.event, event.data, event.id === '' ? undefined : event.id);
    this.#options.onChange?.();
  }

  #add(block: HexBlock, height: number): void {
    const key = `${block.coord.q},${block.coord.r}`;
    if (this.#byCoord.has(key)) return;
    let miner = this.#minerIndex.get(block.miner_pubkey);
    if (miner === undefined) {
      miner = this.#miners.length;
      this.#miners.push(block.miner_pubkey);
      this.#minerIndex.set(block.miner_pubkey, miner);
    }
    const mirrored: MirroredBlock = {
      height,
      q: block.coord.q,
      r: block.coord.r,
      depth: block.depth,
      miner,
      timestamp: block.timestamp,
      difficulty: block.difficulty,
      blockHash: block.block_hash,
    };
    this.#byCoord.set(key, mirrored);
    let at = this.#blocks.length;
    while (at > 0 && this.#blocks[at - 1]!.height > mirrored.height) at--;
    this.#blocks.splice(at, 0, mirrored);
  }

  /** The blocks after height `after`, in columns. */
  columns(after = 0): DashboardBlocks {
    const blocks = after === 0 ? this.#blocks : this.#blocks.filter((b) => b.height > after);
    const column = (pick: (b: MirroredBlock) => number) => blocks.map(pick);
    return {
      height: column((b) => b.height),
      q: column((b) => b.q),
      r: column((b) => b.r),
      depth: column((b) => b.depth),
      miner: column((b) => b.miner),
      timestamp: column((b) => b.timestamp),
      difficulty: column((b) => b.difficulty),
      miners: [...this.#miners],
      total: this.#blocks.length,
      last_event_id: this.#lastEventId,
    };
  }

  /** The figures of GET /api/live that come from the blocks. */
  liveFigures(nowS: number, blockIntervalS: number) {
    const recent = this.#blocks.slice(-20).reverse();
    const window = this.#blocks.slice(-RATE_WINDOW_BLOCKS);
    const mined = minedRate(window);
    const hashrate = mined?.hashesPerSecond ?? 0;
    const meanBlockTime = mined === undefined ? null : mined.blockSeconds;
    const last = this.#blocks.at(-1);
    const recentBlocks: RecentBlock[] = recent.map((b) => ({
      coord: { q: b.q, r: b.r, s: -b.q - b.r },
      block_hash: b.blockHash,
      depth: b.depth,
      timestamp: b.timestamp,
      height: b.height,
      miner_pubkey: this.#miners[b.miner]!,
      difficulty: b.difficulty,
    }));
    return {
      hashrate,
      meanBlockTime,
      recentBlocks,
      blocks: this.#blocks.length,
      minersSeen: this.#miners.length,
      mining: last !== undefined && nowS - last.timestamp <= 4 * Math.max(blockIntervalS, 1),
    };
  }
}
