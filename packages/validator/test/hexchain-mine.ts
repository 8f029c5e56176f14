import {
  buildSubmission,
  type Coord,
  coordKey,
  fromHex,
  type HexChallenge,
  type HexSubmissionInput,
  type HexSubmitResult,
  type KeyPair,
  solveBlock,
  targetFromHex,
} from '@tensormine/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Validator } from '../src/app.js';
import { post } from './helpers.js';

/** Test helpers of the hexchain tests: issue, mine (protocol solveBlock), submit. */

export const SLOT_HASH = '2630c8f2727c70cff0f2ec54b064e50797bd21a30f09d88052deb18a6c4fca41';

/** POST /api/hexchain/challenge and assert 200. */
export async function issue(
  v: Validator,
  body: { slot?: number; slot_hash?: string; miner_pubkey?: string } = {},
): Promise<HexChallenge> {
  const res = await post(v, '/api/hexchain/challenge', { slot: 5000, slot_hash: SLOT_HASH, ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as HexChallenge;
}

/** Mines a challenge with the reference solver and builds the (signed by default) submission. */
export function mine(
  challenge: HexChallenge,
  key: KeyPair,
  options: { sign?: boolean } = {},
): HexSubmissionInput {
  const challengeHash = fromHex(challenge.challenge_hash);
  const solved = solveBlock({
    challengeHash,
    coord: challenge.coord,
    minerPublicKey: key.publicKey,
    target: targetFromHex(challenge.target),
    maxIterations: 1_000_000,
  });
  if (solved === undefined) throw new Error(`no nonce found for ${challenge.id}`);
  return buildSubmission({
    challengeId: challenge.id,
    challengeHash,
    coord: challenge.coord,
    nonce: solved.nonce,
    keyPair: key,
    ...(options.sign === undefined ? {} : { sign: options.sign }),
  });
}

export function submit(v: Validator, submission: unknown): Promise<LightMyRequestResponse> {
  return post(v, '/api/hexchain/submit', submission);
}

/** Issues, mines and submits one block; asserts it was accepted. */
export async function mineBlock(
  v: Validator,
  key: KeyPair,
): Promise<{ challenge: HexChallenge; result: HexSubmitResult }> {
  const challenge = await issue(v);
  const res = await submit(v, mine(challenge, key));
  expect(res.statusCode, res.body).toBe(200);
  return { challenge, result: res.json() as HexSubmitResult };
}

/** Issues challenges until two target the same cell (the frontier is small, so this is quick). */
export async function twoForOneCell(v: Validator): Promise<[HexChallenge, HexChallenge]> {
  const seen = new Map<string, HexChallenge>();
  for (let i = 0; i < 50; i++) {
    const c = await issue(v);
    const first = seen.get(coordKey(c.coord));
    if (first) return [first, c];
    seen.set(coordKey(c.coord), c);
  }
  throw new Error('50 challenges without two for one cell');
}

/** Asserts an error response: status, code and the whole message. */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  message?: string,
): void {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as { code: string; message: string; statusCode: number };
  expect(body.code).toBe(code);
  expect(body.statusCode).toBe(status);
  if (message !== undefined) expect(body.message).toBe(message);
}

export function fmt(c: Coord): string {
  return `q=${c.q} r=${c.r} s=${c.s}`;
}
