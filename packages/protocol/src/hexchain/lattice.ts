import { fromHex } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { LATTICE_RADIUS_MAX } from './constants.js';
import { type Coord, compareCoords, coordKey, formatCoord, parseCoord, ring } from './coord.js';
import { GENESIS_BLOCK_HASH, GENESIS_COORD, GENESIS_DEPTH } from './genesis.js';
import { neighbors } from './neighbors.js';
import type { HexBlockRef } from './parents.js';

/**
 * The occupied cells of the hexchain and their frontier, kept incrementally: `add` costs O(1)
 * (it looks at the six neighbours of the new cell). Starts with the genesis block at the origin.
 * Blocks are never removed or replaced: adding to an occupied cell throws.
 * To rebuild a lattice after a restart, add the stored blocks in acceptance order.
 */
export class Lattice {
  readonly #blocks = new Map<string, HexBlockRef>();
  readonly #frontier = new Map<string, Coord>();
  #sorted: readonly Coord[] | undefined;

  constructor() {
    this.#place({ coord: GENESIS_COORD, blockHash: fromHex(GENESIS_BLOCK_HASH), depth: GENESIS_DEPTH });
  }

  /** The number of occupied cells, genesis included. */
  get size(): number {
    return this.#blocks.size;
  }

  /** The chain height: the number of blocks other than genesis. */
  get height(): number {
    return this.#blocks.size - 1;
  }

  has(coord: Coord): boolean {
    return this.#blocks.has(coordKey(coord));
  }

  get(coord: Coord): HexBlockRef | undefined {
    return this.#blocks.get(coordKey(coord));
  }

  /** True when `coord` is on the frontier: unoccupied, inside the bound, next to a block. */
  isFrontier(coord: Coord): boolean {
    return this.#frontier.has(coordKey(coord));
  }

  /** The number of frontier cells. */
  get frontierSize(): number {
    return this.#frontier.size;
  }

  /**
   * The frontier in canonical order, the list that `chooseTargetCell` indexes. The sorted array
   * is cached until the next `add`, so issuing many challenges between blocks sorts once.
   */
  frontier(): readonly Coord[] {
    this.#sorted ??= Object.freeze([...this.#frontier.values()].sort(compareCoords));
    return this.#sorted;
  }

  /** The occupied neighbours of `coord` in canonical order: the parents of a block issued now. */
  parentsOf(coord: Coord): HexBlockRef[] {
    const parents: HexBlockRef[] = [];
    for (const n of neighbors(coord)) {
      const block = this.#blocks.get(coordKey(n));
      if (block !== undefined) parents.push(block);
    }
    return parents.sort((a, b) => compareCoords(a.coord, b.coord));
  }

  /** Every block, genesis first, in the order they were added. */
  blocks(): IterableIterator<HexBlockRef> {
    return this.#blocks.values();
  }

  /**
   * Occupies a frontier cell with an accepted block.
   * @throws ProtocolError `coordinate_occupied` when a block is already there (the first valid
   *   block wins), `invalid_coordinate` when the cell is not on the frontier, `invalid_block`
   *   when the hash is not 32 bytes or the depth is not a positive integer.
   */
  add(block: HexBlockRef): void {
    const coord = parseCoord(block.coord);
    const key = coordKey(coord);
    if (this.#blocks.has(key)) {
      throw new ProtocolError(
        'coordinate_occupied',
        `coordinate: ${formatCoord(coord)} is already occupied; the first valid block wins`,
      );
    }
    if (!this.#frontier.has(key)) {
      throw new ProtocolError(
        'invalid_coordinate',
        `coordinate: expected a frontier cell (unoccupied, next to a block), got ${formatCoord(coord)}`,
      );
    }
    if (!(block.blockHash instanceof Uint8Array) || block.blockHash.length !== 32) {
      throw new ProtocolError(
        'invalid_block',
        `block hash: expected 32 bytes, got ${block.blockHash.length}`,
      );
    }
    if (!Number.isSafeInteger(block.depth) || block.depth < 1) {
      throw new ProtocolError('invalid_block', `depth: expected an integer >= 1, got ${block.depth}`);
    }
    this.#place({ coord, blockHash: Uint8Array.from(block.blockHash), depth: block.depth });
  }

  #place(block: HexBlockRef): void {
    const key = coordKey(block.coord);
    this.#blocks.set(key, Object.freeze(block));
    this.#frontier.delete(key);
    for (const n of neighbors(block.coord)) {
      const nKey = coordKey(n);
      if (!this.#blocks.has(nKey) && ring(n) <= LATTICE_RADIUS_MAX) this.#frontier.set(nKey, n);
    }
    this.#sorted = undefined;
  }
}
