import { fromHex, sha256, toHex } from '@tensormine/protocol';

/**
 * The economic and naming rules of the v4.0 mining service, in one place so that the docs
 * (docs/.sections/validator-mining.md) and the code cannot disagree.
 */

/** The token mining rewards are paid in. */
export const REWARD_TOKEN = 'PTM';

/** Reward per difficulty level: 0.1 PTM = 100 000 000 minor units (PTM has 9 decimals). */
export const REWARD_PER_LEVEL_MINOR = 100_000_000n;

/**
 * The reward of an accepted v4.0 proof, in PTM minor units: 0.1 PTM times the difficulty
 * level the challenge was issued with (level 1 pays 0.1 PTM, level 6 pays 0.6 PTM, level 24
 * pays 2.4 PTM). The level is the one stored with the challenge, so a later change of the
 * difficulty setting changes neither the work nor the reward of an open challenge.
 */
export function rewardFor(difficulty: number): bigint {
  return REWARD_PER_LEVEL_MINOR * BigInt(difficulty);
}

/** The ledger idempotency key of a proof's reward: one reward per (challenge, key), ever. */
export function rewardIdempotencyKey(challengeId: string, pubkey: string): string {
  return `proof:${challengeId}:${pubkey}`;
}

/** A challenge id: `c-` and the first 24 hex digits (96 bits) of the challenge hash. */
export function challengeIdFor(challengeHash: Uint8Array): string {
  return `c-${toHex(challengeHash).slice(0, 24)}`;
}

/** A device id: `dev-` and the first 16 hex digits of SHA-256 of the 32 public key bytes. */
export function deviceIdFor(pubkeyHex: string): string {
  return `dev-${toHex(sha256(fromHex(pubkeyHex, 32, 'pubkey'))).slice(0, 16)}`;
}
