/**
 * The fast kernels against the reference implementation (@tensormine/protocol) and its
 * vectors: identical hashes, identical found nonces, identical work fields, on many random
 * headers, targets and tasks of every device type, operation and activation. Slow by design
 * (the reference is slow): its own file.
 */
import {
  ACTIVATIONS,
  computeWork,
  DEVICE_PROFILES,
  type DeviceType,
  difficultyParams,
  encodeHeader,
  expand,
  fromHex,
  hexPowHash,
  type MiningTask,
  OPERATIONS,
  solveBlock,
  solveProof,
  taggedHash,
  targetFromDifficulty,
  targetToBytes,
  toHex,
  type WorkResult,
} from '@tensormine/protocol';
import hexVectors from '@tensormine/protocol/vectors/hexchain.vectors.json' with { type: 'json' };
import tensorVectors from '@tensormine/protocol/vectors/tensor.vectors.json' with { type: 'json' };
import fc from 'fast-check';
import { beforeAll, describe, expect, test as vitestTest } from 'vitest';
import { SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { hexchainHash, prepareHexchain, searchBlock } from '../src/kernels/hexchain.js';
import { missingCpuFlags } from '../src/kernels/native/cpu.js';
import { selectKernel } from '../src/kernels/select.js';
import { TensorSearch } from '../src/kernels/tensor.js';

/**
 * Every kernel choice: `native` where this CPU can run it (x86-64 with SHA-NI and AVX2; CI's
 * can), built and checked by selectKernel first; elsewhere its cases show as skipped.
 */
const nativeCpu = process.arch === 'x64' && missingCpuFlags({})?.length === 0;
const KERNELS = ['js', 'wasm', 'native'] as const;
const runs = (kernel: (typeof KERNELS)[number]) => kernel !== 'native' || nativeCpu;
beforeAll(async () => {
  if (nativeCpu) expect((await selectKernel('native')).notice).toBeUndefined();
}, SLOW_TEST_TIMEOUT_MS);

const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 });
const coord = fc
  .tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: -1000, max: 1000 }))
  .map(([q, r]) => ({ q, r, s: -q - r }));
/** Nonces anywhere in [0, 2^53), with extra weight near the 2^32 boundaries the kernel splits at. */
const nonce = fc.oneof(
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc
    .integer({ min: 0, max: 2 ** 21 - 1 })
    .chain((hi) =>
      fc
        .integer({ min: -3, max: 3 })
        .map((d) => Math.min(Math.max(hi * 2 ** 32 + d, 0), Number.MAX_SAFE_INTEGER)),
    ),
);

function headerOf(h: { coord: { q: number; r: number; s: number }; ch: Uint8Array; key: Uint8Array }, n = 0) {
  return encodeHeader({ coord: h.coord, challengeHash: h.ch, minerPublicKey: h.key, nonce: n });
}

