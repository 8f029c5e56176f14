import { randomBytes } from 'node:crypto';
import { parseHexDifficulty, type SseHub, toHex } from '@tensormine/protocol';
import type { ValidatorContext } from '../../context.js';
import {
  type BlockNote,
  type BlockRecord,
  type DifficultyWrite,
  MAX_NOTIFICATION_BYTES,
  type NewBlockRecord,
  type StorageTx,
} from '../../store/types.js';
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
 * How long a block committed behind writes this node had not applied waits for the
 * notifications to bring them (they travel right behind the commit) before it reads them.
 */
const NOTE_WAIT_MS = 1_000;

/**
 * A notification of the chain channel (JSON): the block a node appended, with the difficulty
 * writes committed before it and the retarget write of its height, or a difficulty write alone
 * (an admin change); bigints as decimal strings. `height` alone (no `block`): a node of an
 * earlier version, which its followers answer by catching up from the storage.
 */
interface ChainNote {
  readonly from: string;
  readonly height?: number;
  readonly block?: Omit<BlockRecord, 'difficulty'> & { readonly difficulty: string };
  readonly seqBefore?: number;
  readonly write?: WriteNote;
}

type WriteNote = Omit<DifficultyWrite, 'previous' | 'value'> & {
  readonly previous: string | null;
  readonly value: string;
};

function writeToNote(write: DifficultyWrite): WriteNote {
  return {
    ...write,
    previous: write.previous === null ? null : String(write.previous),
    value: String(write.value),
  };
}

/** @throws SyntaxError for a value that is not an integer (the note is not applied). */
function writeFromNote(note: WriteNote): DifficultyWrite {
  if (typeof note.seq !== 'number' || typeof note.height !== 'number') throw new TypeError('not a write');
  return {
    ...note,
    previous: note.previous === null ? null : BigInt(note.previous),
    value: BigInt(note.value),
  };
}

