import { expectedWorkMacs, fromHex, sha256, toHex } from '@tensormine/protocol';

/**
 * The economic and naming rules of the v4.0 mining service, in one place so that the docs
 * (docs/validator.md "v4.0 mining") and the code cannot disagree.
 */

/** The token mining rewards are paid in. */
export const REWARD_TOKEN = 'PTM';

/**
 * Reward per unit of expected work: 0.1 PTM = 100 000 000 minor units (PTM has 9 decimals)
 * per 2^20 (1,048,576) expected multiply-accumulates.
 */
export const REWARD_PER_MIMAC_MINOR = 100_000_000n;
const MIMAC = 1n << 20n;

/**
 * The reward of an accepted v4.0 proof, in PTM minor units, proportional to the expected work
 * of the challenge it answers (docs/validator.md, "Rewards"):
 *   reward = floor(REWARD_PER_MIMAC_MINOR * macsPerIteration * E(d) / 2^20)
 * with E(d) the expected number of nonce iterations at the challenge's level and tensor side
 * (expectedWorkMacs of the protocol package). Every device type, operation and level pays the
 * same per expected multiply-accumulate, up to the floor (less than one minor unit per proof,
 * never paid: the remainder is not minted). The level, side and operation are the ones stored
 * with the challenge, so a later settings change alters neither the work nor the reward of an
 * open challenge.
 */
export function rewardFor(challenge: {
  operation: string;
  dim: number;
  filters: number;
  difficulty: number;
}): bigint {
  const work = expectedWorkMacs(challenge);
  return (REWARD_PER_MIMAC_MINOR * work.numerator) / (work.denominator * MIMAC);
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
