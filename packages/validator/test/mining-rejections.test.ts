import {
  computeWork,
  type KeyPair,
  numberToQ16,
  type ProofWire,
  proofBytesFromWire,
  signProof,
  taskFromWire,
  toHex,
} from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import { register, testKey, testValidator } from './helpers.js';
import {
  adminMetrics,
  expectError,
  findNonce,
  issue,
  mine,
  proofFor,
  rewardOf,
  submit,
} from './mining-fixtures.js';

/** Signs an altered proof again, so that only the alteration is wrong. */
function resign(proof: ProofWire, key: KeyPair): number[] {
  return signProof(proofBytesFromWire(proof, numberToQ16(proof.mml_score) ?? 0), key.secretKey);
}

async function setup(options: Parameters<typeof testValidator>[0] = {}) {
  const v = await testValidator({ maxTensorDim: 8, ...options });
  const alice = testKey('alice');
  const bob = testKey('bob');
  await register(v, alice);
  await register(v, bob);
  return { v, alice, bob, alicePub: toHex(alice.publicKey), bobPub: toHex(bob.publicKey) };
}

describe('POST /submit: rejections, in check order', () => {
  it('challenge_not_found for an id this validator never issued', async () => {
    const { v, alice } = await setup();
    const c = await issue(v);
    const { proof } = mine(c, alice);
    const unknown = { ...proof, challenge_id: 'c-000000000000000000000000' };
    expectError(
      await submit(v, unknown, resign(unknown, alice)),
      404,
      'challenge_not_found',
      'challenge_id "c-000000000000000000000000" was not issued by this validator; request a challenge with POST /challenge',
    );
  });

  it('challenge_expired once the clock is past expires_at, accepted at expires_at exactly', async () => {
    let clock = Math.floor(Date.now() / 1000) * 1000;
    const { v, alice } = await setup({ now: () => clock, challengeTtlS: 30 });
    const late = await issue(v);
    const onTime = await issue(v);
    const issuedAt = late.issued_at;
    expect(late.expires_at).toBe(issuedAt + 30);

    clock += 30_000; // now == expires_at: still valid
    const ok = mine(onTime, alice);
    expect((await submit(v, ok.proof, ok.signature)).statusCode).toBe(200);

    clock += 1_000; // now == expires_at + 1
    const { proof, signature } = mine(late, alice);
    const res = await submit(v, proof, signature);
    expectError(
      res,
      410,
      'challenge_expired',
      `challenge ${late.challenge_id} expired at ${issuedAt + 30} (issued at ${issuedAt}, lifetime 30 s) and it is now ${issuedAt + 31}; request a new challenge with POST /challenge`,
    );
    expect(res.json().details).toEqual({
      challenge_id: late.challenge_id,
      issued_at: issuedAt,
      expires_at: issuedAt + 30,
      now: issuedAt + 31,
    });
  });

  it('challenge_hash_mismatch for a wrong challenge_hash', async () => {
    const { v, alice } = await setup();
    const c = await issue(v);
    const { proof } = mine(c, alice);
    const wrong = { ...proof, challenge_hash: 'ab'.repeat(32) };
    expectError(
      await submit(v, wrong, resign(wrong, alice)),
      422,
      'challenge_hash_mismatch',
      `challenge_hash ${'ab'.repeat(32)} is not the hash of the issued challenge ${c.challenge_id} (its \`hash\`)`,
    );
  });

  it("challenge_hash_mismatch for a proof of challenge A sent with challenge B's id", async () => {
    const { v, alice } = await setup();
    const a = await issue(v);
    const b = await issue(v);
    const { proof } = mine(a, alice);
    const moved = { ...proof, challenge_id: b.challenge_id };
    expectError(
      await submit(v, moved, resign(moved, alice)),
      422,
      'challenge_hash_mismatch',
      `challenge_hash ${a.hash} is not the hash of the issued challenge ${b.challenge_id} (its \`hash\`)`,
    );
  });

  it('miner_not_registered for a valid proof by a key that never registered, saying how to register', async () => {
    const { v } = await setup();
    const carol = testKey('carol');
    const c = await issue(v);
    const { proof, signature } = mine(c, carol);
    expectError(
      await submit(v, proof, signature),
      403,
      'miner_not_registered',
      `miner_pubkey ${toHex(carol.publicKey)} is not registered: register it first with POST /devices/register ({"pubkey", "device_type"}, signed by that key with the x-tm-* headers)`,
    );
  });

  it('signature_required for an unsigned proof', async () => {
    const { v, alice } = await setup();
    const { proof } = mine(await issue(v), alice);
    expectError(
      await submit(v, proof),
      401,
      'signature_required',
      'the proof must be signed by miner_pubkey: send signature, the 64-byte ed25519 signature over the canonical proof bytes (proofMessage), as an array of 64 integers',
    );
  });

  it('signature_invalid for a signature by another key or over other bytes', async () => {
    const { v, alice, bob, alicePub } = await setup();
    const { proof, signature } = mine(await issue(v), alice);
    const message = `the signature does not verify against miner_pubkey ${alicePub} over the canonical proof bytes (proofMessage)`;
    expectError(await submit(v, proof, resign(proof, bob)), 401, 'signature_invalid', message);
    const flipped = [...signature];
    flipped[5] = (flipped[5]! + 1) % 256;
    expectError(await submit(v, proof, flipped), 401, 'signature_invalid', message);
  });

  it('with requireSignatures false accepts an unsigned proof but still rejects a bad signature', async () => {
    const { v, alice, bob, alicePub } = await setup({ requireSignatures: false });
    const first = mine(await issue(v), alice);
    expect((await submit(v, first.proof)).statusCode).toBe(200);
    const second = mine(await issue(v), alice);
    expectError(
      await submit(v, second.proof, resign(second.proof, bob)),
      401,
      'signature_invalid',
      `the signature does not verify against miner_pubkey ${alicePub} over the canonical proof bytes (proofMessage)`,
    );
    expect((await submit(v, second.proof, second.signature)).statusCode).toBe(200);
  });

  it('the same proof twice: the original acceptance again (a safe retry), nothing credited twice', async () => {
    const { v, alice, alicePub } = await setup();
    const c = await issue(v);
    const { proof, signature } = mine(c, alice);
    const first = await submit(v, proof, signature);
    expect(first.statusCode).toBe(200);
    const again = await submit(v, proof, signature);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    // Unsigned, the same proof is still not an acceptance (signature_required comes first).
    expect((await submit(v, proof)).json().code).toBe('signature_required');
    // Another nonce for the same challenge and key is a replay: one reward per (challenge, key).
    const other = findNonce(
      c,
      alice,
      (w) => w.pathDistance <= c.path_distance_max,
      proof.computation_nonce + 1,
    );
    expectError(await submit(v, other.proof, other.signature), 409, 'proof_replayed');
    const miner = (await v.inject(`/miners/${alicePub}`)).json();
    expect(miner).toMatchObject({ proofs_accepted: 1, balances: [{ token: 'PTM', amount: rewardOf(c) }] });
  });

  it('concurrent submissions of the same proof: one acceptance, credited once', async () => {
    const { v, alice, alicePub } = await setup();
    const { proof, signature } = mine(await issue(v), alice);
    const results = await Promise.all([
      submit(v, proof, signature),
      submit(v, proof, signature),
      submit(v, proof, signature),
    ]);
    // Concurrent retries of one proof: all answered with the one acceptance, credited once.
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(new Set(results.map((r) => r.body)).size).toBe(1);
    const ledger = (await v.inject(`/ledger/entries?pubkey=${alicePub}`)).json();
    expect(ledger.entries).toHaveLength(1);
  });

  it('recomputes the work: a fabricated self-consistent proof (mml 0, distance 0) is tensor_result_mismatch', async () => {
    const { v, alice } = await setup();
    const c = await issue(v);
    const { proof } = mine(c, alice);
    const fabricated: ProofWire = {
      ...proof,
      tensor_result_hash: '00'.repeat(32),
      mml_score: 0,
      path_signature: c.path_target,
      path_distance: 0,
      computation_hash: '11'.repeat(32),
    };
    const res = await submit(v, fabricated, resign(fabricated, alice));
    expectError(
      res,
      422,
      'tensor_result_mismatch',
      'tensor_result_hash is not the result of the tensor work for this nonce and key',
    );
    expect(res.json().details).toBeUndefined();
    expect(res.body).not.toContain(proof.tensor_result_hash);
  });

  it('rejects a valid proof re-attributed to another registered key', async () => {
    const { v, alice, bob, bobPub } = await setup();
    const { proof, signature } = mine(await issue(v), alice);
    const stolen = { ...proof, miner_pubkey: bobPub };
    // Signed by the thief: the work was done for alice's key, so it recomputes to something else.
    expectError(
      await submit(v, stolen, resign(stolen, bob)),
      422,
      'tensor_result_mismatch',
      'tensor_result_hash is not the result of the tensor work for this nonce and key',
    );
    // With alice's signature left on it: the signature does not cover bob's key.
    expectError(await submit(v, stolen, signature), 401, 'signature_invalid');
    // The original is still acceptable for alice.
    expect((await submit(v, proof, signature)).statusCode).toBe(200);
  });

  it('compares every reported field with the recomputed one', async () => {
    const { v, alice } = await setup();
    const c = await issue(v);
    const { proof } = mine(c, alice);
    const cases: [Partial<ProofWire>, string, string][] = [
      [
        { mml_score: proof.mml_score === 0 ? 1 / 65536 : 0 },
        'mml_score_mismatch',
        'mml_score is not the score of the neural path for this nonce and key',
      ],
      [
        { path_signature: proof.path_signature === '00'.repeat(8) ? '01'.repeat(8) : '00'.repeat(8) },
        'path_signature_mismatch',
        'path_signature is not the signature of the neural path for this nonce and key',
      ],
      [
        { path_distance: proof.path_distance === 0 ? 1 : proof.path_distance - 1 },
        'path_distance_mismatch',
        'path_distance is not the distance of path_signature to the path target',
      ],
      [
        { computation_hash: 'cd'.repeat(32) },
        'computation_hash_mismatch',
        "computation_hash is not the commitment to this proof's fields (docs/protocol.md 3.3)",
      ],
    ];
    for (const [change, code, message] of cases) {
      const altered = { ...proof, ...change };
      const res = await submit(v, altered, resign(altered, alice));
      expectError(res, 422, code, message);
      // Which check failed, never the recomputed value (that would do the work for the miner).
      expect(res.json().details).toBeUndefined();
      for (const field of ['path_signature', 'computation_hash'] as const) {
        if (altered[field] !== proof[field]) expect(res.body).not.toContain(String(proof[field]));
      }
    }
  });

  it('checks the thresholds: mml_above_threshold and path_distance_above_max', async () => {
    const hard = await setup({ difficulty: 24 });
    const c24 = await issue(hard.v);
    const heavy = findNonce(c24, hard.alice, (w) => w.mmlScoreQ16 > c24.mml_threshold_q16);
    const res = await submit(hard.v, heavy.proof, heavy.signature);
    expectError(res, 422, 'mml_above_threshold', 'mml_score is above the challenge mml_threshold');
    expect(res.json().details).toEqual({ mml_score: heavy.proof.mml_score, mml_threshold: 0.5 });

    const easy = await setup({ difficulty: 1 });
    const c1 = await issue(easy.v);
    const far = findNonce(c1, easy.alice, (w) => w.pathDistance > 31);
    const res2 = await submit(easy.v, far.proof, far.signature);
    expectError(
      res2,
      422,
      'path_distance_above_max',
      'path_distance is above the challenge path_distance_max',
    );
    expect(res2.json().details).toEqual({ path_distance: far.proof.path_distance, path_distance_max: 31 });
  });

  it('counts rejections by reason in the admin metrics', async () => {
    const { v, alice } = await setup();
    const c = await issue(v);
    const { proof, signature } = mine(c, alice);
    await submit(v, { ...proof, challenge_id: 'c-nope' }, signature);
    await submit(v, { ...proof, challenge_id: 'c-nope2' }, signature);
    await submit(v, proof);
    await submit(v, proof, signature);
    await submit(v, proof, signature); // a retry: the original acceptance, not a rejection
    const other = findNonce(
      c,
      alice,
      (w) => w.pathDistance <= c.path_distance_max,
      proof.computation_nonce + 1,
    );
    await submit(v, other.proof, other.signature);
    const metrics = await adminMetrics(v);
    expect(metrics).toMatchObject({
      challenges_issued: 1,
      proofs_valid: 1,
      proofs_rejected: 4,
      rejections_by_reason: { challenge_not_found: 2, signature_required: 1, proof_replayed: 1 },
    });
    const status = (await v.inject('/status')).json();
    expect(status.stats).toMatchObject({ total_proofs_valid: 1, total_proofs_rejected: 4 });
  });

  it("counts a rejection against a miner only when the miner's signature proves it sent it", async () => {
    const { v, alice, bob, alicePub } = await setup();
    const c = await issue(v);
    const { proof } = mine(c, alice);
    // Anyone can name alice's key: unsigned or signed by someone else, it is not held against her.
    await submit(v, proof);
    await submit(v, proof, resign(proof, bob));
    expect((await v.inject(`/miners/${alicePub}`)).json().proofs_rejected).toBe(0);
    // Signed by alice and wrong: hers.
    const wrong = { ...proof, computation_hash: 'cd'.repeat(32) };
    await submit(v, wrong, resign(wrong, alice));
    expect((await v.inject(`/miners/${alicePub}`)).json().proofs_rejected).toBe(1);
    expect((await adminMetrics(v)).proofs_rejected).toBe(3);
  });
});

