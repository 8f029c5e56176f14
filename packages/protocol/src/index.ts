/**
 * @tensormine/protocol: the one definition of the proof-of-tensor mining protocol shared by
 * the validator, the client, the CPU miner and (through its vectors) the ESP32 firmware.
 * See docs/protocol.md.
 */

// Money and authentication
export * from './amount.js';
// Primitives
export * from './bytes.js';
// Device callbacks: the message, who is called back when, the HTTP sender (injected I/O)
export * from './devices/addresses.js';
export * from './devices/callback.js';
export * from './devices/callbacks.js';
export * from './devices/http-sender.js';
// Economy rules (pure bigint functions)
export * from './economy/index.js';
export * from './ed25519.js';
export * from './error-codes.js';
export * from './errors.js';
// Server-sent events (hub and parser, no I/O)
export * from './events/sse.js';
export * from './hash.js';
// v4.1 hexchain
export * from './hexchain/cell.js';
export * from './hexchain/challenge-hash.js';
export * from './hexchain/constants.js';
export * from './hexchain/coord.js';
export * from './hexchain/frontier.js';
export * from './hexchain/genesis.js';
export * from './hexchain/header.js';
export * from './hexchain/lattice.js';
export * from './hexchain/neighbors.js';
export * from './hexchain/parents.js';
export * from './hexchain/retarget.js';
export * from './hexchain/solve-block.js';
export * from './hexchain/submission.js';
export * from './hexchain/target.js';
export * from './hexchain/verify-block.js';
// How a server keeps an answer it sends many times
export * from './kept-body.js';
// Mining pool: shares, vardiff, PPLNS
export * from './pool/pplns.js';
export * from './pool/share.js';
export * from './pool/vardiff.js';
export * from './replay-cache.js';
// Wire schemas (TypeBox) and the route table of every service
export * from './schemas/index.js';
export * from './signed-request.js';
export * from './slot.js';
// v4.0 proof of tensor work
export * from './tensor/challenge.js';
export * from './tensor/devices.js';
export * from './tensor/difficulty.js';
export * from './tensor/fixed-point.js';
export * from './tensor/mac.js';
export * from './tensor/mac-check.js';
export * from './tensor/mml.js';
export * from './tensor/proof.js';
export * from './tensor/receipt.js';
export * from './tensor/solve.js';
export * from './tensor/verify.js';
export * from './tensor/wire.js';
export * from './tensor/work.js';
export * from './time.js';
export * from './tokens.js';
