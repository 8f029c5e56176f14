import {
  type Coord,
  compareCoords,
  coordKey,
  formatCoord,
  fromHex,
  GENESIS_BLOCK_HASH,
  GENESIS_COORD,
  GENESIS_DEPTH,
  type HexBlockRef,
  LATTICE_RADIUS_MAX,
  neighbors,
  ring,
  toHex,
} from '@tensormine/protocol';

/**
 * The part of the lattice that issuing challenges needs, in memory: the frontier (the cells a
 * challenge may target) and the boundary blocks (the occupied cells next to an unoccupied one:
 * the only blocks that can still be a new block's parent, with their hash and depth). An
 * interior block (all six neighbours occupied) is never a parent again and is not kept: the
 * storage has it. So the memory grows with the lattice's perimeter, not with its blocks: a
 * compact lattice of a million blocks holds some thousands of cells.
 *
 * It answers what `Lattice` of @tensormine/protocol answers for challenges, identically (the
 * frontier in canonical order, the parents of a frontier cell; test/compact-lattice.test.ts
 * compares them on random lattices), but not the blocks: `block(coord)` is only a boundary
 * block, and whether a cell that is neither frontier nor boundary is occupied is unknown here
 * (it is interior, or not next to any block this node has applied).
 */
export class CompactLattice {
  readonly #frontier = new Map<string, Coord>();
  readonly #boundary = new Map<string, HexBlockRef>();
  #sorted: readonly Coord[] | undefined;
  #size = 0;

  constructor() {
    this.#place({ coord: GENESIS_COORD, blockHash: fromHex(GENESIS_BLOCK_HASH), depth: GENESIS_DEPTH });
  }

  /** The number of occupied cells, genesis included. */
  get size(): number {
    return this.#size;
  }

  /** The chain height: the number of blocks other than genesis. */
  get height(): number {
    return this.#size - 1;
  }

  get frontierSize(): number {
    return this.#frontier.size;
  }

  /** The boundary blocks kept (for the memory figures). */
  get boundarySize(): number {
    return this.#boundary.size;
  }

  /** The frontier in canonical order, cached until the next `add` (what chooseTargetCell indexes). */
  frontier(): readonly Coord[] {
    this.#sorted ??= Object.freeze([...this.#frontier.values()].sort(compareCoords));
    return this.#sorted;
  }

  isFrontier(coord: Coord): boolean {
    return this.#frontier.has(coordKey(coord));
  }

  /** A boundary block (the genesis included while it is one); undefined for any other cell. */
  block(coord: Coord): HexBlockRef | undefined {
    return this.#boundary.get(coordKey(coord));
  }

