import { toHex, utf8 } from '../../src/bytes.js';
import { taggedHash } from '../../src/hash.js';
import { challengeEntropy, deriveChallenge, TENSOR_PROTOCOL_VERSION } from '../../src/tensor/challenge.js';
import { ACTIVATIONS, DEVICE_PROFILES, type DeviceType } from '../../src/tensor/devices.js';
import { difficultyParams, MAX_DIFFICULTY } from '../../src/tensor/difficulty.js';
import { normalize, relu, sigmoid, tanh } from '../../src/tensor/fixed-point.js';
import { mmlScoreQ16 } from '../../src/tensor/mml.js';
import { proofBytesFromWire, proofFromWork, signProof } from '../../src/tensor/proof.js';
import { solveProof } from '../../src/tensor/solve.js';
import { computeWork, type WorkResult, workSeed } from '../../src/tensor/work.js';
import { testKey } from './_keys.js';

/** v4.0 proof-of-tensor-work vectors. */
export function generate() {
  const validatorSeed = taggedHash('PTM/test-vector-validator-seed', utf8('v4.0'));
  const miner = testKey('miner-a');
  const challenges = [];
  for (const deviceType of Object.keys(DEVICE_PROFILES) as DeviceType[]) {
    const profile = DEVICE_PROFILES[deviceType];
    for (const operation of profile.operations) {
      for (const activation of ACTIVATIONS) {
        // The first serial whose challenge has this operation and activation.
        for (let serial = 0; serial < 1000; serial++) {
          const difficulty = [1, 3, 6][serial % 3]!;
          const input = {
            slot: 1000 + serial,
            slotHash: `slot-hash-${serial}`,
            serial,
            deviceType,
            difficulty,
          };
          const c = deriveChallenge({ validatorSeed, ...input });
          if (c.operation !== operation || c.activation !== activation) continue;
          const nonces = [0, 1, 2 ** 32 + 7].map((nonce) => {
            const w = computeWork(c, miner.publicKey, nonce);
            return {
              nonce,
              work_seed: toHex(workSeed(c.challengeHash, miner.publicKey, nonce)),
              result_shape: w.shape,
              accumulator_hash: toHex(w.accumulatorHash),
              tensor_result_hash: toHex(w.tensorResultHash),
              mml_score_q16: w.mmlScoreQ16,
              path_signature: toHex(w.pathSignature),
              path_distance: w.pathDistance,
              computation_hash: toHex(w.computationHash),
            };
          });
          const solution = solveProof(c, miner.publicKey, { maxIterations: 100_000 })!;
          const challengeId = `vector-${deviceType}-${operation}-${activation}`;
          const proof = proofFromWork(
            challengeId,
            c.challengeHash,
            miner.publicKey,
            solution.nonce,
            solution.work,
          );
          const signature = signProof(proofBytesFromWire(proof, solution.work.mmlScoreQ16), miner.secretKey);
          challenges.push({
            input: { ...input, max_tensor_dim: 64 },
            entropy: toHex(challengeEntropy(validatorSeed, input.slot, input.slotHash, serial)),
            challenge_hash: toHex(c.challengeHash),
            operation,
            activation,
            dim: c.dim,
            filters: c.filters,
            mml_threshold_q16: c.mmlThresholdQ16,
            path_distance_max: c.pathDistanceMax,
            input_tensor_hex: toHex(new Uint8Array(c.input.buffer)),
            path_target: toHex(c.pathTarget),
            nonces,
            solution: { iterations: solution.iterations, proof, signature },
          });
          break;
        }
      }
    }
  }
  const reduced = deriveChallenge({
    validatorSeed,
    slot: 7,
    slotHash: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
    serial: 0,
    deviceType: 'native',
    difficulty: 2,
    maxTensorDim: 8,
  });
  const oddInput = {
    slot: 9,
    slotHash: 'odd-dimension',
    serial: 3,
    deviceType: 'esp32' as const,
    difficulty: 1,
  };
  const odd = deriveChallenge({ validatorSeed, ...oddInput, maxTensorDim: 5 });
  return {
    description:
      'v4.0 proof of tensor work. Keys and seeds are TEST-ONLY values derived from fixed strings (see docs/protocol.md).',
    rule_set: TENSOR_PROTOCOL_VERSION,
    validator_seed: toHex(validatorSeed),
    miner_secret_key: toHex(miner.secretKey),
    miner_public_key: toHex(miner.publicKey),
    difficulty_table: Array.from({ length: MAX_DIFFICULTY }, (_, i) => {
      const p = difficultyParams(i + 1);
      return {
        difficulty: p.difficulty,
        path_distance_max: p.pathDistanceMax,
        mml_threshold_q16: p.mmlThresholdQ16,
        path_passing: p.pathPassing.toString(),
        path_total: p.pathTotal.toString(),
        expected_path_iterations: p.expectedPathIterations,
      };
    }),
    activations: Array.from({ length: 256 }, (_, i) => i - 128).map((a) => ({
      a,
      relu: relu(a),
      sigmoid: sigmoid(a),
      tanh: tanh(a),
    })),
    normalize: [
      [0, 0, 0, 0],
      [1, 2, 3, 4],
      [-1_048_576, 1_048_576, 3, -7],
      [255, -256, 127, -128, 5],
    ].map((z) => ({ z, out: Array.from(normalize(Int32Array.from(z))) })),
    mml: [
      { bitmap_hex: '00', count: 8 },
      { bitmap_hex: 'ff00', count: 16 },
      { bitmap_hex: '5555', count: 16 },
      { bitmap_hex: '0100000000000080', count: 64 },
      { bitmap_hex: 'f0', count: 5 },
    ].map((v) => ({
      ...v,
      score_q16: mmlScoreQ16(Uint8Array.from(Buffer.from(v.bitmap_hex, 'hex')), v.count),
    })),
    challenges,
    reduced_dim: {
      input: {
        slot: 7,
        slotHash: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
        serial: 0,
        deviceType: 'native',
        difficulty: 2,
        max_tensor_dim: 8,
      },
      challenge_hash: toHex(reduced.challengeHash),
      dim: reduced.dim,
    },
    // N = 5: 25 outputs, so `fired` is 4 bytes whose 7 last bits are padding (zero).
    odd_dim: {
      input: { ...oddInput, max_tensor_dim: 5 },
      challenge_hash: toHex(odd.challengeHash),
      operation: odd.operation,
      activation: odd.activation,
      dim: odd.dim,
      filters: odd.filters,
      nonces: [0, 1].map((nonce) => workVector(nonce, computeWork(odd, miner.publicKey, nonce))),
    },
  };
}

function workVector(nonce: number, w: WorkResult) {
  return {
    nonce,
    result_shape: w.shape,
    accumulator_hash: toHex(w.accumulatorHash),
    tensor_result_hash: toHex(w.tensorResultHash),
    mml_score_q16: w.mmlScoreQ16,
    path_signature: toHex(w.pathSignature),
    path_distance: w.pathDistance,
    computation_hash: toHex(w.computationHash),
  };
}
