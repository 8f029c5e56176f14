import { u8, u16le, u32le, u64le, utf8 } from '../bytes.js';
import { expand, hmacSha256, taggedHash } from '../hash.js';
import { slotHashDigest } from '../slot.js';
import {
  ACTIVATION_CODES,
  type Activation,
  type DeviceType,
  deviceProfile,
  OPERATION_CODES,
  type Operation,
  tensorDimFor,
} from './devices.js';
import { difficultyParams } from './difficulty.js';
import type { TensorTask } from './work.js';

/**
 * v4.0 challenge derivation. The validator holds a secret 32-byte seed; for each challenge it
 * takes a fresh serial number, so many challenges for the same slot live at once, each with
 * its own thresholds (no global "current challenge").
 *
 *   entropy        = HMAC-SHA256(validator_seed, "PTM4/entropy" || u64le(slot) || SHA-256(slot_hash) || u64le(serial))
 *   selector       = taggedHash("PTM4/select", entropy)
 *   operation      = profile.operations[selector[0] mod len]
 *   activation     = profile.activations[selector[1] mod len]
 *   challenge_hash = taggedHash("PTM4/challenge", challengeParamBytes || entropy)
 *   input X        = int8(expand(taggedHash("PTM4/input", challenge_hash), N * N))
 *   path_target    = taggedHash("PTM4/path-target", challenge_hash)[0..8]
 */

/**
 * The v4.0 tensor consensus rule set, byte 0 of `params` (docs/protocol.md 3.2). Rule set 2
 * commits every accumulator (`PTM4r2/*` tags) and takes the bias from that commitment.
 */
export const TENSOR_PROTOCOL_VERSION = 2;

export interface ChallengeSeedInput {
  readonly validatorSeed: Uint8Array;
  readonly slot: number;
  /** The slot hash as the chain gives it (hex, base58...): only its UTF-8 bytes are hashed. */
  readonly slotHash: string;
  readonly serial: number;
  readonly deviceType: DeviceType;
  readonly difficulty: number;
  /** The validator's max_tensor_dim setting. */
  readonly maxTensorDim?: number;
}

/** The consensus view of a v4.0 challenge: everything verification needs. */
export interface TensorChallenge extends TensorTask {
  readonly slot: number;
  readonly slotHashDigest: Uint8Array;
  readonly deviceType: DeviceType;
  readonly difficulty: number;
  readonly mmlThresholdQ16: number;
  readonly pathDistanceMax: number;
  readonly entropy: Uint8Array;
}

export function challengeEntropy(
  validatorSeed: Uint8Array,
  slot: number,
  slotHash: string,
  serial: number,
): Uint8Array {
  return hmacSha256(
    validatorSeed,
    utf8('PTM4/entropy'),
    u64le(slot),
    slotHashDigest(slotHash),
    u64le(serial),
  );
}

/** Derives a challenge from the slot, the slot hash and the validator-held seed. */
export function deriveChallenge(input: ChallengeSeedInput): TensorChallenge {
  const entropy = challengeEntropy(input.validatorSeed, input.slot, input.slotHash, input.serial);
  return buildChallenge({
    slot: input.slot,
    slotHashDigest: slotHashDigest(input.slotHash),
    deviceType: input.deviceType,
    difficulty: input.difficulty,
    dim: tensorDimFor(input.deviceType, input.maxTensorDim),
    entropy,
  });
}

export interface ChallengeParams {
  readonly slot: number;
  readonly slotHashDigest: Uint8Array;
  readonly deviceType: DeviceType;
  readonly difficulty: number;
  readonly dim: number;
  readonly entropy: Uint8Array;
}

/** Rebuilds the full challenge from its parameters (what a validator stores). */
export function buildChallenge(p: ChallengeParams): TensorChallenge {
  const profile = deviceProfile(p.deviceType);
  const selector = taggedHash('PTM4/select', p.entropy);
  const operation = profile.operations[selector[0]! % profile.operations.length]!;
  const activation = profile.activations[selector[1]! % profile.activations.length]!;
  const filters = operation === 'conv' ? profile.convFilters : 0;
  const { mmlThresholdQ16, pathDistanceMax } = difficultyParams(p.difficulty);
  const challengeHash = taggedHash(
    'PTM4/challenge',
    challengeParamBytes({ ...p, operation, activation, filters, mmlThresholdQ16, pathDistanceMax }),
    p.entropy,
  );
  const input = new Int8Array(expand(taggedHash('PTM4/input', challengeHash), p.dim * p.dim).buffer);
  return {
    ...p,
    challengeHash,
    operation,
    activation,
    filters,
    input,
    mmlThresholdQ16,
    pathDistanceMax,
    pathTarget: taggedHash('PTM4/path-target', challengeHash).subarray(0, 8),
  };
}

/**
 * u8(version) || u64le(slot) || SHA-256(slot_hash) || u8(device code) || u8(operation code) ||
 * u8(activation code) || u16le(N) || u8(F) || u8(difficulty) || u32le(mml_threshold_q16) ||
 * u8(path_distance_max)  (53 bytes)
 */
/** Size of the challenge parameter record. */
export const CHALLENGE_PARAM_BYTES = 53;

export function challengeParamBytes(p: {
  slot: number;
  slotHashDigest: Uint8Array;
  deviceType: DeviceType;
  operation: Operation;
  activation: Activation;
  dim: number;
  filters: number;
  difficulty: number;
  mmlThresholdQ16: number;
  pathDistanceMax: number;
}): Uint8Array {
  const out = new Uint8Array(CHALLENGE_PARAM_BYTES);
  let at = 0;
  for (const part of [
    u8(TENSOR_PROTOCOL_VERSION),
    u64le(p.slot),
    p.slotHashDigest,
    u8(deviceProfile(p.deviceType).code),
    u8(OPERATION_CODES[p.operation]),
    u8(ACTIVATION_CODES[p.activation]),
    u16le(p.dim),
    u8(p.filters),
    u8(p.difficulty),
    u32le(p.mmlThresholdQ16),
    u8(p.pathDistanceMax),
  ]) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
