import { describe, equalBytes, fromHex, toHex } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { expand, taggedHash } from '../hash.js';
import type { TensorChallenge } from './challenge.js';
import {
  ACTIVATIONS,
  type Activation,
  type DeviceType,
  isDeviceType,
  OPERATIONS,
  type Operation,
} from './devices.js';
import { difficultyParams } from './difficulty.js';
import { numberToQ16, q16ToNumber } from './mml.js';
import type { TensorTask } from './work.js';

/** A v4.0 challenge as the validator serves it (POST /challenge). */
export interface ChallengeWire {
  readonly challenge_id: string;
  /** The same value as challenge_id (clients of the first implementation read `id`). */
  readonly id: string;
  readonly hash: string;
  readonly version: '4.0';
  readonly slot: number;
  readonly slot_hash: string;
  readonly device_type: DeviceType;
  readonly operation_type: Operation;
  readonly activation: Activation;
  readonly input_tensor: { readonly shape: number[]; readonly dtype: 'int8'; readonly data: number[] };
  readonly weight_shape: number[];
  readonly difficulty: number;
  readonly mml_threshold: number;
  readonly mml_threshold_q16: number;
  readonly path_distance_max: number;
  readonly path_target: string;
  /** The expected number of nonce iterations, rounded up (the versioning table's name). */
  readonly target_nonce: number;
  readonly expected_iterations: number;
  readonly issued_at: number;
  readonly expires_at: number;
}

export interface ChallengeMeta {
  readonly id: string;
  readonly slotHash: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
  /**
   * The expected iterations to advertise; by default the exact path-only expectation
   * (exact while the MML gate does not bind, a lower bound above).
   */
  readonly expectedIterations?: number;
}

export function challengeToWire(c: TensorChallenge, meta: ChallengeMeta): ChallengeWire {
  const expected = meta.expectedIterations ?? difficultyParams(c.difficulty).expectedPathIterations;
  return {
    challenge_id: meta.id,
    id: meta.id,
    hash: toHex(c.challengeHash),
    version: '4.0',
    slot: c.slot,
    slot_hash: meta.slotHash,
    device_type: c.deviceType,
    operation_type: c.operation,
    activation: c.activation,
    input_tensor: { shape: [c.dim, c.dim], dtype: 'int8', data: Array.from(c.input) },
    weight_shape: c.operation === 'conv' ? [c.filters, 3, 3] : [c.dim, c.dim],
    difficulty: c.difficulty,
    mml_threshold: q16ToNumber(c.mmlThresholdQ16),
    mml_threshold_q16: c.mmlThresholdQ16,
    path_distance_max: c.pathDistanceMax,
    path_target: toHex(c.pathTarget),
    target_nonce: expected,
    expected_iterations: expected,
    issued_at: meta.issuedAt,
    expires_at: meta.expiresAt,
  };
}

/** What a miner needs from a served challenge, with its thresholds. */
export interface MiningTask extends TensorTask {
  readonly challengeId: string;
  readonly mmlThresholdQ16: number;
  readonly pathDistanceMax: number;
}

/**
 * Reads a served challenge into a mining task, checking that it is self-consistent: the
 * input tensor and path target must be the ones derived from its hash and the thresholds
 * those of its difficulty. A validator that serves anything else is broken, and mining its
 * challenge would only produce rejected proofs.
 * @throws ProtocolError `invalid_challenge`
 */
export function taskFromWire(w: ChallengeWire): MiningTask {
  const fail = (message: string): never => {
    throw new ProtocolError('invalid_challenge', `challenge ${describe(w.challenge_id ?? w.id)}: ${message}`);
  };
  const challengeHash = fromHex(w.hash, 32, 'challenge hash');
  if (!OPERATIONS.includes(w.operation_type)) fail(`unknown operation_type ${describe(w.operation_type)}`);
  if (!ACTIVATIONS.includes(w.activation)) fail(`unknown activation ${describe(w.activation)}`);
  if (!isDeviceType(w.device_type)) fail(`unknown device_type ${describe(w.device_type)}`);
  const [rows, cols] = w.input_tensor.shape;
  const dim = rows ?? 0;
  if (w.input_tensor.shape.length !== 2 || rows !== cols || dim < 4 || dim > 64) {
    fail(
      `input_tensor.shape: expected [N, N] with N in [4, 64], got ${JSON.stringify(w.input_tensor.shape)}`,
    );
  }
  const input = new Int8Array(expand(taggedHash('PTM4/input', challengeHash), dim * dim).buffer);
  const served = w.input_tensor.data;
  if (served.length !== input.length || served.some((v, i) => v !== input[i])) {
    fail('input_tensor.data is not the tensor derived from the challenge hash');
  }
  const pathTarget = taggedHash('PTM4/path-target', challengeHash).subarray(0, 8);
  if (!equalBytes(pathTarget, fromHex(w.path_target, 8, 'path_target'))) {
    fail('path_target is not the target derived from the challenge hash');
  }
  const params = difficultyParams(w.difficulty);
  const q16 = numberToQ16(w.mml_threshold);
  if (q16 !== params.mmlThresholdQ16 || w.path_distance_max !== params.pathDistanceMax) {
    fail(`thresholds do not match difficulty ${w.difficulty}`);
  }
  const filters = w.operation_type === 'conv' ? (w.weight_shape[0] ?? 0) : 0;
  if (w.operation_type === 'conv' && (filters < 1 || filters > 8)) {
    fail(`weight_shape: expected [F, 3, 3] with F in [1, 8], got ${JSON.stringify(w.weight_shape)}`);
  }
  return {
    challengeId: w.challenge_id ?? w.id,
    challengeHash,
    operation: w.operation_type,
    activation: w.activation,
    dim,
    filters,
    input,
    pathTarget,
    mmlThresholdQ16: params.mmlThresholdQ16,
    pathDistanceMax: params.pathDistanceMax,
  };
}
