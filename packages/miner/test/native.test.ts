/**
 * The native kernels (C on SHA-NI and AVX2, firmware-sim/native): they build warning-free, and
 * what they compute per nonce equals the reference on random inputs of every shape; the engine
 * runs them in its workers. (The protocol vectors for every kernel choice are in
 * kernels.cross-check.test.ts; the fallback when they cannot run in kernel-choice.test.ts.)
 * Skipped, visibly, on a CPU without the features: they cannot run there.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import {
  ACTIVATIONS,
  computeWork,
  expand,
  type MiningTask,
  OPERATIONS,
  taggedHash,
  toHex,
} from '@tensormine/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { benchJobs } from '../src/bench.js';
import { MiningEngine } from '../src/engine.js';
import { prepareHexchain } from '../src/kernels/hexchain.js';
import { buildNativeLibrary } from '../src/kernels/native/build.js';
import { missingCpuFlags } from '../src/kernels/native/cpu.js';
import { type NativeKernels, nativeKernels } from '../src/kernels/native/library.js';
import { selectKernel } from '../src/kernels/select.js';
import { scanHexchain } from '../src/kernels/sha256.generated.js';
import { firstFound } from './helpers.js';

/** This machine can run the native kernels (x86-64 with SHA-NI, AVX2, SSE4.1, SSSE3). */
const nativeCpu = process.arch === 'x64' && missingCpuFlags({})?.length === 0;
/** Compiling the kernels with gcc -O2 on a loaded machine. */
const BUILD_TIMEOUT_MS = SLOW_TEST_TIMEOUT_MS;

describe('the C sources', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tm-native-strict-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test(
    'compile warning-free (-Wall -Wextra -Werror -Wshadow -Wconversion -Wsign-conversion), once: then from the cache',
    async () => {
      const lines: string[] = [];
      const built = await buildNativeLibrary({
        strict: true,
        cacheDir: dir,
        onProgress: (l) => lines.push(l),
      });
      expect(built.cached).toBe(false);
      // The first use says what it is doing while the compiler runs, and when it is done.
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        /^kernel: building the native kernels with \S.* into .* \(first use of this version: a few seconds, once\)$/,
      );
      expect(lines[0]).toContain(dir);
      expect(lines[1]).toMatch(/^kernel: native kernels built in \d+\.\d s$/);
      expect(existsSync(built.path)).toBe(true);
      expect(built.path.startsWith(dir)).toBe(true);
      const again = await buildNativeLibrary({
        strict: true,
        cacheDir: dir,
        onProgress: (l) => lines.push(l),
      });
      expect(again).toEqual({ ...built, cached: true });
      expect(lines).toHaveLength(2); // from the cache: nothing to say
    },
    BUILD_TIMEOUT_MS,
  );
});

