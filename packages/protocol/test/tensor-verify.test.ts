import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex, utf8 } from '../src/bytes.js';
import { generateKeyPair, keyPairFromSecret } from '../src/ed25519.js';
import { taggedHash } from '../src/hash.js';
import { deriveChallenge, type TensorChallenge } from '../src/tensor/challenge.js';
import type { DeviceType } from '../src/tensor/devices.js';
import { difficultyParams } from '../src/tensor/difficulty.js';
import { type ProofWire, proofBytesFromWire, proofFromWork, signProof } from '../src/tensor/proof.js';
import { solveProof } from '../src/tensor/solve.js';
import { verifyProof } from '../src/tensor/verify.js';
import { computeWork } from '../src/tensor/work.js';

const validatorSeed = taggedHash('test/validator-seed', utf8('verify'));
const miner = keyPairFromSecret(taggedHash('test/key', utf8('miner')));
const thief = keyPairFromSecret(taggedHash('test/key', utf8('thief')));

function challenge(serial: number, deviceType: DeviceType = 'esp8266', difficulty = 4): TensorChallenge {
  return deriveChallenge({ validatorSeed, slot: 42, slotHash: 'slot-42', serial, deviceType, difficulty });
}

function solved(c: TensorChallenge, key = miner) {
  const s = solveProof(c, key.publicKey, { maxIterations: 100_000 })!;
  const proof = proofFromWork('c-1', c.challengeHash, key.publicKey, s.nonce, s.work);
  const signature = signProof(proofBytesFromWire(proof, s.work.mmlScoreQ16), key.secretKey);
  return { proof, signature, nonce: s.nonce };
}

function sign(proof: ProofWire, key = miner): number[] {
  return signProof(proofBytesFromWire(proof, proof.mml_score * 65536), key.secretKey);
}

