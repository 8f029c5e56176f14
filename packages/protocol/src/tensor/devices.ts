import { describe } from '../bytes.js';
import { ProtocolError } from '../errors.js';

/**
 * Device types and what each can run. A challenge is sized for the device type that asked
 * for it: the validator never sends a board a tensor it cannot compute (the first
 * implementation declared limits and never used them).
 */

export const OPERATIONS = ['matmul', 'conv'] as const;
export type Operation = (typeof OPERATIONS)[number];

export const ACTIVATIONS = ['relu', 'sigmoid', 'tanh'] as const;
export type Activation = (typeof ACTIVATIONS)[number];

export const DEVICE_TYPES = ['native', 'esp32', 'esp8266'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

/**
 * Other names clients send for a device type, accepted on input where their meaning is
 * unambiguous; answers always name the canonical type. `cpu`: the seed's miner client asks for
 * its challenges with it, and the interface calls a CPU process device type native.
 */
export const DEVICE_TYPE_ALIASES = { cpu: 'native' } as const satisfies Readonly<Record<string, DeviceType>>;
export type DeviceTypeAlias = keyof typeof DEVICE_TYPE_ALIASES;

/** Every device_type a request may carry: the canonical types, then the aliases. */
export const DEVICE_TYPE_INPUTS = [
  ...DEVICE_TYPES,
  ...(Object.keys(DEVICE_TYPE_ALIASES) as DeviceTypeAlias[]),
] as const;
export type DeviceTypeInput = DeviceType | DeviceTypeAlias;

/** The canonical device type of a request's device_type (an alias becomes the type it names). */
export function canonicalDeviceType(value: DeviceTypeInput): DeviceType {
  return Object.hasOwn(DEVICE_TYPE_ALIASES, value)
    ? DEVICE_TYPE_ALIASES[value as DeviceTypeAlias]
    : (value as DeviceType);
}

export interface DeviceProfile {
  readonly type: DeviceType;
  /** Numeric code used in the challenge hash. */
  readonly code: number;
  /** Largest tensor side N (inputs are N x N). */
  readonly maxDim: number;
  /** Operations the device runs, in the order the challenge selector indexes them. */
  readonly operations: readonly Operation[];
  readonly activations: readonly Activation[];
  /** Number of 3x3 filters of a conv challenge (output is filters x N x N). */
  readonly convFilters: number;
  /** Working memory one nonce iteration needs at maxDim, in bytes (see docs/protocol.md). */
  readonly workingBytes: number;
}

/** Smallest tensor side any challenge uses. */
export const MIN_TENSOR_DIM = 4;
/** Largest tensor side any device type may be configured for. */
export const MAX_TENSOR_DIM = 64;

function profile(
  type: DeviceType,
  code: number,
  maxDim: number,
  operations: readonly Operation[],
  convFilters: number,
): DeviceProfile {
  return {
    type,
    code,
    maxDim,
    operations,
    activations: ACTIVATIONS,
    convFilters,
    workingBytes: workingBytes(maxDim, operations.includes('conv') ? convFilters : 0),
  };
}

/**
 * Memory for one iteration: input N*N int8, weights (N*N or F*9 int8), accumulators
 * (N*N or F*N*N int32) and the int8 activations written in place of nothing else.
 */
function workingBytes(n: number, filters: number): number {
  const matmul = n * n + n * n + 4 * n * n + n * n;
  const conv = filters > 0 ? n * n + filters * 9 + 4 * filters * n * n + filters * n * n : 0;
  return Math.max(matmul, conv);
}

export const DEVICE_PROFILES: Readonly<Record<DeviceType, DeviceProfile>> = {
  /** A PC core: 64 x 64 matmul (262,144 multiply-accumulates) or 8 conv filters over 64 x 64. */
  native: profile('native', 0, 64, ['matmul', 'conv'], 8),
  /** ESP32 (520 KiB SRAM, 240 MHz): 32 x 32, 4 conv filters; about 21 KiB per iteration. */
  esp32: profile('esp32', 1, 32, ['matmul', 'conv'], 4),
  /** ESP8266 (about 50 KiB free heap, 80 MHz, no FPU): 16 x 16 matmul only. */
  esp8266: profile('esp8266', 2, 16, ['matmul'], 0),
};

export function isDeviceType(value: unknown): value is DeviceType {
  return typeof value === 'string' && (DEVICE_TYPES as readonly string[]).includes(value);
}

export function deviceProfile(type: unknown): DeviceProfile {
  if (!isDeviceType(type)) {
    throw new ProtocolError(
      'unsupported_device_type',
      `device_type: expected one of ${DEVICE_TYPES.join(', ')}, got ${describe(type)}`,
    );
  }
  return DEVICE_PROFILES[type];
}

/** The tensor side for a device under the validator's `max_tensor_dim` setting. */
export function tensorDimFor(type: DeviceType, maxTensorDim: number = MAX_TENSOR_DIM): number {
  if (!Number.isInteger(maxTensorDim) || maxTensorDim < MIN_TENSOR_DIM || maxTensorDim > MAX_TENSOR_DIM) {
    throw new ProtocolError(
      'validation_failed',
      `max_tensor_dim: expected an integer in [${MIN_TENSOR_DIM}, ${MAX_TENSOR_DIM}], got ${describe(maxTensorDim)}`,
    );
  }
  return Math.min(DEVICE_PROFILES[type].maxDim, maxTensorDim);
}

export const OPERATION_CODES: Readonly<Record<Operation, number>> = { matmul: 0, conv: 1 };
export const ACTIVATION_CODES: Readonly<Record<Activation, number>> = { relu: 0, sigmoid: 1, tanh: 2 };
