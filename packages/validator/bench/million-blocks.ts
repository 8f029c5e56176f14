/**
 * The block maker of bench/million.bench.ts, run in a worker thread so that making blocks (the
 * lattice state, the challenge hash, the proof of work) and writing them (SQLite, on the bench's
 * main thread) overlap. It keeps the node's own in-memory lattice state and makes, for each next
 * height, the challenge a node would have issued and a block solving it: on the frontier at its
 * time, with its parents and depth, a proof of work at the difficulty in force (16, held there by
 * the retarget every 12 blocks, blocks 10 s apart), and the lattice snapshot where one is due.
 * It sends them in batches, at most two ahead of the writer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  cellSelector,
  chooseTargetCell,
  depthFromParents,
  difficultyAfterBlock,
  formatPublicKey,
  hexBlockHash,
  hexChallengeHash,
  keyPairFromSecret,
  parentsRoot,
  RETARGET_WINDOW_BLOCKS,
  shouldRetarget,
  solveBlock,
  taggedHash,
  targetFromDifficulty,
  targetToHex,
  toHex,
  u64le,
  utf8,
} from '@tensormine/protocol';
import { LatticeState } from '../src/services/hexchain/lattice-state.js';
import { SNAPSHOT_EVERY } from '../src/services/hexchain/load.js';
import type { BlockRecord, HexChallengeRecord, NewBlockRecord } from '../src/store/types.js';

export const INTERVAL_MS = 10_000;
/** Blocks per batch (the writer commits one batch per transaction). */
export const GROW_BATCH = 5_000;
export const MINER = keyPairFromSecret(taggedHash('bench/million', utf8('miner')));
export const MINER_KEY = formatPublicKey(MINER.publicKey);

/** One block to write: its challenge, the block, the retarget after it, the snapshot due at it. */
export interface MadeBlock {
  readonly height: number;
  readonly challenge: HexChallengeRecord;
  readonly block: NewBlockRecord;
  readonly retarget?: { readonly value: bigint; readonly atMs: number };
  readonly snapshot?: string;
}

export type ToMaker =
  /** Make the blocks above the current height up to `target`, serials from `serial` on. */
  | { readonly type: 'grow'; readonly target: number; readonly serial: number }
  /** The writer committed a batch: one more may be sent. */
  | { readonly type: 'ack' }
  /** Stop after the batch being made (the time budget ran out). */
  | { readonly type: 'stop' }
  /** Blocks the node appended (in height order), then the difficulty an operator set. */
  | { readonly type: 'apply'; readonly blocks: readonly BlockRecord[]; readonly difficulty: bigint };

export type FromMaker =
  | { readonly type: 'batch'; readonly blocks: readonly MadeBlock[] }
  | { readonly type: 'done'; readonly height: number };

/**
 * Snapshots the writer stores: those a start can read (a node writes one every SNAPSHOT_EVERY
 * blocks; the others are skipped), never at the height measured next, whose start then replays
 * the SNAPSHOT_EVERY blocks above the previous one, the most a node ever replays.
 */
function snapshotDue(height: number, target: number): boolean {
  return (
    height % SNAPSHOT_EVERY === 0 &&
    height !== target &&
    (target - height < 10 * SNAPSHOT_EVERY || height % 10_000 === 0)
  );
}

class Maker {
  readonly state = new LatticeState();
  difficulty = 16n;
  /** Acceptance time of the blocks by height (for the retarget's window start). */
  readonly times: number[] = [];
  lastMs: number;

  constructor(readonly genesisMs: number) {
    this.lastMs = genesisMs;
  }

