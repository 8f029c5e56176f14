import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex, u64le, utf8 } from '../src/bytes.js';
import { sha256, taggedHash } from '../src/hash.js';
import { chooseTargetCell } from '../src/hexchain/cell.js';
import { type Coord, coordEquals, coordKey, distance } from '../src/hexchain/coord.js';
import { frontier } from '../src/hexchain/frontier.js';
import { GENESIS_BLOCK_HASH, GENESIS_COORD } from '../src/hexchain/genesis.js';
import { Lattice } from '../src/hexchain/lattice.js';
import { neighbors } from '../src/hexchain/neighbors.js';
import { depthFromParents, parentsRoot } from '../src/hexchain/parents.js';
import { thrown } from './helpers.js';

const blockHashFor = (c: Coord) => sha256(utf8(`block ${coordKey(c)}`));

/** Grows a lattice, at each step occupying frontier[pick % size], with the depth its parents give. */
function grow(picks: readonly number[], onStep?: (lattice: Lattice) => void): Lattice {
  const lattice = new Lattice();
  for (const pick of picks) {
    const cells = lattice.frontier();
    const coord = cells[pick % cells.length]!;
    lattice.add({ coord, blockHash: blockHashFor(coord), depth: depthFromParents(lattice.parentsOf(coord)) });
    onStep?.(lattice);
  }
  return lattice;
}

describe('genesis', () => {
  it('occupies the origin with depth 0 and block hash taggedHash("PTM41/genesis")', () => {
    const lattice = new Lattice();
    expect(GENESIS_BLOCK_HASH).toBe(toHex(taggedHash('PTM41/genesis')));
    expect(GENESIS_COORD).toEqual({ q: 0, r: 0, s: 0 });
    const genesis = lattice.get(GENESIS_COORD)!;
    expect(genesis.depth).toBe(0);
    expect(toHex(genesis.blockHash)).toBe(GENESIS_BLOCK_HASH);
    expect(lattice.size).toBe(1);
    expect(lattice.height).toBe(0);
  });

  it('leaves the six cells of ring 1 as the first frontier, in canonical order', () => {
    expect(new Lattice().frontier().map(coordKey)).toEqual([
      '-1,0,1',
      '-1,1,0',
      '0,-1,1',
      '0,1,-1',
      '1,-1,0',
      '1,0,-1',
    ]);
  });
});

describe('frontier (reference)', () => {
  it('lists the unoccupied cells next to an occupied one, in canonical order', () => {
    const occupied = [GENESIS_COORD, { q: 1, r: -1, s: 0 }];
    expect(frontier(occupied).map(coordKey)).toEqual([
      '-1,0,1',
      '-1,1,0',
      '0,-1,1',
      '0,1,-1',
      '1,0,-1',
      '1,-2,1',
      '2,-2,0',
      '2,-1,-1',
    ]);
  });

  it('is empty for an empty lattice and excludes cells beyond the bound', () => {
    expect(frontier([])).toEqual([]);
    const edge = { q: 1_048_576, r: -1_048_576, s: 0 };
    const cells = frontier([edge]);
    expect(cells.map(coordKey)).toEqual(['1048575,-1048575,0', '1048575,-1048576,1', '1048576,-1048575,-1']);
  });
});

