/**
 * Generates src/kernels/wasm.generated.ts: the WebAssembly SIMD (128-bit) kernels as a base64
 * module, written from scratch by @tensormine/wasm-gen (wasm-emit.ts writes the bytes,
 * sha256-wasm.ts the symbolic SHA-256; no toolchain). The module exports `memory` and:
 *
 * - `scanHexchain(loStart, count, t0) -> i32`: the hexchain nonce search, LANES nonces per
 *   iteration (GROUPS interleaved groups of 4 lanes: 1 measured faster than 2 on V8, which
 *   spills with 2), with the same contract as the JavaScript `scanHexchain` of
 *   sha256.generated.ts (see HEXCHAIN_PARAMS for the layout). The compression is written once,
 *   symbolically: every value is a literal (folded here), a value fixed for the call (scalar
 *   i32 code before the loop: the rounds before the nonce word enters, the schedule words and
 *   the partial sums that do not depend on it), or a per-nonce vector (the loop body). The
 *   first digest word is compared with t0 in the loop.
 * - `expandWeights(blocks)`, `macMatmul(n, swap)` and `macConv(n, filters, swap)`: the v4.0
 *   accumulators, the same functions as the protocol package's verifier core (one generator:
 *   wasm-gen/src/mac-wasm.ts; the hexchain parameters sit below its buffers).
 * - `postStats(count)` and `postFired(count, below) -> bits`: what the search does with Z
 *   after the multiply-accumulates (the accumulator fold, sum, min, max; the fired bitmap and
 *   its MML description length), wasm-gen/src/post-wasm.ts.
 *
 *   npx tsx packages/miner/scripts/generate-wasm.ts          (writes the file)
 *   npx tsx packages/miner/scripts/generate-wasm.ts --check  (fails when it is out of date)
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BSWAP32_LANES,
  Builder,
  compressSymbolic,
  type FunctionDef,
  I32,
  lit,
  MAC_LAYOUT,
  MAC_PAGES,
  macFunctions,
  moduleBytes,
  op,
  POST_END,
  POST_LAYOUT,
  POST_PAGES,
  postFunctions,
  V128,
  type Val,
  writeGenerated,
} from '@tensormine/wasm-gen';

/** Interleaved groups of 4 lanes in the hexchain loop. */
const GROUPS = 1;
const LANES = 4 * GROUPS;

// ---------------------------------------------------------------------------------------------
// scanHexchain(loStart, count, t0): the first i in [0, count) whose nonce low word loStart + i
// gives a first digest word <= t0 (unsigned), or -1. count in [0, 2^31).

/** Byte offsets of the hexchain parameters in memory (13 words, as in the JavaScript kernel). */
export const HEXCHAIN_PARAMS = 0;