interface HeightWaiter {
  readonly height: number;
  readonly resolve: (applied: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

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
  /** Requests waiting for the notification stream to reach their block (see committedBlock). */
  readonly #waiters = new Set<HeightWaiter>();
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

  /**
   * The notification of a block appended by `blocks.appendLast`: the note of `notifyBlock`,
   * its height and `seqBefore` filled in by the storage; `atRetarget` with the retarget write
   * the block makes should it land on that write's height.
   */
  blockNote(block: NewBlockRecord, retarget?: DifficultyWrite): BlockNote {
    const note = (write?: DifficultyWrite): string => {
      const text = JSON.stringify({
        from: this.#instance,
        height: -1,
        block: { ...block, height: -1, difficulty: String(block.difficulty) },
        seqBefore: -1,
        ...(write === undefined ? {} : { write: writeToNote(write) }),
      } satisfies ChainNote);
      // (The margin: the height and the write count, up to 16 digits each.)
      return Buffer.byteLength(text) + 32 <= MAX_NOTIFICATION_BYTES
        ? text
        : JSON.stringify({ from: this.#instance, height: -1 });
    };
    return {
      channel: HEXCHAIN_CHANNEL,
      template: note(),
      ...(retarget === undefined ? {} : { atRetarget: note(retarget) }),
      heightKey: '"height":',
      seqKey: '"seqBefore":',
    };
  }

  /**
   * Announces, on commit of `tx`, a block this node appended (with the retarget write of its
   * height, if any): the notification carries what a follower applies, so that it needs no read.
   * @param seqBefore the difficulty writes committed when the block was appended
   */
  notifyBlock(
    tx: StorageTx,
    block: BlockRecord,
    seqBefore: number,
    write: DifficultyWrite | undefined,
  ): Promise<void> {
    const note: ChainNote = {
      from: this.#instance,
      height: block.height,
      block: { ...block, difficulty: String(block.difficulty) },
      seqBefore,
      ...(write === undefined ? {} : { write: writeToNote(write) }),
    };
    const payload = JSON.stringify(note);
    // A block's row is well under the limit (about 600 bytes); should one ever exceed it, the
    // notification says only its height, and the followers read it.
    return tx.notify(
      HEXCHAIN_CHANNEL,
      Buffer.byteLength(payload) <= MAX_NOTIFICATION_BYTES
        ? payload
        : JSON.stringify({ from: this.#instance, height: block.height }),
    );
  }

  /**
   * Follows the chain's notifications, every node's (this node's own too: a block it committed
   * behind writes it had not applied yet is applied when the notification stream reaches it).
   * A notification carrying the next write of the chain is applied as it is, without a read;
   * one beyond it (an earlier one was lost: the listening connection broke, or this node started
   * listening after it) or one without its content (a node of an older version) catches up
   * from the storage. Resolves once listening, with the function that stops.
   */
  listen(): Promise<() => Promise<void>> {
    return this.ctx.storage.listen(HEXCHAIN_CHANNEL, (payload) => {
      if (this.#applyNote(payload)) return;
      this.catchUp().catch((error: unknown) =>
        this.ctx.log.warn({ err: error }, 'hexchain: could not catch the lattice up'),
      );
    });
  }

  /**
   * Applies what a notification carries when it is the chain's next write (or one applied
   * already); false when the node must catch up from the storage instead.
   */
  #applyNote(payload: string): boolean {
    let note: ChainNote;
    try {
      note = JSON.parse(payload) as ChainNote;
    } catch {
      return false;
    }
    if (typeof note !== 'object' || note === null) return false;
    const { state, difficulty } = this;
    try {
      if (note.block !== undefined && typeof note.seqBefore === 'number') {
        const block: BlockRecord = { ...note.block, difficulty: BigInt(note.block.difficulty) };
        if (block.height <= state.appliedHeight) return true;
        if (block.height !== state.appliedHeight + 1 || note.seqBefore !== difficulty.appliedSeq)
          return false;
        const write = note.write === undefined ? undefined : writeFromNote(note.write);
        if (write !== undefined && write.seq !== note.seqBefore + 1) return false;
        this.#applyBlock(block);
        if (write !== undefined) this.#applyWrite(write);
        return true;
      }
      if (note.block === undefined && note.write !== undefined) {
        const write = writeFromNote(note.write);
        if (write.seq <= difficulty.appliedSeq) return true;
        if (write.seq !== difficulty.appliedSeq + 1 || write.height !== state.appliedHeight) return false;
        this.#applyWrite(write);
        return true;
      }
    } catch {
      return false;
    }
    return false;
  }

  /**
   * Applies a block this node committed (and the retarget write of its height, if any): at
   * once when it is the next write of the chain. Else other nodes' writes came before it: their
   * notifications, and then this block's own, are on their way on the listening connection, in
   * commit order, and apply them all without a read; this waits for that (catching up from the
   * storage if it has not happened within NOTE_WAIT_MS), so that the answer follows the block's
   * place in the lattice and on the event stream.
   * @param seqBefore the difficulty writes committed when the block was appended
   */
  async committedBlock(
    block: BlockRecord,
    seqBefore: number,
    retarget: DifficultyWrite | undefined,
  ): Promise<void> {
    if (block.height <= this.state.appliedHeight) return;
    if (block.height === this.state.appliedHeight + 1 && seqBefore === this.difficulty.appliedSeq) {
      this.#applyBlock(block);
      if (retarget !== undefined) this.#applyWrite(retarget);
      return;
    }
    if (await this.#applied(block.height, NOTE_WAIT_MS)) return;
    await this.catchUp();
  }

  /** Resolves true once the lattice applied `height`, false after `ms` if it has not. */
  #applied(height: number, ms: number): Promise<boolean> {
    if (this.state.appliedHeight >= height) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: HeightWaiter = {
        height,
        resolve,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          resolve(false);
        }, ms),
      };
      this.#waiters.add(waiter);
    });
  }

  /** Resolves the waiters of the heights applied. */
  #wake(): void {
    for (const waiter of this.#waiters) {
      if (waiter.height > this.state.appliedHeight) continue;
      clearTimeout(waiter.timer);
      this.#waiters.delete(waiter);
      waiter.resolve(true);
    }
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
        const note: ChainNote = {
          from: this.#instance,
          write: writeToNote({
            seq: written.head.difficultySeq,
            height: written.head.height,
            kind: 'admin',
            previous: written.previous,
            value: next,
            atMs,
          }),
        };
        await tx.notify(HEXCHAIN_CHANNEL, JSON.stringify(note));
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
    if (this.#waiters.size > 0) this.#wake();
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
    // Applied already (from a notification, or a catch-up that read it too).
    if (write.seq <= this.difficulty.appliedSeq) return;
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
