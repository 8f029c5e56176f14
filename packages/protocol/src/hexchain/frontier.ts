import { LATTICE_RADIUS_MAX } from './constants.js';
import { type Coord, compareCoords, coordKey, ring } from './coord.js';
import { neighbors } from './neighbors.js';

/**
 * The frontier of a lattice: the cells inside the lattice bound that are unoccupied and have at
 * least one occupied neighbour, in canonical order (`compareCoords`). `occupied` must include
 * the genesis cell (0, 0, 0). This is the reference definition; `Lattice` keeps the same set
 * incrementally.
 */
export function frontier(occupied: Iterable<Coord>): Coord[] {
  const cells = [...occupied];
  const taken = new Set(cells.map(coordKey));
  const found = new Map<string, Coord>();
  for (const cell of cells) {
    for (const n of neighbors(cell)) {
      const key = coordKey(n);
      if (!taken.has(key) && ring(n) <= LATTICE_RADIUS_MAX) found.set(key, n);
    }
  }
  return [...found.values()].sort(compareCoords);
}
