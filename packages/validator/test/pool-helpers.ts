import {
  buildSubmission,
  encodeHeader,
  formatPublicKey,
  fromHex,
  type HexChallenge,
  type HexSubmissionInput,
  hashMeetsTarget,
  hexPowHash,
  type KeyPair,
  NONCE_OFFSET,
  type PoolMember,
  targetFromHex,
} from '@tensormine/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Validator } from '../src/app.js';
import { post, signedInject } from './helpers.js';
import { issue } from './hexchain-mine.js';

/** Test helpers of the pool tests: join, pooled challenges, grinding shares, submitting them. */

/** POST /admin/config with the admin token; expects 200. */
export async function adminConfig(v: Validator, payload: Record<string, unknown>): Promise<void> {
  const res = await v.inject({
    method: 'POST',
    url: '/admin/config',
    headers: { authorization: `Bearer ${v.adminToken}` },
    payload,
  });
  expect(res.statusCode, res.body).toBe(200);
}

export function setStrategy(v: Validator, strategy: 'solo' | 'pplns' | 'proportional'): Promise<void> {
  return adminConfig(v, { pool_strategy: strategy });
}

/**
 * Stores `count` shares of `pubkey` straight into the pool's table (fake pow hashes 1, 2, ...
 * from `from`), each of share difficulty 16 under block difficulty 4096 (1/256 of a block).
 */
export function insertShares(
  v: Validator,
  input: { pubkey: string; challengeId: string; count: number; atMs: number; from?: number },
): Promise<void> {
  return v.context.storage.transaction(async (tx) => {
    const from = input.from ?? 1;
    for (let i = from; i < from + input.count; i++) {
      await tx.pool.insertShare({
        pubkey: input.pubkey,
        challengeId: input.challengeId,
        powHash: i.toString(16).padStart(64, '0'),
        difficulty: 16n,
        blockDifficulty: 4096n,
        stale: false,
        createdAtMs: input.atMs,
      });
    }
  });
}

/**
 * Joins the pool. `hashrate` is the declared hash rate (H/s); by default 1, so that the first
 * share difficulty is the smallest (16) and tests find shares in a few dozen hashes; null
 * declares none (the device type's nominal rate applies).
 */
export function join(
  v: Validator,
  key: KeyPair,
  stake = '0',
  hashrate: number | null = 1,
): Promise<LightMyRequestResponse> {
  return signedInject(v, key, 'POST', '/pool/join', {
    pubkey: formatPublicKey(key.publicKey),
    stake_amount: stake,
    ...(hashrate === null ? {} : { hashrate }),
  });
}

export function leave(v: Validator, key: KeyPair): Promise<LightMyRequestResponse> {
  return signedInject(v, key, 'POST', '/pool/leave', { pubkey: formatPublicKey(key.publicKey) });
}

/** A challenge reserved to `key` (with share terms when it is a member). */
export function pooledChallenge(v: Validator, key: KeyPair): Promise<HexChallenge> {
  return issue(v, { miner_pubkey: formatPublicKey(key.publicKey) });
}

export interface Hash {
  readonly nonce: number;
  readonly share: boolean;
  readonly block: boolean;
}

/** Hashes nonces [from, from + count) of a challenge; reports which are shares and blocks. */
export function grind(challenge: HexChallenge, key: KeyPair, from: number, count: number): Hash[] {
  const challengeHash = fromHex(challenge.challenge_hash);
  const shareTarget = targetFromHex(challenge.share_target ?? challenge.target);
  const blockTarget = targetFromHex(challenge.target);
  const out: Hash[] = [];
  if (count <= 0) return out;
  // One header, its nonce field rewritten per nonce (u64 LE, as encodeHeader writes it): the
  // simulations grind hundreds of thousands of nonces.
  const header = encodeHeader({
    coord: challenge.coord,
    challengeHash,
    minerPublicKey: key.publicKey,
    nonce: from,
  });
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  for (let nonce = from; nonce < from + count; nonce++) {
    // u64 LE, as u64le writes it (a nonce is a safe integer: below 2^53).
    view.setUint32(NONCE_OFFSET, nonce >>> 0, true);
    view.setUint32(NONCE_OFFSET + 4, Math.floor(nonce / 2 ** 32), true);
    const pow = hexPowHash(header);
    out.push({ nonce, share: hashMeetsTarget(pow, shareTarget), block: hashMeetsTarget(pow, blockTarget) });
  }
  return out;
}

/** The first nonce from `from` that gives a share (and, with `block`, whether it must be one). */
export function findShare(
  challenge: HexChallenge,
  key: KeyPair,
  want: { block?: boolean; share?: boolean } = {},
  from = 0,
): number {
  for (let start = from; start < from + 10_000_000; start += 1000) {
    for (const h of grind(challenge, key, start, 1000)) {
      const shareOk = want.share === undefined ? h.share : h.share === want.share;
      const blockOk = want.block === undefined ? true : h.block === want.block;
      if (shareOk && blockOk) return h.nonce;
    }
  }
  throw new Error('no such nonce');
}

export function shareSubmission(challenge: HexChallenge, key: KeyPair, nonce: number): HexSubmissionInput {
  return buildSubmission({
    challengeId: challenge.id,
    challengeHash: fromHex(challenge.challenge_hash),
    coord: challenge.coord,
    nonce,
    keyPair: key,
  });
}

export function submitShare(v: Validator, submission: unknown): Promise<LightMyRequestResponse> {
  return post(v, '/api/hexchain/pool/share', submission);
}

export async function member(v: Validator, key: KeyPair): Promise<PoolMember> {
  const res = await v.inject(`/pool/members/${formatPublicKey(key.publicKey)}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as PoolMember;
}

/**
 * The conservation check: every account's balance is the sum of its entries, and the sum of
 * all balances (members and module accounts) is what was minted (mining_reward entries).
 */
export async function conservation(v: Validator): Promise<{ minted: bigint; total: bigint }> {
  return v.context.storage.read(async (tx) => {
    const entries = await tx.ledger.list({ limit: 10_000_000 });
    const sums = new Map<string, bigint>();
    let minted = 0n;
    for (const e of entries) {
      if (e.token !== 'PTM') continue;
      sums.set(e.pubkey, (sums.get(e.pubkey) ?? 0n) + e.amount);
      if (e.type === 'mining_reward') minted += e.amount;
    }
    let total = 0n;
    for (const [account, sum] of sums) {
      const balance = await tx.ledger.balance(account, 'PTM');
      expect(balance, account).toBe(sum);
      expect(balance >= 0n, account).toBe(true);
      total += balance;
    }
    return { minted, total };
  });
}