describe('POST /submit: the budget of invalid proofs', () => {
  it('refuses a key that spent it, before any verification, with a doubling Retry-After; other keys are unaffected', async () => {
    let clock = Date.now();
    const { v, alice, bob } = await setup({ now: () => clock });
    const c = await issue(v);
    const { proof } = mine(c, alice);
    const garbage = (i: number) => {
      const altered = { ...proof, tensor_result_hash: i.toString(16).padStart(64, '0') };
      return submit(v, altered, resign(altered, alice));
    };
    for (let i = 0; i < 10; i++) expectError(await garbage(i), 422, 'tensor_result_mismatch');
    const refused = await garbage(10);
    expectError(refused, 429, 'invalid_submission_backoff');
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.json().details).toEqual({ retry_after_s: 60, strikes: 1 });
    // Even a valid proof of that key waits: the refusal comes before the verification.
    const honest = mine(c, alice);
    expectError(await submit(v, honest.proof, honest.signature), 429, 'invalid_submission_backoff');
    // Another key is not affected, nor can a forgery naming alice (unsigned by her) count.
    const bobs = mine(await issue(v), bob);
    expect((await submit(v, bobs.proof, bobs.signature)).statusCode).toBe(200);

    clock += 60_000; // the back-off ends, one invalid proof refilled
    expectError(await garbage(11), 422, 'tensor_result_mismatch');
    const again = await garbage(12);
    expectError(again, 429, 'invalid_submission_backoff');
    expect(again.headers['retry-after']).toBe('120'); // doubled
    clock += 120_000;
    const later = mine(await issue(v), alice);
    expect((await submit(v, later.proof, later.signature)).statusCode).toBe(200);
    const metrics = await adminMetrics(v);
    expect(JSON.stringify(metrics)).toContain('invalid_submission_backoff');
  });
});

