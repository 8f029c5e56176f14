/**
 * @tensormine/protocol: the one definition of the proof-of-tensor mining protocol shared by
 * the validator, the client, the CPU miner and (through its vectors) the ESP32 firmware.
 * See docs/protocol.md.
 */

// Money and authentication
export * from './amount.js';
// Primitives
export * from './bytes.js';
export * from './ed25519.js';
export * from './error-codes.js';
export * from './errors.js';
export * from './hash.js';
export * from './replay-cache.js';
export * from './signed-request.js';
// v4.0 proof of tensor work
export * from './tensor/challenge.js';
export * from './tensor/devices.js';
export * from './tensor/difficulty.js';
export * from './tensor/fixed-point.js';
export * from './tensor/mml.js';
export * from './tensor/proof.js';
export * from './tensor/solve.js';
export * from './tensor/verify.js';
export * from './tensor/wire.js';
export * from './tensor/work.js';
export * from './tokens.js';
