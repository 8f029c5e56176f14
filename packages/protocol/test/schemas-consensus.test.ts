import { Compile } from 'typebox/compile';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { generateKeyPair } from '../src/ed25519.js';
import { buildSubmission } from '../src/hexchain/submission.js';
import {
  type Challenge,
  ChallengeSchema,
  type HexSubmitRequest,
  HexSubmitRequestSchema,
  type Proof,
  ProofSchema,
} from '../src/schemas/index.js';
import { deriveChallenge } from '../src/tensor/challenge.js';
import { DEVICE_TYPES } from '../src/tensor/devices.js';
import { type ProofWire, proofFromWork } from '../src/tensor/proof.js';
import { type ChallengeWire, challengeToWire } from '../src/tensor/wire.js';
import { computeWork } from '../src/tensor/work.js';

/** The consensus code's wire producers and the schemas must describe the same JSON. */
describe('schemas agree with the consensus wire forms', () => {
  const checkChallenge = Compile(ChallengeSchema);
  const checkProof = Compile(ProofSchema);
  const keyPair = generateKeyPair();

  it.each(
    DEVICE_TYPES.flatMap((deviceType) => [1, 12, 24].map((difficulty) => [deviceType, difficulty] as const)),
  )(
    'challengeToWire output for %s at difficulty %i matches ChallengeSchema, and so does its proof',
    (deviceType, difficulty) => {
      const challenge = deriveChallenge({
        validatorSeed: new Uint8Array(32).fill(7),
        slot: 1000,
        slotHash: 'slot-hash',
        serial: 1,
        deviceType,
        difficulty,
      });
      const wire = challengeToWire(challenge, {
        id: 'c_1',
        slotHash: 'slot-hash',
        issuedAt: 1_767_225_600,
        expiresAt: 1_767_225_660,
      });
      expect([...checkChallenge.Errors(wire)]).toEqual([]);
      const work = computeWork(challenge, keyPair.publicKey, 3);
      const proof = proofFromWork('c_1', challenge.challengeHash, keyPair.publicKey, 3, work);
      expect([...checkProof.Errors(proof)]).toEqual([]);
    },
  );

  it('buildSubmission output matches HexSubmitRequestSchema', () => {
    const submission = buildSubmission({
      challengeId: 'h_1',
      challengeHash: new Uint8Array(32).fill(1),
      coord: { q: 1, r: -1, s: 0 },
      nonce: 5,
      keyPair,
    });
    expect([...Compile(HexSubmitRequestSchema).Errors(submission)]).toEqual([]);
  });

  it('the consensus wire types are assignable to the schema types', () => {
    expectTypeOf<ChallengeWire>().toExtend<Challenge>();
    expectTypeOf<ProofWire>().toExtend<Proof>();
    expectTypeOf<ReturnType<typeof buildSubmission>>().toExtend<HexSubmitRequest>();
  });
});