describe('POST /submit: the budget of invalid proofs per address', () => {
  it('bounds what throwaway keys from one address can cost, each key within its own budget', async () => {
    const { v } = await setup({ invalidProofBudgetPerAddress: 12 });
    const keys = [testKey('throwaway-1'), testKey('throwaway-2')];
    for (const key of keys) await register(v, key);
    const c = await issue(v);
    const codes: string[] = [];
    for (let i = 0; i < 14; i++) {
      const key = keys[i % 2]!;
      const { proof } = mine(c, key);
      const altered = { ...proof, tensor_result_hash: i.toString(16).padStart(64, '0') };
      const res = await submit(v, altered, resign(altered, key));
      codes.push(res.json().code);
    }
    // Each key sent 7 (< 10, its own budget), but the address spent its 12.
    expect(codes.slice(0, 12).every((code) => code === 'tensor_result_mismatch')).toBe(true);
    expect(codes.slice(12)).toEqual(['invalid_submission_backoff', 'invalid_submission_backoff']);
  });
});

describe('POST /submit: no oracle', () => {
  it('never answers a value the miner could not compute itself, whatever is wrong', async () => {
    const { v, alice, bob } = await setup({ invalidProofBudget: 1000, invalidProofBudgetPerAddress: 1000 });
    const c = await issue(v);
    const task = taskFromWire(c);
    let sent = 0;
    for (let nonce = 0; nonce < 6; nonce++) {
      const honest = proofFor(c, alice, nonce);
      const w = computeWork(task, alice.publicKey, nonce);
      // What only the work gives: none of it may appear in an answer to a wrong proof.
      const secrets = [w.accumulatorHash, w.tensorResultHash, w.pathSignature, w.computationHash].map(toHex);
      const variants: Partial<ProofWire>[] = [
        { tensor_result_hash: 'ab'.repeat(32) },
        { mml_score: honest.proof.mml_score === 0 ? 0.5 : 0 },
        { path_signature: 'cd'.repeat(8) },
        { path_distance: (honest.proof.path_distance + 1) % 65 },
        { computation_hash: 'ef'.repeat(32) },
        {
          tensor_result_hash: '00'.repeat(32),
          path_signature: '00'.repeat(8),
          computation_hash: '00'.repeat(32),
        },
        { computation_nonce: nonce + 1000 },
      ];
      for (const change of variants) {
        const altered = { ...honest.proof, ...change };
        const res = await submit(v, altered, resign(altered, alice));
        sent++;
        expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
        const requestText = JSON.stringify(altered);
        for (const secret of secrets) {
          if (!requestText.includes(secret))
            expect(res.body, `${res.json().code} leaks a recomputed value`).not.toContain(secret);
        }
        expect(JSON.stringify(res.json().details ?? {})).not.toMatch(/expected/);
      }
      // Alice's honest fields under bob's key: still nothing of bob's own work comes back.
      const bobWork = computeWork(task, bob.publicKey, nonce);
      const stolen = { ...honest.proof, miner_pubkey: toHex(bob.publicKey) };
      const res = await submit(v, stolen, resign(stolen, bob));
      for (const secret of [bobWork.tensorResultHash, bobWork.pathSignature, bobWork.computationHash].map(
        toHex,
      )) {
        expect(res.body).not.toContain(secret);
      }
    }
    expect(sent).toBe(42);
  });
});
