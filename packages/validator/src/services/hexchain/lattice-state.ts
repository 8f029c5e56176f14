import { type Coord, fromHex } from '@tensormine/protocol';
import type { BlockRecord } from '../../store/types.js';
import { CompactLattice, type CompactLatticeSnapshot } from './compact-lattice.js';

/**
 * The node's in-memory lattice state: what issuing challenges and the status need, and nothing
 * that grows with the blocks (issue 24: a node holds a million blocks). The frontier and the
 * boundary blocks ({@link CompactLattice}), the depth histogram, the newest block's time, the
 * applied height, and the expiry times of the open challenges. The blocks themselves are read
 * from the storage (the lattice pages, a block by coordinate). Updated only after a transaction
 * commits, in height order; saved as a snapshot in the storage every SNAPSHOT_EVERY blocks, so
 * that a start replays at most that many blocks.
 */
export class LatticeState {
  readonly lattice: CompactLattice;
  readonly depthCounts: Map<number, number>;
  maxDepth: number;
  lastBlockAtMs: number | null;
  /** Min-heap of the open challenges' expiry times (Unix seconds). */
  readonly #expiries: number[] = [];
  /** Bumped on every change that the status shows (a block, a difficulty change). */
  version = 0;

  constructor(snapshot?: LatticeSnapshot) {
    this.lattice = snapshot === undefined ? new CompactLattice() : CompactLattice.restore(snapshot.lattice);
    this.depthCounts = new Map(snapshot?.depthCounts ?? [[0, 1]]);
    this.maxDepth = snapshot?.maxDepth ?? 0;
    this.lastBlockAtMs = snapshot?.lastBlockAtMs ?? null;
  }

  /**
   * Applies the committed block of the next height; false (nothing changed) for a block
   * already applied (a block may come twice, from this node's commit and from a catch-up).
   * @throws Error for a block beyond the next height (the catch-up applies them in order).
   */
  add(block: BlockRecord): boolean {
    if (block.height <= this.appliedHeight) return false;
    if (block.height !== this.appliedHeight + 1) {
      throw new Error(`hexchain: block of height ${block.height} applied after ${this.appliedHeight}`);
    }
    this.lattice.add({
      coord: block.coord,
      blockHash: fromHex(block.blockHash, 32, 'block_hash'),
      depth: block.depth,
    });
    this.depthCounts.set(block.depth, (this.depthCounts.get(block.depth) ?? 0) + 1);
    if (block.depth > this.maxDepth) this.maxDepth = block.depth;
    if (this.lastBlockAtMs === null || block.timestampMs > this.lastBlockAtMs) {
      this.lastBlockAtMs = block.timestampMs;
    }
    this.version++;
    return true;
  }

  /** The height of the newest applied block: every block up to it is applied. */
  get appliedHeight(): number {
    return this.lattice.height;
  }

  /** Whether a cell is occupied, when this state knows (see CompactLattice.occupancy). */
  occupancy(coord: Coord): 'occupied' | 'free' | 'unknown' {
    return this.lattice.occupancy(coord);
  }

  /** The depth histogram, ascending depth. */
  depthDistribution(): { depth: number; count: number }[] {
    return [...this.depthCounts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([depth, count]) => ({ depth, count }));
  }

  /** What a start continues from instead of replaying the blocks up to its height. */
  snapshot(): LatticeSnapshot {
    return {
      height: this.appliedHeight,
      lattice: this.lattice.snapshot(),
      depthCounts: [...this.depthCounts.entries()],
      maxDepth: this.maxDepth,
      lastBlockAtMs: this.lastBlockAtMs,
    };
  }

  /** Records an issued challenge (after its transaction committed). */
  addOpenChallenge(expiresAt: number): void {
    const heap = this.#expiries;
    heap.push(expiresAt);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]! <= heap[i]!) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  /** Challenges still answerable at `now` (Unix seconds: expiresAt >= now), as the storage counts them. */
  openChallenges(now: number): number {
    const heap = this.#expiries;
    while (heap.length > 0 && heap[0]! < now) {
      const last = heap.pop()!;
      if (heap.length === 0) break;
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && heap[l]! < heap[m]!) m = l;
        if (r < heap.length && heap[r]! < heap[m]!) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    }
    return heap.length;
  }
}

/** The lattice state at a height, as the storage keeps it (JSON in `lattice_snapshots`). */
export interface LatticeSnapshot {
  readonly height: number;
  readonly lattice: CompactLatticeSnapshot;
  readonly depthCounts: readonly (readonly [number, number])[];
  readonly maxDepth: number;
  readonly lastBlockAtMs: number | null;
}

/**
 * A snapshot read back from the storage.
 * @throws Error when the text is not a snapshot of `height` (a corrupt row).
 */
export function parseSnapshot(height: number, text: string): LatticeSnapshot {
  const value = JSON.parse(text) as LatticeSnapshot;
  if (
    typeof value !== 'object' ||
    value === null ||
    value.height !== height ||
    typeof value.lattice !== 'object' ||
    !Array.isArray(value.lattice.frontier) ||
    !Array.isArray(value.lattice.boundary) ||
    value.lattice.size !== height + 1 ||
    !Array.isArray(value.depthCounts) ||
    !Number.isSafeInteger(value.maxDepth)
  ) {
    throw new Error(`hexchain: the stored lattice snapshot at height ${height} is not one`);
  }
  return value;
}
