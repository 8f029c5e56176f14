import {
  type ChallengeWire,
  computeWork,
  formatAmount,
  type KeyPair,
  type ProofWire,
  proofBytesFromWire,
  proofFromWork,
  signProof,
  solveProof,
  taskFromWire,
  type WorkResult,
} from '@tensormine/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Validator } from '../src/app.js';
import { rewardFor } from '../src/services/mining.js';
import { post } from './helpers.js';

/** Shared by the mining, devices and ledger tests: issue, mine and submit real proofs. */

let slot = 1000;

/** POST /challenge (fresh slot unless given) and asserts a 200. */
export async function issue(v: Validator, body: Record<string, unknown> = {}): Promise<ChallengeWire> {
  const res = await post(v, '/challenge', { slot: slot++, slot_hash: 'slot-hash', ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as ChallengeWire;
}

export interface Mined {
  readonly proof: ProofWire;
  readonly signature: number[];
  readonly nonce: number;
}

/** The wire proof and signature of a computed nonce (honest fields, whatever the thresholds say). */
export function proofFor(challenge: ChallengeWire, key: KeyPair, nonce: number, work?: WorkResult): Mined {
  const task = taskFromWire(challenge);
  const w = work ?? computeWork(task, key.publicKey, nonce);
  const proof = proofFromWork(challenge.challenge_id, task.challengeHash, key.publicKey, nonce, w);
  return { proof, signature: signProof(proofBytesFromWire(proof, w.mmlScoreQ16), key.secretKey), nonce };
}

/** Mines a valid proof of `challenge` for `key` with the protocol's reference solver. */
export function mine(challenge: ChallengeWire, key: KeyPair): Mined {
  const solution = solveProof(taskFromWire(challenge), key.publicKey, { maxIterations: 100_000 });
  if (!solution) throw new Error(`no solution for ${challenge.challenge_id}`);
  return proofFor(challenge, key, solution.nonce, solution.work);
}

/** The first honest nonce from `start` whose work satisfies `predicate`. */
export function findNonce(
  challenge: ChallengeWire,
  key: KeyPair,
  predicate: (w: WorkResult) => boolean,
  start = 0,
): Mined {
  const task = taskFromWire(challenge);
  for (let nonce = start; nonce < start + 10_000; nonce++) {
    const work = computeWork(task, key.publicKey, nonce);
    if (predicate(work)) return proofFor(challenge, key, nonce, work);
  }
  throw new Error('no such nonce in 10 000');
}

/** POST /submit with the envelope (signature omitted when undefined). */
export function submit(
  v: Validator,
  proof: ProofWire,
  signature?: readonly number[],
): Promise<LightMyRequestResponse> {
  return post(v, '/submit', signature === undefined ? { proof } : { proof, signature });
}

/** Asserts an ErrorResponse with this status, code and message. */
export function expectError(
  res: LightMyRequestResponse,
  statusCode: number,
  code: string,
  message?: string,
): void {
  expect(res.statusCode, res.body).toBe(statusCode);
  const body = res.json();
  expect(body).toMatchObject({ statusCode, code });
  expect(typeof body.error).toBe('string');
  expect(typeof body.message).toBe('string');
  if (message !== undefined) expect(body.message).toBe(message);
}

/** GET /admin/metrics with the admin token. */
export async function adminMetrics(v: Validator): Promise<Record<string, unknown>> {
  const res = await v.inject({
    method: 'GET',
    url: '/admin/metrics',
    headers: { authorization: `Bearer ${v.adminToken}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The reward of a proof of `challenges` (minor units summed), as the wire decimal. */
export function rewardOf(...challenges: ChallengeWire[]): string {
  let total = 0n;
  for (const c of challenges) total += rewardFor({ ...taskFromWire(c), difficulty: c.difficulty });
  return formatAmount(total, 'PTM');
}
