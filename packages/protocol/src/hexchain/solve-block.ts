import { u64le } from '../bytes.js';
import { sha256 } from '../hash.js';
import type { Coord } from './coord.js';
import { encodeHeader, MAX_NONCE, NONCE_OFFSET, parseNonce } from './header.js';
import { hashMeetsTarget } from './target.js';

export interface SolveBlockInput {
  readonly challengeHash: Uint8Array;
  readonly coord: Coord;
  readonly minerPublicKey: Uint8Array;
  readonly target: bigint;
  /** The first nonce tried (default 0). */
  readonly startNonce?: number;
  /** Give up after this many hashes (default: until the nonce space ends at 2^53 - 1). */
  readonly maxIterations?: number;
}

export interface SolvedBlock {
  readonly nonce: number;
  readonly powHash: Uint8Array;
  readonly header: Uint8Array;
  /** The number of hashes computed, the successful one included. */
  readonly iterations: number;
}

/**
 * The reference solver: tries nonces startNonce, startNonce + 1, ... and hashes the whole header
 * each time, returning the first nonce whose SHA-256 is <= the target, or undefined when
 * maxIterations or the nonce space runs out. Clear rather than fast: a real miner hashes the
 * first 64 header bytes once and reuses the midstate.
 */
export function solveBlock(input: SolveBlockInput): SolvedBlock | undefined {
  const start = parseNonce(input.startNonce ?? 0, 'startNonce');
  const maxIterations = input.maxIterations ?? Number.POSITIVE_INFINITY;
  const header = encodeHeader({
    coord: input.coord,
    challengeHash: input.challengeHash,
    minerPublicKey: input.minerPublicKey,
    nonce: start,
  });
  for (
    let nonce = start, iterations = 1;
    nonce <= MAX_NONCE && iterations <= maxIterations;
    nonce++, iterations++
  ) {
    header.set(u64le(nonce), NONCE_OFFSET);
    const powHash = sha256(header);
    if (hashMeetsTarget(powHash, input.target)) return { nonce, powHash, header, iterations };
  }
  return undefined;
}