describe.each(KERNELS)('hexchain kernel (%s)', (kernel) => {
  const test = runs(kernel) ? vitestTest : vitestTest.skip;
  test('hashes every header as hexPowHash does', () => {
    fc.assert(
      fc.property(coord, bytes32, bytes32, nonce, (c, ch, key, n) => {
        const job = prepareHexchain(
          { header: headerOf({ coord: c, ch, key }), target: new Uint8Array(32) },
          kernel,
        );
        expect(job.kernel).toBe(kernel);
        expect(toHex(hexchainHash(job, n))).toBe(toHex(hexPowHash(headerOf({ coord: c, ch, key }, n))));
      }),
      { numRuns: 300 },
    );
  });

  test('finds the same first nonce as solveBlock, across 2^32 boundaries', () => {
    fc.assert(
      fc.property(
        coord,
        bytes32,
        bytes32,
        fc.integer({ min: 16, max: 3000 }),
        fc.oneof(
          fc.integer({ min: 0, max: 2 ** 53 - 100_000 }),
          fc.integer({ min: 1, max: 2 ** 20 }).map((k) => k * 2 ** 32 - 40),
        ),
        (c, ch, key, d, start) => {
          const target = targetFromDifficulty(BigInt(d));
          const count = 20_000;
          const ref = solveBlock({
            challengeHash: ch,
            coord: c,
            minerPublicKey: key,
            target,
            startNonce: start,
            maxIterations: count,
          });
          const got = searchBlock(
            prepareHexchain(
              { header: headerOf({ coord: c, ch, key }), target: targetToBytes(target) },
              kernel,
            ),
            start,
            count,
          );
          expect(got.found).toBe(ref?.nonce);
          expect(got.hashes).toBe(ref?.iterations ?? count);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('a hash equal to the target is valid; one above it is not (first words equal)', () => {
    const h = {
      coord: { q: 2, r: -1, s: -1 },
      ch: taggedHash('x-test', new Uint8Array(1)),
      key: new Uint8Array(32).fill(7),
    };
    const solved = solveBlock({
      challengeHash: h.ch,
      coord: h.coord,
      minerPublicKey: h.key,
      target: targetFromDifficulty(16n),
    })!;
    const hash = BigInt(`0x${toHex(solved.powHash)}`);
    const asBytes = (v: bigint) => fromHex(v.toString(16).padStart(64, '0'));
    const header = headerOf(h);
    const search = (target: Uint8Array) =>
      searchBlock(prepareHexchain({ header, target }, kernel), solved.nonce, 1);
    expect(search(asBytes(hash)).found).toBe(solved.nonce);
    expect(search(asBytes(hash - 1n)).found).toBeUndefined();
    expect(search(asBytes(hash + 1n)).found).toBe(solved.nonce);
  });

  test('matches the protocol vectors (headers and solved blocks)', () => {
    for (const v of hexVectors.headers) {
      const job = prepareHexchain({ header: fromHex(v.header), target: new Uint8Array(32) }, kernel);
      expect(toHex(hexchainHash(job, v.nonce))).toBe(v.pow_hash);
    }
    for (const v of hexVectors.solved) {
      const r = searchBlock(
        prepareHexchain({ header: fromHex(v.header), target: fromHex(v.target) }, kernel),
        v.start_nonce,
        1_000_000,
      );
      expect(r.found).toBe(v.nonce);
    }
  });
});

function task(options: {
  challengeHash: Uint8Array;
  operation: (typeof OPERATIONS)[number];
  activation: (typeof ACTIVATIONS)[number];
  dim: number;
  filters: number;
  input: Int8Array;
  pathTarget: Uint8Array;
  level: number;
}): MiningTask {
  const params = difficultyParams(options.level);
  return {
    challengeId: 'cross-check',
    challengeHash: options.challengeHash,
    operation: options.operation,
    activation: options.activation,
    dim: options.dim,
    filters: options.operation === 'conv' ? options.filters : 0,
    input: options.input,
    pathTarget: options.pathTarget,
    mmlThresholdQ16: params.mmlThresholdQ16,
    pathDistanceMax: params.pathDistanceMax,
  };
}

function expectSameWork(got: WorkResult, want: WorkResult): void {
  expect(got.shape).toEqual(want.shape);
  expect(toHex(new Uint8Array(got.result.buffer))).toBe(toHex(new Uint8Array(want.result.buffer)));
  expect(toHex(got.tensorResultHash)).toBe(toHex(want.tensorResultHash));
  expect(got.mmlScoreQ16).toBe(want.mmlScoreQ16);
  expect(toHex(got.pathSignature)).toBe(toHex(want.pathSignature));
  expect(got.pathDistance).toBe(want.pathDistance);
  expect(toHex(got.computationHash)).toBe(toHex(want.computationHash));
}

/** Every (device type, operation, activation) at the device's size, plus any size and filter count. */
const shapes = fc.oneof(
  fc.constantFrom(...(Object.keys(DEVICE_PROFILES) as DeviceType[])).chain((device) =>
    fc.record({
      operation: fc.constantFrom(...DEVICE_PROFILES[device].operations),
      activation: fc.constantFrom(...ACTIVATIONS),
      dim: fc.constant(DEVICE_PROFILES[device].maxDim),
      filters: fc.constant(DEVICE_PROFILES[device].convFilters),
    }),
  ),
  fc.record({
    operation: fc.constantFrom(...OPERATIONS),
    activation: fc.constantFrom(...ACTIVATIONS),
    dim: fc.integer({ min: 4, max: 64 }),
    filters: fc.integer({ min: 1, max: 8 }),
  }),
);
const inputKind = fc.constantFrom('hash', 'min', 'max', 'alternating');

const randomTask = fc
  .record({
    shape: shapes,
    challengeHash: bytes32,
    pathTarget: fc.uint8Array({ minLength: 8, maxLength: 8 }),
    inputKind,
    level: fc.integer({ min: 1, max: 12 }),
  })
  .map(({ shape, challengeHash, pathTarget, inputKind, level }) => {
    const n = shape.dim;
    const input =
      inputKind === 'hash'
        ? new Int8Array(expand(taggedHash('PTM4/input', challengeHash), n * n).buffer)
        : Int8Array.from({ length: n * n }, (_, i) =>
            inputKind === 'min' ? -128 : inputKind === 'max' ? 127 : i % 2 === 0 ? -128 : 127,
          );
    return task({ ...shape, challengeHash, pathTarget, input, level });
  });

describe.each(KERNELS)('tensor kernel (%s)', (kind) => {
  const test = runs(kind) ? vitestTest : vitestTest.skip;
  test('computes the same work as computeWork on random tasks of every shape', () => {
    fc.assert(
      fc.property(randomTask, bytes32, fc.array(nonce, { minLength: 1, maxLength: 3 }), (t, key, nonces) => {
        const kernel = new TensorSearch(t, key, kind);
        for (const n of nonces) expectSameWork(kernel.work(n), computeWork(t, key, n));
      }),
      { numRuns: 120 },
    );
  });

  test('finds the same first nonce as solveProof', () => {
    fc.assert(
      fc.property(
        randomTask.filter((t) => t.dim <= 40),
        bytes32,
        fc.integer({ min: 0, max: 2 ** 53 - 1000 }),
        (t, key, start) => {
          const max = 48;
          const ref = solveProof(t, key, { startNonce: start, maxIterations: max });
          const got = new TensorSearch(t, key, kind).search(start, max);
          expect(got.found?.nonce).toBe(ref?.nonce);
          expect(got.iterations).toBe(ref?.iterations ?? max);
          if (ref && got.found) expectSameWork(got.found.work, ref.work);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('matches the protocol vectors (every listed nonce and the solutions)', () => {
    const key = fromHex(tensorVectors.miner_public_key);
    for (const c of tensorVectors.challenges) {
      const t = task({
        challengeHash: fromHex(c.challenge_hash),
        operation: c.operation as 'matmul' | 'conv',
        activation: c.activation as 'relu' | 'sigmoid' | 'tanh',
        dim: c.dim,
        filters: c.filters,
        input: new Int8Array(fromHex(c.input_tensor_hex).buffer),
        pathTarget: fromHex(c.path_target),
        level: c.input.difficulty,
      });
      const kernel = new TensorSearch(t, key, kind);
      for (const v of c.nonces) {
        const w = kernel.work(v.nonce);
        expect(w.shape).toEqual(v.result_shape);
        expect(toHex(w.tensorResultHash)).toBe(v.tensor_result_hash);
        expect(w.mmlScoreQ16).toBe(v.mml_score_q16);
        expect(toHex(w.pathSignature)).toBe(v.path_signature);
        expect(w.pathDistance).toBe(v.path_distance);
        expect(toHex(w.computationHash)).toBe(v.computation_hash);
      }
      const found = kernel.search(0, 10_000);
      expect(found.found?.nonce).toBe(c.solution.proof.computation_nonce);
      expect(found.iterations).toBe(c.solution.iterations);
      expect(toHex(found.found!.work.computationHash)).toBe(c.solution.proof.computation_hash);
    }
  });
});
