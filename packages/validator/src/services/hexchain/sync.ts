import { randomBytes } from 'node:crypto';
import { parseHexDifficulty, type SseHub, toHex } from '@tensormine/protocol';
import type { ValidatorContext } from '../../context.js';
import type { BlockRecord, DifficultyWrite, StorageTx } from '../../store/types.js';
import type { LiveDifficulty } from './difficulty.js';
import { eventId, publishBlock, publishDifficultyWrite } from './events.js';
import type { LatticeState } from './lattice-state.js';
import { SNAPSHOTS_KEPT } from './load.js';

/**
 * The notification channel of hexchain changes (an accepted block, a difficulty change): every
 * node sharing the database listens and catches its in-memory lattice up (docs/cluster.md).
 */
export const HEXCHAIN_CHANNEL = 'tensormine_hexchain';

/** Blocks (and difficulty writes) read per catch-up query. */
const CATCH_UP_BATCH = 500;

/**
 * Keeps this node's in-memory lattice and difficulty in step with the commits of every node
 * sharing the database (docs/cluster.md): announces this node's commits, follows the others',
 * and publishes them all on the event stream in the chain's order.
 *
 * The chain's writes are ordered by the chain head: each block takes the next height, each
 * difficulty write (a retarget, an admin change) the next number. This node applies them in
 * that order, interleaved as they were committed (a write at height h after block h), so its
 * version (applied height + applied difficulty writes) counts the chain's writes, the same on
 * every node: the id of each event (`<epoch>-<version>`, events.ts).
 */
export class ClusterSync {
  /** Random per process: tells this node's own notifications from the other nodes'. */
  readonly #instance = toHex(randomBytes(8));
  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  /** The height of the newest lattice snapshot this node knows of (see #keepSnapshot). */
  #snapshotHeight: number;
  readonly #snapshotEvery: number;

  constructor(
    private readonly ctx: ValidatorContext,
    private readonly state: LatticeState,
    private readonly difficulty: LiveDifficulty,
    private readonly events: SseHub,
    snapshots: { readonly snapshotHeight: number; readonly snapshotEvery: number },
  ) {
    this.#snapshotHeight = snapshots.snapshotHeight;
    this.#snapshotEvery = snapshots.snapshotEvery;
    this.#keepSnapshot();
  }

  /** The chain version this node has applied (and published): height + difficulty writes. */
  get version(): number {
    return this.state.appliedHeight + this.difficulty.appliedSeq;
  }

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
   * Applies a block this node committed (and the retarget write of its height, if any): at
   * once when it is the next write of the chain, else by catching up (another node's writes
   * came before it and are not applied yet).
   * @param seqBefore the difficulty writes committed when the block was appended
   */
  async committedBlock(
    block: BlockRecord,
    seqBefore: number,
    retarget: DifficultyWrite | undefined,
  ): Promise<void> {
    if (block.height !== this.state.appliedHeight + 1 || seqBefore !== this.difficulty.appliedSeq) {
      await this.catchUp();
      return;
    }
    this.#applyBlock(block);
    if (retarget !== undefined) this.#applyWrite(retarget);
  }

  /**
   * Catches the lattice up with the committed blocks and difficulty writes (of any node). Runs
   * one at a time; a call during a run is served by one more run after it.
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
   * Sets the difficulty (an admin change): written, numbered and announced in its transaction,
   * which locks the chain head, then applied and published in the chain's order.
   */
  async setDifficulty(value: bigint): Promise<void> {
    const next = parseHexDifficulty(value);
    const atMs = this.ctx.now();
    const { previous, head } = await this.ctx.storage.transaction(
      async (tx) => {
        const written = await tx.blocks.setDifficulty(next, { kind: 'admin', atMs });
        await this.notify(tx);
        return written;
      },
      { isolation: 'row-locks' },
    );
    const write: DifficultyWrite = {
      seq: head.difficultySeq,
      height: head.height,
      kind: 'admin',
      previous,
      value: next,
      atMs,
    };
    if (head.height === this.state.appliedHeight && head.difficultySeq === this.difficulty.appliedSeq + 1) {
      this.#applyWrite(write);
    } else {
      await this.catchUp();
    }
  }

  /**
   * Reads the blocks above the applied height and the difficulty writes above the applied
   * number (one snapshot), and applies them in the chain's order: a write of height h right
   * after block h, before block h + 1.
   */
  async #catchUpOnce(): Promise<void> {
    const { ctx, state, difficulty } = this;
    for (;;) {
      const afterHeight = state.appliedHeight;
      const afterSeq = difficulty.appliedSeq;
      const { blocks, writes } = await ctx.storage.read(async (tx) => {
        const [blocks, writes] = await Promise.all([
          tx.blocks.list(afterHeight, CATCH_UP_BATCH),
          tx.blocks.difficultyWrites(afterSeq, CATCH_UP_BATCH),
        ]);
        return { blocks, writes };
      });
      let w = 0;
      for (const block of blocks) {
        for (; w < writes.length && (writes[w] as DifficultyWrite).height < block.height; w++) {
          this.#applyWrite(writes[w] as DifficultyWrite);
        }
        this.#applyBlock(block);
      }
      for (; w < writes.length && (writes[w] as DifficultyWrite).height <= state.appliedHeight; w++) {
        this.#applyWrite(writes[w] as DifficultyWrite);
      }
      if (blocks.length < CATCH_UP_BATCH && writes.length < CATCH_UP_BATCH) return;
    }
  }

  #applyBlock(block: BlockRecord): void {
    if (!this.state.add(block)) return;
    publishBlock(this.events, this.state, block, eventId(this.events.epoch, this.version));
    this.#keepSnapshot();
  }

  /**
   * Every `snapshotEvery` blocks applied (SNAPSHOT_EVERY by default), writes the lattice state in the storage (in its own
   * transaction, after the block's): a start then replays at most that many blocks. Any node
   * may write one; at a height already kept, the first stays (they are the same).
   */
  #keepSnapshot(): void {
    const height = this.state.appliedHeight;
    if (height - this.#snapshotHeight < this.#snapshotEvery) return;
    this.#snapshotHeight = height;
    const state = JSON.stringify(this.state.snapshot());
    this.ctx.storage
      .transaction(
        (tx) => tx.blocks.putSnapshot({ height, state, createdAtMs: this.ctx.now() }, SNAPSHOTS_KEPT),
        { isolation: 'row-locks' },
      )
      .catch((error: unknown) =>
        this.ctx.log.warn({ err: error }, 'hexchain: could not keep a lattice snapshot'),
      );
  }

  #applyWrite(write: DifficultyWrite): void {
    const changed = this.difficulty.apply(write.seq, write.value);
    const id = eventId(this.events.epoch, this.version);
    publishDifficultyWrite(this.events, write, this.difficulty.configured, id);
    if (changed && write.kind === 'retarget') {
      this.ctx.log.info(
        {
          height: write.height,
          from: String(write.previous ?? this.difficulty.configured),
          to: String(write.value),
        },
        'hexchain difficulty retargeted',
      );
    }
  }
}
