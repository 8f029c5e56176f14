import { SseHub } from '@tensormine/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from '../../../test-support/wait.ts';
import type { ValidatorContext } from '../src/context.js';
import { LiveDifficulty } from '../src/services/hexchain/difficulty.js';
import { LatticeState } from '../src/services/hexchain/lattice-state.js';
import { ClusterSync, HEXCHAIN_CHANNEL } from '../src/services/hexchain/sync.js';
import type { BlockRecord, DifficultyWrite, StorageTx } from '../src/store/types.js';

/**
 * How a node follows the chain from its notifications (docs/cluster.md, "Following without
 * reading"), on a storage that records what the node asks of it: a notification carrying the
 * next write is applied without a read; one beyond it makes the node read; a block this node
 * committed behind writes it had not applied waits for their notifications.
 */

/** Blocks on the genesis's frontier (its neighbours), one after the other. */
const COORDS = [
  { q: 1, r: -1, s: 0 },
  { q: 1, r: 0, s: -1 },
  { q: 0, r: 1, s: -1 },
];
function block(height: number): BlockRecord {
  const coord = COORDS[height - 1]!;
  return {
    coord,
    blockHash: height.toString(16).padStart(64, '0'),
    powHash: 'ab'.repeat(32),
    depth: 1,
    parents: [{ q: 0, r: 0, s: 0 }],
    minerPubkey: 'cd'.repeat(32),
    nonce: height,
    challengeId: `c-${height}`,
    slot: height,
    difficulty: 16n,
    timestampMs: 1_700_000_000_000 + height,
    height,
  };
}

const hubs: SseHub[] = [];
afterEach(() => {
  for (const hub of hubs.splice(0)) hub.close();
});

/** A node's sync on a storage that keeps the notifications sent and counts the reads. */
function node(stored: { blocks: BlockRecord[]; writes: DifficultyWrite[] }) {
  let deliver: ((payload: string) => void) | undefined;
  const reads = vi.fn();
  const storage = {
    async listen(_channel: string, handler: (payload: string) => void) {
      deliver = handler;
      return async () => {};
    },
    async read<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
      reads();
      const tx = {
        blocks: {
          list: async (after: number, limit: number) =>
            stored.blocks.filter((b) => b.height > after).slice(0, limit),
          difficultyWrites: async (after: number, limit: number) =>
            stored.writes.filter((w) => w.seq > after).slice(0, limit),
        },
      };
      return fn(tx as unknown as StorageTx);
    },
  };
  const log = { warn: vi.fn(), info: vi.fn() };
  const ctx = { storage, log, now: () => 1_700_000_000_000 } as unknown as ValidatorContext;
  const state = new LatticeState();
  const difficulty = new LiveDifficulty(16n, state, { height: 0, difficulty: null, difficultySeq: 0 });
  const events = new SseHub({ epoch: 'gtest' });
  hubs.push(events);
  const sync = new ClusterSync(ctx, state, difficulty, events, { snapshotHeight: 0, snapshotEvery: 1_000 });
  /** What `notifyBlock` sends for a block (this node's or, alike, another's). */
  const noteOf = async (b: BlockRecord, seqBefore: number, write?: DifficultyWrite) => {
    let sent = '';
    const tx = {
      notify: async (channel: string, payload: string) => {
        expect(channel).toBe(HEXCHAIN_CHANNEL);
        sent = payload;
      },
    } as unknown as StorageTx;
    await sync.notifyBlock(tx, b, seqBefore, write);
    return sent;
  };
  return {
    sync,
    state,
    difficulty,
    events,
    reads,
    noteOf,
    async start() {
      await sync.listen();
    },
    deliver: (payload: string) => deliver?.(payload),
  };
}

describe('following the chain from its notifications', () => {
  it('applies the next block and its retarget from the notification, without a read', async () => {
    const n = node({ blocks: [], writes: [] });
    await n.start();
    const retarget: DifficultyWrite = {
      seq: 1,
      height: 1,
      kind: 'retarget',
      previous: null,
      value: 32n,
      atMs: 1_700_000_000_001,
    };
    n.deliver(await n.noteOf(block(1), 0, retarget));
    expect(n.state.appliedHeight).toBe(1);
    expect(n.difficulty.appliedSeq).toBe(1);
    expect(n.difficulty.value).toBe(32n);
    // The same notification again (this node's own, after its request applied the block): nothing.
    const published = n.events.stats().published;
    n.deliver(await n.noteOf(block(1), 0, retarget));
    expect(n.events.stats().published).toBe(published);
    expect(n.reads).not.toHaveBeenCalled();
  });

  it('reads the storage for a notification beyond its next write (a lost one), or one without the write', async () => {
    const stored = { blocks: [block(1), block(2)], writes: [] };
    const n = node(stored);
    await n.start();
    n.deliver(await n.noteOf(block(2), 0));
    await waitFor(() => n.state.appliedHeight === 2, 'the node to catch up to height 2');
    expect(n.reads).toHaveBeenCalledTimes(1);
    stored.blocks.push(block(3));
    n.deliver(JSON.stringify({ from: 'an-earlier-node', height: 3 }));
    await waitFor(() => n.state.appliedHeight === 3, 'the node to catch up to height 3');
    expect(n.reads).toHaveBeenCalledTimes(2);
  });

  it("waits for the notifications of another node's earlier block, then applies its own, without a read", async () => {
    const n = node({ blocks: [], writes: [] });
    await n.start();
    // This node committed block 2 while block 1 (another node's) was not applied yet.
    let done = false;
    const committed = n.sync.committedBlock(block(2), 0, undefined).then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    n.deliver(await n.noteOf(block(1), 0));
    n.deliver(await n.noteOf(block(2), 0));
    await committed;
    expect(n.state.appliedHeight).toBe(2);
    expect(n.reads).not.toHaveBeenCalled();
    // Both blocks published once, in the chain's order.
    expect(n.events.stats().published).toBe(2);
  });

  it('catches up from the storage when the notifications do not come', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const n = node({ blocks: [block(1), block(2)], writes: [] });
      await n.start();
      const committed = n.sync.committedBlock(block(2), 0, undefined);
      await vi.advanceTimersByTimeAsync(1_000);
      await committed;
      expect(n.state.appliedHeight).toBe(2);
      expect(n.reads).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
