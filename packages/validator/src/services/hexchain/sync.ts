import { randomBytes } from 'node:crypto';
import {
  parseHexDifficulty,
  RETARGET_WINDOW_BLOCKS,
  type SseHub,
  shouldRetarget,
  toHex,
} from '@tensormine/protocol';
import { nowSeconds, type ValidatorContext } from '../../context.js';
import type { StorageTx } from '../../store/types.js';
import {
  HEX_DIFFICULTY_META_KEY,
  HEX_DIFFICULTY_WRITES_COUNTER,
  type LiveDifficulty,
  numberDifficultyWrite,
} from './difficulty.js';
import { publishBlock, publishDifficulty } from './events.js';
import type { LatticeState } from './lattice-state.js';

/**
 * The notification channel of hexchain changes (an accepted block, a difficulty change): every
 * node sharing the database listens and catches its in-memory lattice up (docs/cluster.md).
 */
export const HEXCHAIN_CHANNEL = 'tensormine_hexchain';

/** Blocks read per catch-up query. */
const CATCH_UP_BATCH = 500;

/**
 * Keeps this node's in-memory lattice and difficulty in step with the commits of every node
 * sharing the database (docs/cluster.md): announces this node's commits, follows the others'.
 */
export class ClusterSync {
  /** Random per process: tells this node's own notifications from the other nodes'. */
  readonly #instance = toHex(randomBytes(8));
  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  constructor(
    private readonly ctx: ValidatorContext,
    private readonly state: LatticeState,
    private readonly difficulty: LiveDifficulty,
    private readonly events: SseHub,
  ) {}

  /** Announces, on commit of `tx`, a change made by this node (a block at `height`, or a difficulty). */
  notify(tx: StorageTx, height?: number): Promise<void> {
    return tx.notify(HEXCHAIN_CHANNEL, JSON.stringify({ from: this.#instance, height }));
  }

  /**
   * Follows the other nodes' notifications (this node's own commits are applied by the request
   * that made them). Resolves once listening, with the function that stops.
   */
  listen(): Promise<() => Promise<void>> {
    return this.ctx.storage.listen(HEXCHAIN_CHANNEL, (payload) => {
      let from: unknown;
      try {
        from = (JSON.parse(payload) as { from?: unknown }).from;
      } catch {
        from = undefined;
      }
      if (from === this.#instance) return;
      this.catchUp().catch((error: unknown) =>
        this.ctx.log.warn({ err: error }, 'hexchain: could not catch the lattice up'),
      );
    });
  }

  /**
   * Catches the lattice up with the committed blocks (of any node) and the difficulty. Runs one
   * at a time; a call during a run is served by one more run after it.
   */
  catchUp(): Promise<void> {
    if (this.#queued !== undefined) return this.#queued;
    if (this.#running === undefined) {
      this.#running = this.#catchUpOnce().finally(() => {
        this.#running = undefined;
      });
      return this.#running;
    }
    this.#queued = this.#running
      .catch(() => {})
      .then(() => {
        this.#queued = undefined;
        return this.catchUp();
      });
    return this.#queued;
  }

  /**
   * Sets the difficulty (an admin change), numbered and announced in its transaction, then
   * applied and published.
   */
  async setDifficulty(value: bigint): Promise<void> {
    const next = parseHexDifficulty(value);
    const { seq, from } = await this.ctx.storage.transaction(async (tx) => {
      const from = await this.difficulty.committedIn(tx);
      await tx.meta.set(HEX_DIFFICULTY_META_KEY, next.toString());
      await this.notify(tx);
      return { seq: await numberDifficultyWrite(tx), from };
    });
    this.difficulty.apply(seq, next);
    if (from !== next) publishDifficulty(this.events, from, next, nowSeconds(this.ctx));
  }

  /**
   * Reads the blocks above the applied height and the difficulty, applies the new ones and
   * publishes them on the event stream.
   */
  async #catchUpOnce(): Promise<void> {
    const { ctx, state, difficulty, events } = this;
    for (;;) {
      const after = state.appliedHeight;
      const read = await ctx.storage.read(async (tx) => ({
        blocks: await tx.blocks.list(after, CATCH_UP_BATCH),
        value: await tx.meta.get(HEX_DIFFICULTY_META_KEY),
        seq: await tx.counters.get(HEX_DIFFICULTY_WRITES_COUNTER),
      }));
      const next = difficulty.fromStored(read.value);
      const old = difficulty.value;
      let retargeted = false;
      for (const block of read.blocks) {
        if (!state.add(block)) continue;
        const retarget = shouldRetarget(block.height, RETARGET_WINDOW_BLOCKS);
        retargeted ||= retarget;
        publishBlock(events, state, block, old, retarget ? next : old);
      }
      if (difficulty.apply(read.seq, next) && !retargeted) {
        publishDifficulty(events, old, next, nowSeconds(ctx));
      }
      if (read.blocks.length < CATCH_UP_BATCH) return;
    }
  }
}
