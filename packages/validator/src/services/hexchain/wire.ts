import { HEADER_VERSION, type HexBlock, type HexChallenge } from '@tensormine/protocol';
import { ApiError } from '../../http/errors.js';
import type { BlockRecord, HexChallengeRecord } from '../../store/types.js';

/** Wire forms of the hexchain records, the lattice cursor and the coordinate of a lookup path. */

const CURSOR_PREFIX = 'lattice:';
const CURSOR_RE = /^lattice:(0|[1-9][0-9]{0,15})$/;

/** The cursor of the lattice page that starts after block `height` (opaque to clients). */
export function latticeCursor(height: number): string {
  return `${CURSOR_PREFIX}${height}`;
}

/**
 * The height a lattice cursor continues after.
 * @throws ApiError validation_failed for anything that is not a cursor this validator made.
 */
export function parseLatticeCursor(cursor: string): number {
  const match = CURSOR_RE.exec(cursor);
  const height = match?.[1] === undefined ? undefined : Number(match[1]);
  if (height === undefined || !Number.isSafeInteger(height)) {
    throw new ApiError(
      'validation_failed',
      `cursor: expected the next_cursor of a previous page of GET /api/hexchain/lattice, got ${JSON.stringify(cursor.length > 40 ? `${cursor.slice(0, 40)}...` : cursor)}`,
    );
  }
  return height;
}

/** A stored challenge as the HexChallenge schema has it. */
export function challengeToWire(c: HexChallengeRecord): HexChallenge {
  return {
    id: c.id,
    coord: { q: c.coord.q, r: c.coord.r, s: c.coord.s },
    slot: c.slot,
    version: '4.1',
    slot_hash: c.slotHash,
    challenge_hash: c.challengeHash,
    target: c.target,
    difficulty: Number(c.difficulty),
    parents: c.parents.map((p) => ({
      coord: { q: p.coord.q, r: p.coord.r, s: p.coord.s },
      block_hash: p.blockHash,
      depth: p.depth,
    })),
    depth: c.depth,
    header_version: HEADER_VERSION,
    issued_at: c.issuedAt,
    expires_at: c.expiresAt,
  };
}

/** A stored block as the HexBlock schema has it (timestamp in Unix seconds). */
export function blockToWire(b: BlockRecord): HexBlock {
  return {
    coord: { q: b.coord.q, r: b.coord.r, s: b.coord.s },
    block_hash: b.blockHash,
    pow_hash: b.powHash,
    depth: b.depth,
    parents: b.parents.map((p) => ({ q: p.q, r: p.r, s: p.s })),
    miner_pubkey: b.minerPubkey,
    nonce: b.nonce,
    challenge_id: b.challengeId,
    slot: b.slot,
    difficulty: Number(b.difficulty),
    timestamp: Math.floor(b.timestampMs / 1000),
  };
}
