import { type Coord, fromHex, type HexBlock, Lattice } from '@tensormine/protocol';
import type { BlockRecord } from '../../store/types.js';
import { blockToWire } from './wire.js';

/**
 * The node's in-memory lattice state: every committed block (by height and by coordinate, in
 * wire form), the depth histogram, and the expiry times of the open challenges. Loaded from the
 * storage at start and updated only after a transaction commits, so that GET
 * /api/hexchain/status and the lattice reads never wait for the database.
 */
export class LatticeState {
  readonly lattice = new Lattice();
  readonly depthCounts = new Map<number, number>([[0, 1]]);
  maxDepth = 0;
  lastBlockAtMs: number | null = null;
  /** Mined blocks in height order (height = index + 1 when heights are contiguous). */
  readonly #byHeight: { readonly height: number; readonly wire: HexBlock }[] = [];
  readonly #byCoord = new Map<string, HexBlock>();
  /** Min-heap of the open challenges' expiry times (Unix seconds). */
  readonly #expiries: number[] = [];
  /** Bumped on every change that the status shows (a block, a difficulty change). */
  version = 0;
  /** Every block of height 1 to this one is applied (blocks may commit out of height order). */
  #contiguous = 0;

  /**
   * Adds a committed block; false (nothing changed) when its coordinate is already applied:
   * a block may come twice, from this node's commit and from the notification of it.
   */
  add(block: BlockRecord): boolean {
    if (this.#byCoord.has(key(block.coord))) return false;
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
    const wire = blockToWire(block);
    this.#byCoord.set(key(block.coord), wire);
    // Commits arrive in height order; insert in place should one ever come late.
    let at = this.#byHeight.length;
    while (at > 0 && this.#byHeight[at - 1]!.height > block.height) at--;
    this.#byHeight.splice(at, 0, { height: block.height, wire });
    while (
      this.#contiguous < this.#byHeight.length &&
      this.#byHeight[this.#contiguous]!.height === this.#contiguous + 1
    ) {
      this.#contiguous++;
    }
    this.version++;
    return true;
  }

  /** The height up to which every block is applied: the catch-up reads the blocks above it. */
  get appliedHeight(): number {
    return this.#contiguous;
  }

  /** The newest applied height (above appliedHeight while an older block is still missing). */
  get topHeight(): number {
    return this.#byHeight.at(-1)?.height ?? 0;
  }

  get blockCount(): number {
    return this.#byHeight.length;
  }

  /** The block at a coordinate (the genesis block has no record). */
  block(coord: Coord): HexBlock | undefined {
    return this.#byCoord.get(key(coord));
  }

  /** Up to `limit` blocks after height `after`, and whether more follow. */
  page(after: number, limit: number): { blocks: HexBlock[]; lastHeight: number | undefined; more: boolean } {
    let lo = 0;
    let hi = this.#byHeight.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#byHeight[mid]!.height <= after) lo = mid + 1;
      else hi = mid;
    }
    const slice = this.#byHeight.slice(lo, lo + limit);
    return {
      blocks: slice.map((e) => e.wire),
      lastHeight: slice.at(-1)?.height,
      more: lo + limit < this.#byHeight.length,
    };
  }

  /** The depth histogram, ascending depth. */
  depthDistribution(): { depth: number; count: number }[] {
    return [...this.depthCounts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([depth, count]) => ({ depth, count }));
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

function key(coord: Coord): string {
  return `${coord.q},${coord.r},${coord.s}`;
}
