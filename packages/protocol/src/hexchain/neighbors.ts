import type { Coord } from './coord.js';

/**
 * The six directions of the lattice, in their fixed order. Each is the opposite of the one three
 * places further on, so the neighbour relation is symmetric.
 */
export const HEX_DIRECTIONS: readonly Coord[] = Object.freeze([
  { q: 1, r: -1, s: 0 },
  { q: 1, r: 0, s: -1 },
  { q: 0, r: 1, s: -1 },
  { q: -1, r: 1, s: 0 },
  { q: -1, r: 0, s: 1 },
  { q: 0, r: -1, s: 1 },
]);

/**
 * The six cells at distance 1 from `c`, in the order of HEX_DIRECTIONS. A cell on the lattice
 * bound also gets its neighbours outside the bound; callers that need cells inside the lattice
 * filter them (see `frontier`).
 */
export function neighbors(c: Coord): Coord[] {
  return HEX_DIRECTIONS.map((d) => ({ q: c.q + d.q, r: c.r + d.r, s: c.s + d.s }));
}