  /**
   * `occupied` or `free` when this state knows (a boundary block, a frontier cell), else
   * `unknown`: an interior block, or a cell no applied block touches.
   */
  occupancy(coord: Coord): 'occupied' | 'free' | 'unknown' {
    const key = coordKey(coord);
    if (this.#boundary.has(key)) return 'occupied';
    if (this.#frontier.has(key)) return 'free';
    return 'unknown';
  }

  /** The occupied neighbours of a frontier cell in canonical order: the parents of a block issued now. */
  parentsOf(coord: Coord): HexBlockRef[] {
    const parents: HexBlockRef[] = [];
    for (const n of neighbors(coord)) {
      const block = this.#boundary.get(coordKey(n));
      if (block !== undefined) parents.push(block);
    }
    return parents.sort((a, b) => compareCoords(a.coord, b.coord));
  }

  /**
   * Occupies a frontier cell with a committed block (the storage has checked it: it is on the
   * frontier of the committed lattice, which this one follows in height order).
   * @throws Error when the cell is not on this lattice's frontier (blocks applied out of order).
   */
  add(block: HexBlockRef): void {
    const key = coordKey(block.coord);
    if (!this.#frontier.has(key)) {
      throw new Error(`compact lattice: ${formatCoord(block.coord)} is not on the frontier`);
    }
    this.#place({ coord: block.coord, blockHash: Uint8Array.from(block.blockHash), depth: block.depth });
  }

  #place(block: HexBlockRef): void {
    const key = coordKey(block.coord);
    this.#size++;
    this.#frontier.delete(key);
    this.#boundary.set(key, Object.freeze(block));
    // The new cell's unoccupied neighbours join the frontier. An occupied neighbour is a
    // boundary block: it was next to this cell, unoccupied until now.
    const joined: Coord[] = [];
    for (const n of neighbors(block.coord)) {
      const nKey = coordKey(n);
      if (!this.#boundary.has(nKey) && ring(n) <= LATTICE_RADIUS_MAX && !this.#frontier.has(nKey)) {
        this.#frontier.set(nKey, n);
        joined.push(n);
      }
    }
    // This cell and its occupied neighbours may have lost their last unoccupied neighbour.
    this.#settle(block.coord);
    for (const n of neighbors(block.coord)) if (this.#boundary.has(coordKey(n))) this.#settle(n);
    // The canonical order is kept up to date by binary search (a copy, no sort): sorting the
    // frontier again after every block cost O(F log F) comparisons, milliseconds at a million
    // blocks; this is a copy of F references.
    if (this.#sorted !== undefined) {
      const next = [...this.#sorted];
      const at = position(next, block.coord);
      if (at < next.length && compareCoords(next[at]!, block.coord) === 0) next.splice(at, 1);
      for (const n of joined) next.splice(position(next, n), 0, n);
      this.#sorted = Object.freeze(next);
    }
  }

  /** Forgets a block none of whose neighbours is unoccupied (frontier, or beyond the bound). */
  #settle(coord: Coord): void {
    for (const n of neighbors(coord)) {
      if (ring(n) > LATTICE_RADIUS_MAX || this.#frontier.has(coordKey(n))) return;
    }
    this.#boundary.delete(coordKey(coord));
  }

  /** The state, to be stored and restored ({@link CompactLattice.restore}). */
  snapshot(): CompactLatticeSnapshot {
    return {
      size: this.#size,
      frontier: [...this.#frontier.values()].map((c) => [c.q, c.r]),
      boundary: [...this.#boundary.values()].map((b) => [b.coord.q, b.coord.r, toHex(b.blockHash), b.depth]),
    };
  }

  /** The lattice of a snapshot. @throws Error for a snapshot that is not one. */
  static restore(snapshot: CompactLatticeSnapshot): CompactLattice {
    const lattice = new CompactLattice();
    lattice.#frontier.clear();
    lattice.#boundary.clear();
    if (!Number.isSafeInteger(snapshot.size) || snapshot.size < 1) {
      throw new Error(`compact lattice snapshot: size ${String(snapshot.size)}`);
    }
    lattice.#size = snapshot.size;
    for (const [q, r] of snapshot.frontier) {
      const coord = { q, r, s: 0 - q - r };
      lattice.#frontier.set(coordKey(coord), coord);
    }
    for (const [q, r, hash, depth] of snapshot.boundary) {
      const coord = { q, r, s: 0 - q - r };
      lattice.#boundary.set(coordKey(coord), Object.freeze({ coord, blockHash: fromHex(hash, 32), depth }));
    }
    return lattice;
  }
}

/** A compact lattice as stored: its size, the frontier `[q, r]` and the boundary `[q, r, hash, depth]`. */
export interface CompactLatticeSnapshot {
  readonly size: number;
  readonly frontier: readonly (readonly [number, number])[];
  readonly boundary: readonly (readonly [number, number, string, number])[];
}

/** The index of `coord` in the canonically sorted `cells`, or where it goes. */
function position(cells: readonly Coord[], coord: Coord): number {
  let lo = 0;
  let hi = cells.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCoords(cells[mid]!, coord) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
