import { slotHashDigest, toHex } from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import { register, testKey, testValidator } from './helpers.js';
import * as hex from './hexchain-mine.js';
import { issue, mine, submit } from './mining-fixtures.js';

/** Issue 9: the documentation defects fixed in the code (one expiry rule, UTF-8 slot hashes). */

const alice = testKey('alice');

describe('one expiry rule for v4.0 and v4.1', () => {
  it('accepts through the second expires_at and refuses from the next one, on both', async () => {
    let clock = Date.now();
    const v = await testValidator({ now: () => clock, maxTensorDim: 8, difficulty: 1 });
    await register(v, alice);

    const c = await issue(v);
    const h = await hex.issue(v);
    expect(h.expires_at).toBe(c.expires_at);
    // 999 ms into the second expires_at: still accepted, on both.
    clock = c.expires_at * 1000 + 999;
    const proof = mine(c, alice);
    expect((await submit(v, proof.proof, proof.signature)).statusCode).toBe(200);
    const block = hex.mine(h, alice);
    const accepted = await hex.submit(v, block);
    expect(accepted.statusCode, accepted.body).toBe(200);

    const c2 = await issue(v);
    const h2 = await hex.issue(v);
    clock = c2.expires_at * 1000 + 1000; // the next second: expired, on both
    const late = mine(c2, alice);
    expect((await submit(v, late.proof, late.signature)).json().code).toBe('challenge_expired');
    expect((await hex.submit(v, hex.mine(h2, alice))).json().code).toBe('challenge_expired');
  });
});

describe('slot_hash', () => {
  it('takes any UTF-8 string on both challenge endpoints, as protocol.md says', async () => {
    const v = await testValidator({ maxTensorDim: 8 });
    const slotHash = 'créneau-✓';
    const c = await issue(v, { slot_hash: slotHash });
    expect(c.slot_hash).toBe(slotHash);
    const h = await hex.issue(v, { slot_hash: slotHash });
    expect(h.slot_hash).toBe(slotHash);
    expect(toHex(slotHashDigest(slotHash))).toHaveLength(64);
    // Control characters stay refused.
    const bad = await v.inject({
      method: 'POST',
      url: '/challenge',
      payload: { slot: 1, slot_hash: 'a\nb' },
    });
    expect(bad.json().code).toBe('validation_failed');
  });
});
