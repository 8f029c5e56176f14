import { describe } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { LATTICE_RADIUS_MAX } from './constants.js';

/** A cell of the hexagonal lattice in cube coordinates: integers with q + r + s = 0. */
export interface Coord {
  readonly q: number;
  readonly r: number;
  readonly s: number;
}

const AXES = ['q', 'r', 's'] as const;

/**
 * Parses a lattice coordinate: an object with integer `q`, `r`, `s`, with q + r + s = 0 and
 * max(|q|, |r|, |s|) <= LATTICE_RADIUS_MAX. Returns a fresh object holding only q, r, s
 * (a negative zero becomes 0).
 * @param what names the value in the error message, e.g. `"block.coord"`.
 * @throws ProtocolError `invalid_coordinate` saying what was expected and what arrived, e.g.
 *   `coordinate: expected q + r + s = 0, got q=1 r=1 s=1`.
 */
export function parseCoord(value: unknown, what = 'coordinate'): Coord {
  const problem = coordProblem(value, what);
  if (problem !== undefined) throw new ProtocolError('invalid_coordinate', problem);
  const v = value as Coord;
  return { q: v.q + 0, r: v.r + 0, s: v.s + 0 };
}

/** True when `value` is a coordinate that `parseCoord` accepts. */
export function isValidCoord(value: unknown): value is Coord {
  return coordProblem(value, 'coordinate') === undefined;
}

function coordProblem(value: unknown, what: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `${what}: expected an object with integers q, r, s, got ${describe(value)}`;
  }
  const v = value as Record<string, unknown>;
  for (const axis of AXES) {
    const n = v[axis];
    if (typeof n !== 'number' || !Number.isInteger(n)) {
      return `${what}.${axis}: expected an integer, got ${describe(n)}`;
    }
  }
  const c = value as Coord;
  // The bound is checked before the sum, so that the sum of in-bound integers is exact.
  if (
    Math.abs(c.q) > LATTICE_RADIUS_MAX ||
    Math.abs(c.r) > LATTICE_RADIUS_MAX ||
    Math.abs(c.s) > LATTICE_RADIUS_MAX
  ) {
    return `${what}: expected max(|q|, |r|, |s|) <= ${LATTICE_RADIUS_MAX}, got ${formatCoord(c)}`;
  }
  if (c.q + c.r + c.s !== 0) return `${what}: expected q + r + s = 0, got ${formatCoord(c)}`;
  return undefined;
}

/** The coordinate as `"q=1 r=-1 s=0"`, for messages. */
export function formatCoord(c: Coord): string {
  return `q=${c.q} r=${c.r} s=${c.s}`;
}

/** A map key for a coordinate: `"q,r,s"`, e.g. `"1,-1,0"`. */
export function coordKey(c: Coord): string {
  return `${c.q},${c.r},${c.s}`;
}

export function coordEquals(a: Coord, b: Coord): boolean {
  return a.q === b.q && a.r === b.r && a.s === b.s;
}

/** The hex distance: max(|dq|, |dr|, |ds|), the number of steps between two cells. */
export function distance(a: Coord, b: Coord): number {
  return Math.max(Math.abs(a.q - b.q), Math.abs(a.r - b.r), Math.abs(a.s - b.s));
}

/** The ring of a cell: its distance to the origin (0, 0, 0). */
export function ring(c: Coord): number {
  return Math.max(Math.abs(c.q), Math.abs(c.r), Math.abs(c.s));
}

/**
 * The canonical order of cells: by ring ascending, then q ascending, then r ascending
 * (s is then determined). Use as an `Array.prototype.sort` comparator.
 */
export function compareCoords(a: Coord, b: Coord): number {
  return ring(a) - ring(b) || a.q - b.q || a.r - b.r;
}
