/**
 * @tensormine/wasm-gen: the WebAssembly kernels are written from scratch, with no toolchain, by
 * these generators; `packages/protocol/scripts/generate-wasm.ts` (the verifier's
 * multiply-accumulate core) and `packages/miner/scripts/generate-wasm.ts` (the miner's kernels)
 * run them and commit the modules they write (`npm run generate`, checked by
 * `npm run generate:check`). A build-time tool: nothing imports it at run time.
 *
 * - wasm-emit.ts: the binary writer (instructions, functions, the module) and `writeGenerated`;
 * - sha256-wasm.ts: SHA-256 compressions written symbolically, folded where inputs are fixed;
 * - mac-wasm.ts: the v4.0 multiply-accumulate functions and the weight expansion;
 * - post-wasm.ts: the passes over the accumulators (fold, statistics, fired bitmap, activations).
 */
export * from './mac-wasm.js';
export * from './post-wasm.js';
export * from './sha256-wasm.js';
export * from './wasm-emit.js';