describe('verifyProof', () => {
  it('accepts an honest proof for each device type', () => {
    for (const deviceType of ['native', 'esp32', 'esp8266'] as const) {
      const c = challenge(1, deviceType, 2);
      const { proof, signature } = solved(c);
      expect(verifyProof(c, proof, { signature })).toEqual({ ok: true });
    }
  });

  it('rejects a fabricated, self-consistent proof that did no work', () => {
    const c = challenge(2);
    const fake: ProofWire = {
      challenge_id: 'c-1',
      challenge_hash: toHex(c.challengeHash),
      tensor_result_hash: toHex(taggedHash('made', utf8('up'))),
      mml_score: 0,
      path_signature: toHex(c.pathTarget),
      path_distance: 0,
      computation_nonce: 1,
      computation_hash: toHex(taggedHash('made', utf8('up too'))),
      miner_pubkey: toHex(miner.publicKey),
    };
    const verdict = verifyProof(c, fake, { signature: sign(fake) });
    expect(verdict).toMatchObject({ ok: false, code: 'tensor_result_mismatch' });
  });

  it("rejects another miner's key on a valid proof, even when re-signed by that key", () => {
    const c = challenge(3);
    const { proof } = solved(c);
    const stolen = { ...proof, miner_pubkey: toHex(thief.publicKey) };
    const verdict = verifyProof(c, stolen, { signature: sign(stolen, thief) });
    expect(verdict.ok).toBe(false);
    expect(verdict).toMatchObject({ code: 'tensor_result_mismatch' });
  });

  it('rejects a proof verified against another challenge', () => {
    const { proof, signature } = solved(challenge(4));
    expect(verifyProof(challenge(5), proof, { signature })).toMatchObject({
      ok: false,
      code: 'challenge_hash_mismatch',
      message: 'challenge_hash is not the hash of the issued challenge',
    });
  });

  it('requires a signature by default and checks a present one when relaxed', () => {
    const c = challenge(6);
    const { proof, signature } = solved(c);
    expect(verifyProof(c, proof)).toEqual({
      ok: false,
      code: 'signature_required',
      message: 'the proof must be signed by miner_pubkey (envelope field signature)',
    });
    expect(verifyProof(c, proof, { requireSignature: false })).toEqual({ ok: true });
    const other = generateKeyPair();
    expect(verifyProof(c, proof, { requireSignature: false, signature: sign(proof, other) })).toMatchObject({
      ok: false,
      code: 'signature_invalid',
    });
    expect(verifyProof(c, proof, { signature: signature.slice(0, 63) })).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'signature: expected an array of 64 byte integers, got an array of 63',
    });
  });

  it('rejects an honest computation that misses the thresholds', () => {
    const c = challenge(7, 'esp8266', 8);
    let nonce = 0;
    while (computeWork(c, miner.publicKey, nonce).pathDistance <= c.pathDistanceMax) nonce++;
    const proof = proofFromWork(
      'c-1',
      c.challengeHash,
      miner.publicKey,
      nonce,
      computeWork(c, miner.publicKey, nonce),
    );
    const verdict = verifyProof(c, proof, { signature: sign(proof) });
    expect(verdict).toMatchObject({ ok: false, code: 'path_distance_above_max' });
  });

  it('rejects a result whose mml score is above the threshold at a level where the gate binds', () => {
    const c = challenge(8, 'esp8266', 20);
    let nonce = 0;
    while (computeWork(c, miner.publicKey, nonce).mmlScoreQ16 <= c.mmlThresholdQ16) nonce++;
    const proof = proofFromWork(
      'c-1',
      c.challengeHash,
      miner.publicKey,
      nonce,
      computeWork(c, miner.publicKey, nonce),
    );
    expect(verifyProof(c, proof, { signature: sign(proof) })).toMatchObject({
      ok: false,
      code: 'mml_above_threshold',
    });
  });

  it('rejects malformed fields with validation codes and messages', () => {
    const c = challenge(9);
    const { proof } = solved(c);
    expect(verifyProof(c, { ...proof, mml_score: 0.1 }, {})).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'mml_score: expected a multiple of 1/65536 in [0, 1], got 0.1',
    });
    expect(verifyProof(c, { ...proof, computation_nonce: -1 }, {})).toEqual({
      ok: false,
      code: 'invalid_nonce',
      message: 'computation_nonce: expected an integer in [0, 2^53), got -1',
    });
    expect(verifyProof(c, { ...proof, tensor_result_hash: 'ab' }, {})).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'tensor_result_hash: expected 32 bytes (64 hex digits), got 1 bytes',
    });
  });

  it('rejects any change to any field of a valid proof', () => {
    const c = challenge(10);
    const { proof } = solved(c);
    const hexFields = [
      'challenge_hash',
      'tensor_result_hash',
      'path_signature',
      'computation_hash',
      'miner_pubkey',
    ] as const;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.record({
            field: fc.constantFrom(...hexFields),
            at: fc.nat(),
            bit: fc.integer({ min: 0, max: 3 }),
          }),
          fc.record({
            field: fc.constant('computation_nonce' as const),
            delta: fc.integer({ min: 1, max: 1000 }),
          }),
          fc.record({
            field: fc.constant('path_distance' as const),
            delta: fc.integer({ min: -3, max: 3 }).filter((d) => d !== 0),
          }),
          fc.record({
            field: fc.constant('mml_score' as const),
            delta: fc.integer({ min: -500, max: 500 }).filter((d) => d !== 0),
          }),
        ),
        (change) => {
          const tampered: Record<string, unknown> = { ...proof };
          if ('bit' in change) {
            const hex = proof[change.field];
            const i = change.at % hex.length;
            const flipped = (Number.parseInt(hex[i]!, 16) ^ (1 << change.bit)).toString(16);
            tampered[change.field] = hex.slice(0, i) + flipped + hex.slice(i + 1);
          } else if (change.field === 'mml_score') {
            const q = Math.min(65536, Math.max(0, proof.mml_score * 65536 + change.delta));
            if (q === proof.mml_score * 65536) return;
            tampered.mml_score = q / 65536;
          } else if (change.field === 'path_distance') {
            const d = proof.path_distance + change.delta;
            if (d < 0 || d > 64) return;
            tampered.path_distance = d;
          } else {
            tampered.computation_nonce = proof.computation_nonce + change.delta;
          }
          const t = tampered as unknown as ProofWire;
          // Re-signed by the miner, so that only the recomputation can catch the change.
          expect(verifyProof(c, t, { signature: sign(t) }).ok).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('expected number of iterations', () => {
  // The iteration count of one search is geometric with success probability p = p_path(d)
  // (the MML gate does not bind at these levels), mean 1/p and standard deviation sqrt(1-p)/p.
  // Over n independent challenges the sample mean lies within 4 standard errors of 1/p
  // except with probability below 1e-4; the seeds are fixed, so the test is deterministic.
  it.each([4, 7])('matches 1/p_path at difficulty %i within 4 standard errors', (difficulty) => {
    const params = difficultyParams(difficulty);
    const p = Number(params.pathPassing) / Number(params.pathTotal);
    const n = 300;
    let total = 0;
    for (let serial = 0; serial < n; serial++) {
      const c = deriveChallenge({
        validatorSeed,
        slot: 9,
        slotHash: `mean-${difficulty}`,
        serial,
        deviceType: 'esp8266',
        difficulty,
      });
      total += solveProof(c, miner.publicKey)!.iterations;
    }
    const mean = total / n;
    const standardError = Math.sqrt(1 - p) / p / Math.sqrt(n);
    expect(Math.abs(mean - 1 / p)).toBeLessThan(4 * standardError);
  });
});
