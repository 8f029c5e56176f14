import { concatBytes, i32le, u8 } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { taggedHash } from '../hash.js';
import { HEXCHAIN_TAGS } from './constants.js';
import { type Coord, compareCoords, coordKey, formatCoord } from './coord.js';

/**
 * A block as the consensus refers to it: where it is, its hash and its depth. The parents of a
 * block are the occupied neighbours of its cell when its challenge was issued.
 */
export interface HexBlockRef {
  readonly coord: Coord;
  /** taggedHash("PTM41/block", header), 32 bytes; for genesis taggedHash("PTM41/genesis"). */
  readonly blockHash: Uint8Array;
  /** 0 for genesis, otherwise 1 + the largest depth among the block's parents. */
  readonly depth: number;
}

/**
 * The commitment to a block's parents:
 * `taggedHash("PTM41/parents", u8(count), then per parent in canonical coordinate order:
 * i32le(q) || i32le(r) || i32le(s) || block_hash)`. The input order does not matter.
 * @throws ProtocolError `invalid_parents` for 0 or more than 6 parents, a repeated cell or a
 *   block hash that is not 32 bytes.
 */
export function parentsRoot(parents: readonly HexBlockRef[]): Uint8Array {
  const sorted = checkedParents(parents);
  const parts: Uint8Array[] = [u8(sorted.length)];
  for (const p of sorted) {
    parts.push(i32le(p.coord.q), i32le(p.coord.r), i32le(p.coord.s), p.blockHash);
  }
  return taggedHash(HEXCHAIN_TAGS.parents, concatBytes(...parts));
}

/** The depth of a block with these parents: 1 + the largest parent depth. */
export function depthFromParents(parents: readonly HexBlockRef[]): number {
  checkedParents(parents);
  return 1 + Math.max(...parents.map((p) => p.depth));
}

function checkedParents(parents: readonly HexBlockRef[]): HexBlockRef[] {
  if (parents.length < 1 || parents.length > 6) {
    throw new ProtocolError('invalid_parents', `parents: expected 1 to 6, got ${parents.length}`);
  }
  const seen = new Set<string>();
  for (const p of parents) {
    const key = coordKey(p.coord);
    if (seen.has(key)) {
      throw new ProtocolError(
        'invalid_parents',
        `parents: expected distinct cells, got ${formatCoord(p.coord)} twice`,
      );
    }
    seen.add(key);
    if (p.blockHash.length !== 32) {
      throw new ProtocolError(
        'invalid_parents',
        `parent ${formatCoord(p.coord)} block hash: expected 32 bytes, got ${p.blockHash.length}`,
      );
    }
    if (!Number.isSafeInteger(p.depth) || p.depth < 0) {
      throw new ProtocolError(
        'invalid_parents',
        `parent ${formatCoord(p.coord)} depth: expected an integer >= 0, got ${p.depth}`,
      );
    }
  }
  return [...parents].sort((a, b) => compareCoords(a.coord, b.coord));
}
