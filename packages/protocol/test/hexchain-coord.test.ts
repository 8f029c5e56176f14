import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../src/errors.js';
import { LATTICE_RADIUS_MAX } from '../src/hexchain/constants.js';
import {
  type Coord,
  compareCoords,
  coordEquals,
  coordKey,
  distance,
  isValidCoord,
  parseCoord,
  ring,
} from '../src/hexchain/coord.js';
import { HEX_DIRECTIONS, neighbors } from '../src/hexchain/neighbors.js';

const coordArb = (radius: number): fc.Arbitrary<Coord> =>
  fc
    .tuple(fc.integer({ min: -radius, max: radius }), fc.integer({ min: -radius, max: radius }))
    .filter(([q, r]) => Math.abs(q + r) <= radius)
    .map(([q, r]) => ({ q, r, s: 0 - q - r }));

function parseError(value: unknown, what?: string): ProtocolError {
  try {
    parseCoord(value, what);
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected parseCoord to throw');
}

describe('parseCoord', () => {
  it('accepts integers with q + r + s = 0 inside the bound and returns only q, r, s', () => {
    expect(parseCoord({ q: 2, r: -5, s: 3, extra: 'x' })).toEqual({ q: 2, r: -5, s: 3 });
    expect(parseCoord({ q: LATTICE_RADIUS_MAX, r: 0, s: -LATTICE_RADIUS_MAX })).toEqual({
      q: 1_048_576,
      r: 0,
      s: -1_048_576,
    });
  });

  it('turns a negative zero into 0', () => {
    const c = parseCoord({ q: -0, r: 0, s: -0 });
    expect(Object.is(c.q, 0)).toBe(true);
    expect(Object.is(c.s, 0)).toBe(true);
  });

  it('rejects q + r + s != 0, saying what arrived', () => {
    const error = parseError({ q: 1, r: 1, s: 1 });
    expect(error.code).toBe('invalid_coordinate');
    expect(error.message).toBe('coordinate: expected q + r + s = 0, got q=1 r=1 s=1');
  });

  it('rejects cells beyond the lattice bound before adding them up', () => {
    expect(parseError({ q: 1_048_577, r: -1_048_577, s: 0 }).message).toBe(
      'coordinate: expected max(|q|, |r|, |s|) <= 1048576, got q=1048577 r=-1048577 s=0',
    );
    // 2^60 + 1 - 2^60 is 0 in floating point; the bound check catches it first.
    expect(parseError({ q: 2 ** 60, r: 1, s: -(2 ** 60) }).message).toBe(
      'coordinate: expected max(|q|, |r|, |s|) <= 1048576, got q=1152921504606847000 r=1 s=-1152921504606847000',
    );
  });

  it('rejects non-integers, missing axes and non-objects, naming the value', () => {
    expect(parseError({ q: 0.5, r: -0.5, s: 0 }, 'block.coord').message).toBe(
      'block.coord.q: expected an integer, got 0.5',
    );
    expect(parseError({ q: 1, r: -1 }).message).toBe('coordinate.s: expected an integer, got undefined');
    expect(parseError({ q: 1, r: '-1', s: 0 }).message).toBe('coordinate.r: expected an integer, got "-1"');
    expect(parseError([0, 0, 0]).message).toBe(
      'coordinate: expected an object with integers q, r, s, got an array of 3',
    );
    expect(parseError(null).message).toBe('coordinate: expected an object with integers q, r, s, got null');
  });

  it('agrees with isValidCoord', () => {
    fc.assert(
      fc.property(fc.record({ q: fc.integer(), r: fc.integer(), s: fc.integer() }), (value) => {
        const valid = isValidCoord(value);
        expect(valid).toBe(
          Math.max(Math.abs(value.q), Math.abs(value.r), Math.abs(value.s)) <= LATTICE_RADIUS_MAX &&
            value.q + value.r + value.s === 0,
        );
        if (valid) expect(parseCoord(value)).toEqual(value);
        else expect(() => parseCoord(value)).toThrow(ProtocolError);
      }),
    );
  });
});

describe('coordKey and coordEquals', () => {
  it('gives "q,r,s" and compares by value', () => {
    expect(coordKey({ q: -3, r: 5, s: -2 })).toBe('-3,5,-2');
    expect(coordEquals({ q: 1, r: -1, s: 0 }, { q: 1, r: -1, s: 0 })).toBe(true);
    expect(coordEquals({ q: 1, r: -1, s: 0 }, { q: 1, r: 0, s: -1 })).toBe(false);
  });
});

describe('neighbors', () => {
  it('lists the six directions in their fixed order', () => {
    expect(neighbors({ q: 0, r: 0, s: 0 })).toEqual([
      { q: 1, r: -1, s: 0 },
      { q: 1, r: 0, s: -1 },
      { q: 0, r: 1, s: -1 },
      { q: -1, r: 1, s: 0 },
      { q: -1, r: 0, s: 1 },
      { q: 0, r: -1, s: 1 },
    ]);
    expect(HEX_DIRECTIONS).toEqual(neighbors({ q: 0, r: 0, s: 0 }));
  });

  it('gives every cell six distinct valid neighbours, all at distance 1', () => {
    fc.assert(
      fc.property(coordArb(LATTICE_RADIUS_MAX - 1), (c) => {
        const ns = neighbors(c);
        expect(new Set(ns.map(coordKey)).size).toBe(6);
        for (const n of ns) {
          expect(isValidCoord(n)).toBe(true);
          expect(distance(c, n)).toBe(1);
        }
      }),
    );
  });

  it('is symmetric: b is a neighbour of a exactly when a is a neighbour of b', () => {
    const isNeighbor = (a: Coord, b: Coord) => neighbors(a).some((n) => coordEquals(n, b));
    fc.assert(
      fc.property(coordArb(4), coordArb(4), (a, b) => {
        expect(isNeighbor(a, b)).toBe(isNeighbor(b, a));
        expect(isNeighbor(a, b)).toBe(distance(a, b) === 1);
      }),
    );
    fc.assert(
      fc.property(coordArb(1000), fc.integer({ min: 0, max: 5 }), (a, i) => {
        expect(isNeighbor(neighbors(a)[i]!, a)).toBe(true);
      }),
    );
  });

  it('lists exactly the cells at distance 1', () => {
    // Brute force over a window: every cell at distance 1 from c is among its neighbours.
    const c = { q: 2, r: -3, s: 1 };
    const atDistance1: string[] = [];
    for (let q = -3; q <= 7; q++) {
      for (let r = -8; r <= 2; r++) {
        const cell = { q, r, s: 0 - q - r };
        if (distance(c, cell) === 1) atDistance1.push(coordKey(cell));
      }
    }
    expect(atDistance1.sort()).toEqual(neighbors(c).map(coordKey).sort());
  });
});

describe('distance and ring', () => {
  it('is a metric: zero on the diagonal, symmetric, triangle inequality', () => {
    fc.assert(
      fc.property(coordArb(1000), coordArb(1000), coordArb(1000), (a, b, c) => {
        expect(distance(a, a)).toBe(0);
        expect(distance(a, b)).toBe(distance(b, a));
        expect(distance(a, c)).toBeLessThanOrEqual(distance(a, b) + distance(b, c));
      }),
    );
  });

  it('ring is the distance to the origin', () => {
    expect(ring({ q: -3, r: 5, s: -2 })).toBe(5);
    fc.assert(
      fc.property(coordArb(1000), (c) => {
        expect(ring(c)).toBe(distance(c, { q: 0, r: 0, s: 0 }));
      }),
    );
  });
});

describe('compareCoords', () => {
  it('orders by ring, then q, then r', () => {
    const cells: Coord[] = [
      { q: 0, r: -2, s: 2 },
      { q: 1, r: 0, s: -1 },
      { q: -1, r: 1, s: 0 },
      { q: 0, r: 0, s: 0 },
      { q: 1, r: -1, s: 0 },
      { q: -1, r: 0, s: 1 },
    ];
    expect(cells.sort(compareCoords).map(coordKey)).toEqual([
      '0,0,0',
      '-1,0,1',
      '-1,1,0',
      '1,-1,0',
      '1,0,-1',
      '0,-2,2',
    ]);
  });

  it('is a total order that only ties equal cells', () => {
    fc.assert(
      fc.property(coordArb(50), coordArb(50), (a, b) => {
        const ab = Math.sign(compareCoords(a, b));
        // Antisymmetric (a sum, not a negation: -0 is not 0 to toBe when a and b are equal).
        expect(ab + Math.sign(compareCoords(b, a))).toBe(0);
        expect(ab === 0).toBe(coordEquals(a, b));
      }),
    );
  });
});
