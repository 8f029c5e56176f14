import { toHex } from '../bytes.js';
import { taggedHash } from '../hash.js';
import { HEXCHAIN_TAGS } from './constants.js';
import type { Coord } from './coord.js';

/** The genesis block occupies the origin from the start. */
export const GENESIS_COORD: Coord = Object.freeze({ q: 0, r: 0, s: 0 });

/** The depth of the genesis block; every other block has depth >= 1. */
export const GENESIS_DEPTH = 0;

/** The genesis block hash, `taggedHash("PTM41/genesis")` (no data), as 64 hex digits. */
export const GENESIS_BLOCK_HASH: string = toHex(taggedHash(HEXCHAIN_TAGS.genesis));
