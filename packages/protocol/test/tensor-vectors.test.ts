import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../src/bytes.js';
import { challengeEntropy, deriveChallenge, TENSOR_PROTOCOL_VERSION } from '../src/tensor/challenge.js';
import type { DeviceType } from '../src/tensor/devices.js';
import { difficultyParams } from '../src/tensor/difficulty.js';
import { normalize, relu, sigmoid, tanh } from '../src/tensor/fixed-point.js';
import { mmlScoreQ16 } from '../src/tensor/mml.js';
import { type ProofWire, proofBytesFromWire, signProof } from '../src/tensor/proof.js';
import { verifyProof } from '../src/tensor/verify.js';
import { computeWork, workSeed } from '../src/tensor/work.js';
import vectors from '../vectors/tensor.vectors.json' with { type: 'json' };

const validatorSeed = fromHex(vectors.validator_seed, 32);
const minerPublic = fromHex(vectors.miner_public_key, 32);
const minerSecret = fromHex(vectors.miner_secret_key, 32);

describe('v4.0 vectors', () => {
  it('reproduces the difficulty table', () => {
    for (const row of vectors.difficulty_table) {
      const p = difficultyParams(row.difficulty);
      expect({
        difficulty: p.difficulty,
        path_distance_max: p.pathDistanceMax,
        mml_threshold_q16: p.mmlThresholdQ16,
        path_passing: p.pathPassing.toString(),
        path_total: p.pathTotal.toString(),
        expected_path_iterations: p.expectedPathIterations,
      }).toEqual(row);
    }
  });

  it('reproduces the integer activations for every int8 input', () => {
    for (const row of vectors.activations) {
      expect({ a: row.a, relu: relu(row.a), sigmoid: sigmoid(row.a), tanh: tanh(row.a) }).toEqual(row);
    }
  });

  it('reproduces normalize and the mml score', () => {
    for (const row of vectors.normalize)
      expect(Array.from(normalize(Int32Array.from(row.z)))).toEqual(row.out);
    for (const row of vectors.mml) {
      expect(mmlScoreQ16(fromHex(row.bitmap_hex), row.count)).toBe(row.score_q16);
    }
  });

  describe.each(vectors.challenges)('challenge $input.deviceType $operation $activation', (v) => {
    const challenge = deriveChallenge({
      validatorSeed,
      slot: v.input.slot,
      slotHash: v.input.slotHash,
      serial: v.input.serial,
      deviceType: v.input.deviceType as DeviceType,
      difficulty: v.input.difficulty,
      maxTensorDim: v.input.max_tensor_dim,
    });

    it('derives the same challenge', () => {
      expect(toHex(challengeEntropy(validatorSeed, v.input.slot, v.input.slotHash, v.input.serial))).toBe(
        v.entropy,
      );
      expect({
        challenge_hash: toHex(challenge.challengeHash),
        operation: challenge.operation,
        activation: challenge.activation,
        dim: challenge.dim,
        filters: challenge.filters,
        mml_threshold_q16: challenge.mmlThresholdQ16,
        path_distance_max: challenge.pathDistanceMax,
        input_tensor_hex: toHex(new Uint8Array(challenge.input.buffer)),
        path_target: toHex(challenge.pathTarget),
      }).toEqual({
        challenge_hash: v.challenge_hash,
        operation: v.operation,
        activation: v.activation,
        dim: v.dim,
        filters: v.filters,
        mml_threshold_q16: v.mml_threshold_q16,
        path_distance_max: v.path_distance_max,
        input_tensor_hex: v.input_tensor_hex,
        path_target: v.path_target,
      });
    });

    it('computes the same work for every listed nonce', () => {
      for (const n of v.nonces) {
        const w = computeWork(challenge, minerPublic, n.nonce);
        expect({
          nonce: n.nonce,
          work_seed: toHex(workSeed(challenge.challengeHash, minerPublic, n.nonce)),
          result_shape: w.shape,
          accumulator_hash: toHex(w.accumulatorHash),
          tensor_result_hash: toHex(w.tensorResultHash),
          mml_score_q16: w.mmlScoreQ16,
          path_signature: toHex(w.pathSignature),
          path_distance: w.pathDistance,
          computation_hash: toHex(w.computationHash),
        }).toEqual(n);
      }
    });

    it('accepts the solved proof and reproduces its signature', () => {
      const proof = v.solution.proof as ProofWire;
      expect(verifyProof(challenge, proof, { signature: v.solution.signature })).toEqual({ ok: true });
      expect(signProof(proofBytesFromWire(proof, proof.mml_score * 65536), minerSecret)).toEqual(
        v.solution.signature,
      );
    });
  });

  it('caps the tensor side at max_tensor_dim', () => {
    const c = deriveChallenge({
      validatorSeed,
      ...vectors.reduced_dim.input,
      deviceType: 'native',
      maxTensorDim: vectors.reduced_dim.input.max_tensor_dim,
    });
    expect({ challenge_hash: toHex(c.challengeHash), dim: c.dim }).toEqual({
      challenge_hash: vectors.reduced_dim.challenge_hash,
      dim: vectors.reduced_dim.dim,
    });
  });

  it('records the rule set and pads the fired bitmap of an odd side (N = 5)', () => {
    expect(vectors.rule_set).toBe(TENSOR_PROTOCOL_VERSION);
    const v = vectors.odd_dim;
    const c = deriveChallenge({
      validatorSeed,
      ...v.input,
      deviceType: 'esp32',
      maxTensorDim: v.input.max_tensor_dim,
    });
    expect([toHex(c.challengeHash), c.dim, c.operation, c.activation]).toEqual([
      v.challenge_hash,
      5,
      v.operation,
      v.activation,
    ]);
    for (const n of v.nonces) {
      const w = computeWork(c, minerPublic, n.nonce);
      expect({
        nonce: n.nonce,
        result_shape: w.shape,
        accumulator_hash: toHex(w.accumulatorHash),
        tensor_result_hash: toHex(w.tensorResultHash),
        mml_score_q16: w.mmlScoreQ16,
        path_signature: toHex(w.pathSignature),
        path_distance: w.pathDistance,
        computation_hash: toHex(w.computationHash),
      }).toEqual(n);
    }
  });
});