  make(height: number, serial: number, target: number): MadeBlock {
    const { state } = this;
    const entropy = taggedHash('bench/million/entropy', u64le(serial));
    const coord = chooseTargetCell(state.lattice.frontier(), cellSelector(serial, 'million', entropy));
    const parents = state.lattice.parentsOf(coord);
    const powTarget = targetFromDifficulty(this.difficulty);
    const challengeHash = hexChallengeHash({
      coord,
      slot: serial,
      slotHash: 'million',
      target: powTarget,
      parentsRoot: parentsRoot(parents),
      entropy,
    });
    const atMs = this.lastMs + INTERVAL_MS;
    this.lastMs = atMs;
    const challenge: HexChallengeRecord = {
      id: `h-${toHex(challengeHash).slice(0, 24)}`,
      serial,
      coord,
      slot: serial,
      slotHash: 'million',
      challengeHash: toHex(challengeHash),
      target: targetToHex(powTarget),
      difficulty: this.difficulty,
      entropy: toHex(entropy),
      parents: parents.map((p) => ({ coord: p.coord, blockHash: toHex(p.blockHash), depth: p.depth })),
      depth: depthFromParents(parents),
      minerPubkey: MINER_KEY,
      issuedAt: Math.floor(atMs / 1000) - 1,
      expiresAt: Math.floor(atMs / 1000) + 59,
    };
    const solved = solveBlock({ challengeHash, coord, minerPublicKey: MINER.publicKey, target: powTarget });
    if (solved === undefined) throw new Error('unsolved');
    const block: NewBlockRecord = {
      coord,
      blockHash: toHex(hexBlockHash(solved.header)),
      powHash: toHex(solved.powHash),
      depth: challenge.depth,
      parents: parents.map((p) => p.coord),
      minerPubkey: MINER_KEY,
      nonce: solved.nonce,
      challengeId: challenge.id,
      slot: serial,
      difficulty: this.difficulty,
      timestampMs: atMs,
    };
    this.state.add({ ...block, height });
    this.times[height] = atMs;
    let retarget: MadeBlock['retarget'];
    if (shouldRetarget(height, RETARGET_WINDOW_BLOCKS)) {
      const start = height - RETARGET_WINDOW_BLOCKS;
      this.difficulty = difficultyAfterBlock({
        difficulty: this.difficulty,
        height,
        blockTimeMs: BigInt(atMs),
        windowStartTimeMs: BigInt(start === 0 ? this.genesisMs : (this.times[start] as number)),
        windowBlocks: RETARGET_WINDOW_BLOCKS,
        intervalMs: BigInt(INTERVAL_MS),
      });
      retarget = { value: this.difficulty, atMs };
    }
    return {
      height,
      challenge,
      block,
      ...(retarget === undefined ? {} : { retarget }),
      ...(snapshotDue(height, target) ? { snapshot: JSON.stringify(this.state.snapshot()) } : {}),
    };
  }

  /**
   * The node's blocks carry the real time; the made blocks keep their own clock, which stays in
   * the past (the bench's genesis is early enough): otherwise the challenges of every block made
   * after a measurement would still be open at the next start, which loads the open challenges.
   * The retarget's window reads the node's blocks on the made clock too.
   */
  apply(blocks: readonly BlockRecord[], difficulty: bigint): void {
    for (const b of blocks) {
      this.state.add(b);
      this.lastMs += INTERVAL_MS;
      this.times[b.height] = this.lastMs;
    }
    this.difficulty = difficulty;
  }
}

function run(): void {
  const port = parentPort;
  if (port === null) throw new Error('million-blocks: not in a worker');
  const maker = new Maker((workerData as { genesisMs: number }).genesisMs);
  let inFlight = 0;
  let stopped = false;
  let wake: (() => void) | undefined;
  const grow = async (target: number, firstSerial: number): Promise<void> => {
    let serial = firstSerial;
    while (maker.state.appliedHeight < target && !stopped) {
      while (inFlight >= 2 && !stopped) await new Promise<void>((resolve) => (wake = resolve));
      if (stopped) break;
      const end = Math.min(target, maker.state.appliedHeight + GROW_BATCH);
      const blocks: MadeBlock[] = [];
      for (let height = maker.state.appliedHeight + 1; height <= end; height++) {
        blocks.push(maker.make(height, serial++, target));
      }
      inFlight++;
      port.postMessage({ type: 'batch', blocks } satisfies FromMaker);
      // Let the writer's acks in between batches.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    port.postMessage({ type: 'done', height: maker.state.appliedHeight } satisfies FromMaker);
  };
  port.on('message', (message: ToMaker) => {
    if (message.type === 'ack') {
      inFlight--;
      wake?.();
    } else if (message.type === 'stop') {
      stopped = true;
      wake?.();
    } else if (message.type === 'apply') {
      maker.apply(message.blocks, message.difficulty);
    } else {
      stopped = false;
      inFlight = 0;
      void grow(message.target, message.serial);
    }
  });
}

if (parentPort !== null) run();