describe.skipIf(!nativeCpu)('the native kernels against the reference', () => {
  let kernels: NativeKernels;
  beforeAll(async () => {
    const selection = await selectKernel('native');
    expect(selection.notice).toBeUndefined();
    expect(selection.kernel).toBe('native');
    expect(selection.detail).toMatch(/^SHA-NI \+ AVX2, .+, (built|cached), vectors passed in \d+ ms$/);
    kernels = nativeKernels()!;
  }, BUILD_TIMEOUT_MS);

  const shapes = fc.record({
    operation: fc.constantFrom(...OPERATIONS),
    activation: fc.constantFrom(...ACTIVATIONS),
    dim: fc.oneof(fc.constantFrom(16, 32, 64), fc.integer({ min: 4, max: 64 })),
    filters: fc.integer({ min: 1, max: 8 }),
  });
  const inputKind = fc.constantFrom('hash', 'min', 'max', 'alternating', 'random');
  const task = fc
    .record({ shape: shapes, challengeHash: fc.uint8Array({ minLength: 32, maxLength: 32 }), inputKind })
    .map(({ shape, challengeHash, inputKind }): MiningTask => {
      const n = shape.dim;
      const input =
        inputKind === 'hash'
          ? new Int8Array(expand(taggedHash('PTM4/input', challengeHash), n * n).buffer)
          : inputKind === 'random'
            ? new Int8Array(randomBytes(n * n).buffer)
            : Int8Array.from({ length: n * n }, (_, i) =>
                inputKind === 'min' ? -128 : inputKind === 'max' ? 127 : i % 2 === 0 ? -128 : 127,
              );
      return {
        challengeId: 'native-test',
        challengeHash,
        operation: shape.operation,
        activation: shape.activation,
        dim: n,
        filters: shape.operation === 'conv' ? shape.filters : 0,
        input,
        pathTarget: taggedHash('PTM4/path-target', challengeHash).slice(0, 8),
        mmlThresholdQ16: 65536,
        pathDistanceMax: 64,
      };
    });
  const nonce = fc.oneof(
    fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    fc.constant(Number.MAX_SAFE_INTEGER),
  );

  test('per nonce: work seed, accumulator hash, path signature and distance, MML score as computeWork, on random tasks of every shape', () => {
    fc.assert(
      fc.property(
        task,
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(nonce, { minLength: 1, maxLength: 3 }),
        (t, key, nonces) => {
          const native = kernels.tensor(t, key);
          for (const n of nonces) {
            const got = native.probe(n);
            const want = computeWork(t, key, n);
            const u64 = new Uint8Array(8);
            new DataView(u64.buffer).setBigUint64(0, BigInt(n), true);
            const label = `${t.operation} ${t.dim}${t.operation === 'conv' ? ` x ${t.filters}` : ''} nonce ${n}`;
            expect(toHex(got.workSeed), label).toBe(
              toHex(taggedHash('PTM4/work', t.challengeHash, key, u64)),
            );
            expect(toHex(got.accumulatorHash), label).toBe(toHex(want.accumulatorHash));
            expect(toHex(got.pathSignature), label).toBe(toHex(want.pathSignature));
            expect(got.pathDistance, label).toBe(want.pathDistance);
            expect(got.mmlScoreQ16, label).toBe(want.mmlScoreQ16);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  test('the search stops where the thresholds first hold, as the per-nonce fields say', () => {
    fc.assert(
      fc.property(
        task,
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.integer({ min: 0, max: 2 ** 53 - 100 }),
        (t, key, start) => {
          const native = kernels.tensor(t, key);
          const fields = Array.from({ length: 24 }, (_, i) => native.probe(start + i));
          // thresholds that roughly a third of the nonces meet
          const distance = [...fields].map((f) => f.pathDistance).sort((a, b) => a - b)[8]!;
          const mml = [...fields].map((f) => f.mmlScoreQ16).sort((a, b) => a - b)[16]!;
          const first = fields.findIndex((f) => f.pathDistance <= distance && f.mmlScoreQ16 <= mml);
          const r = native.search(start, 24, mml, distance);
          if (first < 0) {
            expect(r).toEqual({ iterations: 24 });
          } else {
            expect(r).toEqual({
              found: {
                nonce: start + first,
                mmlScoreQ16: fields[first]!.mmlScoreQ16,
                pathDistance: fields[first]!.pathDistance,
              },
              iterations: first + 1,
            });
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  test(
    'a cached library that does not load is removed and built again',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'tm-native-repair-'));
      try {
        // A cache holding the library: a copy of the user's cache entry (built before the run
        // and loaded above), not a second compilation of the same sources and flags.
        const built = await buildNativeLibrary();
        const entry = basename(dirname(built.path));
        cpSync(dirname(built.path), join(dir, entry), { recursive: true });
        const first = await buildNativeLibrary({ cacheDir: dir });
        expect(first).toEqual({ ...built, path: join(dir, entry, basename(built.path)), cached: true });
        writeFileSync(first.path, 'half a library');
        const s = await selectKernel('native', { cacheDir: dir });
        expect(s.kernel, s.notice).toBe('native');
        expect(s.detail).toMatch(/, built, vectors passed/);
        expect(s.nativeLibrary).toBe(first.path);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    BUILD_TIMEOUT_MS,
  );

  test('the search never passes 2^53 - 1', () => {
    const t = fc.sample(task, 1)[0]!;
    const native = kernels.tensor(t, new Uint8Array(32));
    expect(native.search(Number.MAX_SAFE_INTEGER - 2, 10, 0, -1)).toEqual({ iterations: 3 });
  });

  test('the hexchain scan returns the first candidate the JavaScript scan returns (random headers, 2^32 boundaries)', () => {
    let hits = 0;
    for (let trial = 0; trial < 400; trial++) {
      const { params } = prepareHexchain({ header: randomBytes(88), target: new Uint8Array(32) }, 'js');
      params[12] = randomBytes(4).readInt32LE(0);
      const t0 = randomBytes(4).readUInt32BE(0) >>> (8 + (trial % 8)); // from 1 in 2^8 to 1 in 2^15
      const start = trial % 4 === 0 ? 0x1_0000_0000 - 3000 : randomBytes(4).readUInt32BE(0) >>> 1;
      const end = Math.min(0x1_0000_0000, start + 4000);
      const js = scanHexchain(params, start, end, t0);
      expect(kernels.scanHexchain(params, start, end, t0), `trial ${trial}`).toBe(js);
      if (js >= 0) hits++;
    }
    expect(hits).toBeGreaterThan(100);
  });

  test('the engine runs them in its workers: a block found, verified by the reference', async () => {
    const engine = new MiningEngine({ threads: 2, kernel: 'native' });
    await engine.start();
    try {
      expect(engine.kernel).toBe('native');
      const { job } = benchJobs(2 ** 20, 0)[0]!;
      expect((await firstFound(engine, job)).challengeId).toBe(job.challengeId);
      expect(engine.kernelErrors).toBe(0);
    } finally {
      await engine.stop();
    }
  });

  test('the engine mines every device type with them: results the reference accepts', async () => {
    const engine = new MiningEngine({ threads: 2, kernel: 'native' });
    await engine.start();
    try {
      for (const { job } of benchJobs(0, 64)) {
        expect((await firstFound(engine, { ...job, nonceEnd: 100_000 })).challengeId).toBe(job.challengeId);
      }
      expect(engine.kernelErrors).toBe(0);
    } finally {
      await engine.stop();
    }
  });
});
