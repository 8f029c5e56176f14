import { type Coord, Lattice, taggedHash, utf8 } from '@tensormine/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompactLattice } from '../src/services/hexchain/compact-lattice.js';

/**
 * The compact lattice of the node (frontier and boundary blocks only) answers what issuing a
 * challenge asks, exactly as the protocol's full Lattice does: the frontier in canonical order
 * and the parents of every frontier cell, on lattices grown at random, and after a snapshot.
 */

function grow(picks: readonly number[]): { full: Lattice; compact: CompactLattice; checks: (() => void)[] } {
  const full = new Lattice();
  const compact = new CompactLattice();
  const checks: (() => void)[] = [];
  picks.forEach((pick, i) => {
    const frontier = full.frontier();
    // The canonical order kept from block to block (not sorted again) is the full lattice's.
    if (i % 7 === 0 || picks.length < 400) expect(compact.frontier()).toEqual(frontier);
    const coord = frontier[pick % frontier.length] as Coord;
    const parents = full.parentsOf(coord);
    const block = {
      coord,
      blockHash: taggedHash('compact-lattice-test', utf8(`${i}`)),
      depth: 1 + Math.max(...parents.map((p) => p.depth)),
    };
    full.add(block);
    compact.add(block);
  });
  checks.push(() => same(full, compact));
  return { full, compact, checks };
}

function same(full: Lattice, compact: CompactLattice): void {
  expect(compact.size).toBe(full.size);
  expect(compact.frontier()).toEqual(full.frontier());
  expect(compact.frontierSize).toBe(full.frontierSize);
  for (const cell of full.frontier()) {
    expect(compact.parentsOf(cell)).toEqual(full.parentsOf(cell));
    expect(compact.occupancy(cell)).toBe('free');
  }
  // Every block it keeps is occupied in the full lattice, with the same hash and depth.
  for (const block of full.blocks()) {
    const kept = compact.block(block.coord);
    if (kept !== undefined) expect(kept).toEqual(block);
    expect(compact.occupancy(block.coord)).not.toBe('free');
  }
}

describe('CompactLattice', () => {
  it('issues from the same frontier and parents as the full lattice, before and after a snapshot', {
    timeout: 60_000,
  }, () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 300 }), (picks) => {
        const { full, compact, checks } = grow(picks);
        for (const check of checks) check();
        const restored = CompactLattice.restore(JSON.parse(JSON.stringify(compact.snapshot())));
        same(full, restored);
        // It keeps growing like the full one.
        const next = full.frontier()[0] as Coord;
        const block = { coord: next, blockHash: taggedHash('next', utf8('x')), depth: 99 };
        full.add(block);
        restored.add(block);
        same(full, restored);
      }),
      { numRuns: 60 },
    );
  });

  it('keeps the perimeter, not the blocks', { timeout: 60_000 }, () => {
    const picks = Array.from({ length: 3_000 }, (_, i) => (i * 2_654_435_761) >>> 0);
    const { full, compact } = grow(picks);
    same(full, compact);
    // A random growth of 3,000 blocks: its boundary is some hundreds of cells on each side, and
    // grows like the perimeter (about 2,400 at 20,000 blocks; the bench measures a million).
    expect(compact.boundarySize).toBeLessThan(1_000);
    expect(compact.frontierSize).toBeLessThan(1_000);
    const interior = [...full.blocks()].find((b) => compact.block(b.coord) === undefined);
    expect(interior).toBeDefined();
    expect(compact.occupancy(interior!.coord)).toBe('unknown');
    expect(compact.occupancy({ q: 10_000, r: 0, s: -10_000 })).toBe('unknown');
    expect(() => compact.add({ coord: interior!.coord, blockHash: new Uint8Array(32), depth: 1 })).toThrow(
      /is not on the frontier/,
    );
  });
});