describe('Lattice', () => {
  it('keeps the frontier equal to the reference frontier over random growth', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 80 }), (picks) => {
        grow(picks, (lattice) => {
          const occupied = [...lattice.blocks()].map((b) => b.coord);
          expect(lattice.frontier()).toEqual(frontier(occupied));
          expect(lattice.frontierSize).toBe(lattice.frontier().length);
        });
      }),
      { numRuns: 60 },
    );
  });

  it('ties depth to the neighbour graph: a neighbour one level shallower, never shallower than the ring', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 60 }), (picks) => {
        const lattice = grow(picks);
        for (const block of lattice.blocks()) {
          if (coordEquals(block.coord, GENESIS_COORD)) continue;
          // A block's neighbours now include its parents; its depth cannot exceed 1 + their max,
          // and some neighbour (a parent) has exactly depth - 1.
          const around = neighbors(block.coord)
            .map((n) => lattice.get(n))
            .filter((b) => b !== undefined);
          expect(around.some((n) => n.depth === block.depth - 1)).toBe(true);
          expect(block.depth).toBeGreaterThanOrEqual(distance(block.coord, GENESIS_COORD));
        }
      }),
      { numRuns: 40 },
    );
  });

  it('returns the occupied neighbours as parents, in canonical order', () => {
    const lattice = grow([4, 0]); // (1,-1,0) then (-1,0,1)
    const parents = lattice.parentsOf({ q: 0, r: -1, s: 1 });
    expect(parents.map((p) => coordKey(p.coord))).toEqual(['0,0,0', '-1,0,1', '1,-1,0']);
    expect(depthFromParents(parents)).toBe(2);
    expect(toHex(parentsRoot(parents))).toBe(toHex(parentsRoot([...parents].reverse())));
  });

  it('refuses a second block at an occupied cell: the first valid block wins', () => {
    const lattice = new Lattice();
    const coord = { q: 1, r: 0, s: -1 };
    lattice.add({ coord, blockHash: blockHashFor(coord), depth: 1 });
    const error = thrown(() => lattice.add({ coord, blockHash: sha256(utf8('later')), depth: 1 }));
    expect(error.code).toBe('coordinate_occupied');
    expect(error.message).toBe('coordinate: q=1 r=0 s=-1 is already occupied; the first valid block wins');
    expect(toHex(lattice.get(coord)!.blockHash)).toBe(toHex(blockHashFor(coord)));
    expect(
      thrown(() => lattice.add({ coord: GENESIS_COORD, blockHash: blockHashFor(coord), depth: 1 })).code,
    ).toBe('coordinate_occupied');
  });

  it('refuses a cell that is not on the frontier, a bad hash or a bad depth', () => {
    const lattice = new Lattice();
    expect(
      thrown(() => lattice.add({ coord: { q: 2, r: -2, s: 0 }, blockHash: new Uint8Array(32), depth: 1 }))
        .message,
    ).toBe('coordinate: expected a frontier cell (unoccupied, next to a block), got q=2 r=-2 s=0');
    expect(
      thrown(() => lattice.add({ coord: { q: 1, r: 1, s: 1 }, blockHash: new Uint8Array(32), depth: 1 }))
        .message,
    ).toBe('coordinate: expected q + r + s = 0, got q=1 r=1 s=1');
    expect(
      thrown(() => lattice.add({ coord: { q: 1, r: -1, s: 0 }, blockHash: new Uint8Array(31), depth: 1 }))
        .message,
    ).toBe('block hash: expected 32 bytes, got 31');
    expect(
      thrown(() => lattice.add({ coord: { q: 1, r: -1, s: 0 }, blockHash: new Uint8Array(32), depth: 0 }))
        .message,
    ).toBe('depth: expected an integer >= 1, got 0');
    expect(lattice.size).toBe(1);
  });

  it('caches the canonical frontier between blocks and refreshes it after one', () => {
    const lattice = new Lattice();
    const first = lattice.frontier();
    expect(lattice.frontier()).toBe(first);
    lattice.add({ coord: first[0]!, blockHash: blockHashFor(first[0]!), depth: 1 });
    expect(lattice.frontier()).not.toBe(first);
    expect(lattice.isFrontier(first[0]!)).toBe(false);
    expect(lattice.height).toBe(1);
  });
});

describe('chooseTargetCell', () => {
  it('can pick every frontier cell: selector u64le(i) picks frontier[i]', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 30 }), (picks) => {
        const cells = grow(picks).frontier();
        cells.forEach((cell, i) => {
          const selector = new Uint8Array(32);
          selector.set(u64le(i), 0);
          expect(chooseTargetCell(cells, selector)).toEqual(cell);
        });
      }),
      { numRuns: 20 },
    );
  });

  it('reduces the whole 64-bit little-endian prefix modulo the frontier size, exactly', () => {
    const cells = new Lattice().frontier();
    // 0xffffffffffffffff mod 6 = 3 (a float would round 2^64 - 1 to 2^64, and 2^64 mod 6 = 4).
    const selector = fromHex(`${'ff'.repeat(8)}${'00'.repeat(24)}`);
    expect(chooseTargetCell(cells, selector)).toEqual(cells[3]);
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.integer({ min: 1, max: 1000 }),
        (sel, n) => {
          const list = Array.from({ length: n }, (_, i) => ({ q: i, r: -i, s: 0 }));
          const prefix = new DataView(sel.buffer, sel.byteOffset).getBigUint64(0, true);
          expect(chooseTargetCell(list, sel)).toBe(list[Number(prefix % BigInt(n))]);
        },
      ),
    );
  });

  it('rejects an empty frontier or a selector that is not 32 bytes', () => {
    expect(thrown(() => chooseTargetCell([], new Uint8Array(32))).message).toBe(
      'frontier: expected at least one cell, got none',
    );
    expect(thrown(() => chooseTargetCell([GENESIS_COORD], new Uint8Array(8))).message).toBe(
      'selector: expected 32 bytes, got 8',
    );
  });

  it('spreads picks over the whole frontier (no unminable cells)', () => {
    const cells = grow([1, 7, 3, 22, 5, 9]).frontier();
    const hits = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const key = coordKey(chooseTargetCell(cells, sha256(u64le(i))));
      hits.set(key, (hits.get(key) ?? 0) + 1);
    }
    expect(hits.size).toBe(cells.length);
    for (const cell of cells) expect(distance(cell, GENESIS_COORD)).toBeGreaterThan(0);
  });
});
