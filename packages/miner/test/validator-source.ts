import { EventEmitter } from 'node:events';
import {
  type ChallengeWire,
  formatPublicKey,
  type HexChallenge,
  type KeyPair,
  signRequest,
} from '@tensormine/protocol';
import { createValidator, type Validator } from '@tensormine/validator';
import { afterEachTest } from '../../../test-support/cleanup.ts';
import { type FoundResult, signFound } from '../src/found.js';
import { hexchainJob, type MiningJob, tensorJob } from '../src/job.js';
import type { SubmitOutcome, WorkSource, WorkSourceEvents } from '../src/work-source.js';
import { anyKeySigner } from './helpers.js';

const open: Validator[] = [];

afterEachTest(async () => {
  await Promise.all(open.splice(0).map((v) => v.close()));
});

/** A validator in memory with low difficulties (closed after each test). */
export async function testValidator(now?: () => number): Promise<Validator> {
  const v = await createValidator({
    dataDir: ':memory:',
    difficulty: 3,
    hexDifficulty: 256n,
    rateLimitPerSecond: 100_000,
    rateLimitBurst: 100_000,
    keyRateLimitPerSecond: 100_000,
    keyRateLimitBurst: 100_000,
    ...(now ? { now } : {}),
  });
  open.push(v);
  return v;
}

/** Registers `key` as a native device (signed request). */
export async function register(v: Validator, key: KeyPair): Promise<void> {
  const body = JSON.stringify({ pubkey: formatPublicKey(key.publicKey), device_type: 'native' });
  const headers = signRequest({ method: 'POST', path: '/devices/register', body, secretKey: key.secretKey });
  const res = await v.inject({
    method: 'POST',
    url: '/devices/register',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: body,
  });
  if (res.statusCode !== 200) throw new Error(`registration failed: ${res.statusCode} ${res.body}`);
}

/**
 * A WorkSource on a real validator in the same process (requests through `inject`, no
 * socket), with switches that simulate an outage: while `down`, every call fails as a
 * refused connection would.
 */
export class ValidatorSource extends EventEmitter<WorkSourceEvents> implements WorkSource {
  readonly url = 'inject://validator';
  down = false;
  /** Sign with this key instead (to provoke signature_invalid). */
  signer: KeyPair;
  readonly submitted: FoundResult[] = [];
  getWorkCalls = 0;

  constructor(
    readonly validator: Validator,
    readonly key: KeyPair,
    readonly kind: 'hexchain' | 'tensor' = 'hexchain',
  ) {
    super();
    this.signer = key;
  }

  async getWork(): Promise<MiningJob> {
    this.getWorkCalls++;
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:8545');
    const body = { slot: 5000, slot_hash: 'miner-test-slot' };
    if (this.kind === 'hexchain') {
      const res = await this.validator.inject({
        method: 'POST',
        url: '/api/hexchain/challenge',
        payload: body,
      });
      if (res.statusCode !== 200) throw new Error(`challenge: ${res.statusCode} ${res.body}`);
      return hexchainJob(res.json() as HexChallenge, this.key.publicKey);
    }
    const res = await this.validator.inject({
      method: 'POST',
      url: '/challenge',
      payload: { ...body, miner_pubkey: formatPublicKey(this.key.publicKey) },
    });
    if (res.statusCode !== 200) throw new Error(`challenge: ${res.statusCode} ${res.body}`);
    return tensorJob(res.json() as ChallengeWire, this.key.publicKey);
  }

  async submit(found: FoundResult): Promise<SubmitOutcome> {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:8545');
    this.submitted.push(found);
    const url = found.kind === 'hexchain' ? '/api/hexchain/submit' : '/submit';
    const res = await this.validator.inject({
      method: 'POST',
      url,
      payload: signFound(found, anyKeySigner(this.signer)) as unknown as Record<string, unknown>,
    });
    const json = res.json() as Record<string, unknown>;
    if (res.statusCode === 200) return { status: 'accepted', details: json };
    if (res.statusCode >= 500) return { status: 'unavailable', reason: `${res.statusCode} ${json.code}` };
    return { status: 'rejected', code: String(json.code), message: String(json.message) };
  }
}