function hexchainFunction(): FunctionDef {
  const LO = 0;
  const COUNT = 1;
  const T0 = 2;
  const bld = new Builder(3, GROUPS);
  const load = (word: number) => bld.fixed([...op.i32Const(0), ...op.i32Load(HEXCHAIN_PARAMS + 4 * word)]);
  const mid = Array.from({ length: 8 }, (_, i) => load(i));
  const c = Array.from({ length: 4 }, (_, i) => load(8 + i));
  const w5 = load(12);
  // The nonce vector of the iteration: loStart + i + [0, 1, 2, 3] (+ 4g), and the offset i.
  const base = bld.local(V128);
  const i = bld.local(I32);
  bld.pre.push(
    ...op.localGet(LO),
    ...op.i32x4Splat,
    ...op.v128Const([0, 1, 2, 3]),
    ...op.i32x4Add,
    ...op.localSet(base),
    ...op.i32Const(0),
    ...op.localSet(i),
  );
  // Block word 4: the byte-swapped low nonce word.
  const w4 = bld.perNonce((g) => [
    ...op.localGet(base),
    ...(g === 0 ? [] : [...op.v128Const([4 * g, 4 * g, 4 * g, 4 * g]), ...op.i32x4Add]),
    ...op.localGet(base),
    ...op.i8x16Shuffle(BSWAP32_LANES),
    // Shuffle takes two operands; the second is unused by these lane indices.
  ]);
  const message: Val[] = [
    ...c,
    w4,
    w5,
    lit(0x80000000),
    ...Array.from({ length: 8 }, () => lit(0)),
    lit(88 * 8),
  ];
  const [a] = compressSymbolic(bld, mid, message);
  const digest0 = bld.sum(mid[0]!, a!);
  const t0 = bld.fixed(op.localGet(T0));
  const hit = bld.perNonce((g) => [...bld.get(digest0, g), ...bld.get(t0, g), ...op.i32x4LeU]);
  // Any lane at or below t0: the lowest such lane, if it is inside the range.
  const mask = bld.local(I32);
  const idx = bld.local(I32);
  const bitmask: number[] = [];
  for (let g = 0; g < GROUPS; g++) {
    bitmask.push(...bld.get(hit, g), ...op.i32x4Bitmask);
    if (g > 0) bitmask.push(...op.i32Const(4 * g), ...op.i32Shl, ...op.i32Or);
  }
  const anyHit: number[] = [];
  for (let g = 0; g < GROUPS; g++) {
    anyHit.push(...bld.get(hit, g));
    if (g > 0) anyHit.push(...op.v128Or);
  }
  const body = [
    ...op.loop(),
    ...bld.body,
    ...anyHit,
    ...op.v128AnyTrue,
    ...op.if(),
    ...bitmask,
    ...op.localSet(mask),
    ...op.localGet(i),
    ...op.localGet(mask),
    ...op.i32Ctz,
    ...op.i32Add,
    ...op.localTee(idx),
    ...op.i32Const(-1),
    ...op.localGet(idx),
    ...op.localGet(COUNT),
    ...op.i32LtU,
    ...op.select,
    ...op.return,
    ...op.end,
    ...op.localGet(base),
    ...op.v128Const([LANES, LANES, LANES, LANES]),
    ...op.i32x4Add,
    ...op.localSet(base),
    ...op.localGet(i),
    ...op.i32Const(LANES),
    ...op.i32Add,
    ...op.localTee(i),
    ...op.localGet(COUNT),
    ...op.i32LtU,
    ...op.brIf(0),
    ...op.end,
    ...op.i32Const(-1),
  ];
  return {
    name: 'scanHexchain',
    params: [I32, I32, I32],
    results: [I32],
    locals: bld.locals,
    body: [
      // count == 0: nothing to hash.
      ...op.localGet(COUNT),
      ...op.i32Eqz,
      ...op.if(),
      ...op.i32Const(-1),
      ...op.return,
      ...op.end,
      ...bld.pre,
      ...body,
    ],
  };
}

// ---------------------------------------------------------------------------------------------

const PAGES = Math.max(MAC_PAGES + 1, POST_PAGES);
if (POST_END > PAGES * 65536) throw new Error(`the buffers end at ${POST_END}, past ${PAGES} pages`);
const bytes = moduleBytes([hexchainFunction(), ...macFunctions(), ...postFunctions()], PAGES);
writeGenerated(
  join(dirname(fileURLToPath(import.meta.url)), '../src/kernels/wasm.generated.ts'),
  `// GENERATED by scripts/generate-wasm.ts (npm run generate -w @tensormine/miner). Do not edit.
// The WebAssembly SIMD kernels; wasm.ts instantiates them and wasm.test.ts checks them.
`,
  `/** Nonces per iteration of scanHexchain (interleaved groups of 4 lanes). */
export const HEXCHAIN_LANES = ${LANES};
/** Byte offset of the 13 hexchain parameter words in the module's memory. */
export const HEXCHAIN_PARAMS = ${HEXCHAIN_PARAMS};
/** Byte offsets of the multiply-accumulate buffers (@tensormine/wasm-gen mac-wasm.ts). */
export const MAC_LAYOUT = ${JSON.stringify(MAC_LAYOUT)} as const;
/** Byte offsets of the post-processing buffers (@tensormine/wasm-gen post-wasm.ts). */
export const POST_LAYOUT = ${JSON.stringify(POST_LAYOUT)} as const;
`,
  bytes,
);
