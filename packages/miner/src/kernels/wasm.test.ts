import { randomBytes } from 'node:crypto';
import { mmlScoreQ16 } from '@tensormine/protocol';
import { describe, expect, test } from 'vitest';
import { KERNEL_CHOICES, kernelFor, resolveKernel } from './choice.js';
import { prepareHexchain } from './hexchain.js';
import { nativeKernels } from './native/library.js';
import { scanHexchain } from './sha256.generated.js';
import { MAC_LAYOUT } from './wasm.generated.js';
import { WasmKernels, wasmSimdSupported } from './wasm.js';

/** Neuron counts of every residue around the word and vector boundaries, up to the largest Z. */
const COUNTS = [
  16, 17, 23, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 1000, 1024, 4095, 4096, 9801, 32767, 32768,
];

/** A random integer in [lo, hi]. */
function rand(lo: number, hi: number): number {
  return lo + Math.floor(Math.random() * (hi - lo + 1));
}

/** Writes `z` where the accumulators live, and garbage after it (which must not count). */
function writeZ(wasm: WasmKernels, z: Int32Array): void {
  const words = new Int32Array(wasm.exports.memory.buffer);
  const base = MAC_LAYOUT.z >> 2;
  words.set(z, base);
  for (let i = z.length; i < z.length + 64 && base + i < words.length; i++)
    words[base + i] = rand(-(2 ** 31), 2 ** 31 - 1);
}

/** The fired bits of a test: random runs whose mean length is `meanRun`. */
function bitsOf(count: number, meanRun: number): Uint8Array {
  const bits = new Uint8Array(count);
  let bit = rand(0, 1);
  for (let i = 0; i < count; ) {
    const run = Math.max(1, Math.round(-Math.log(1 - Math.random()) * meanRun));
    bits.fill(bit, i, Math.min(count, i + run));
    i += run;
    bit ^= 1;
  }
  return bits;
}

/** The MML description length (docs/protocol.md 3.3), run by run. */
function mmlBits(bits: Uint8Array): number {
  let total = 1;
  let run = 1;
  for (let i = 1; i <= bits.length; i++) {
    if (i < bits.length && bits[i] === bits[i - 1]) run++;
    else {
      total += 2 * (31 - Math.clz32(run)) + 1;
      run = 1;
    }
  }
  return total;
}

/**
 * The WebAssembly SIMD kernels against the JavaScript ones, on many random inputs (the
 * protocol vectors and the reference are in test/kernels.cross-check.test.ts).
 */
describe('wasm kernels', () => {
  test('Node 24 supports WebAssembly SIMD, so auto selects wasm while no native kernels are loaded', () => {
    expect(wasmSimdSupported()).toBe(true);
    // This runtime's support with no native kernels loaded, given explicitly: what another test
    // file sharing this worker installed in the thread is not an input here.
    const noNative = { nativeLoaded: () => false, wasmSimd: wasmSimdSupported };
    expect(kernelFor('auto', noNative)).toBe('wasm');
    expect(kernelFor('wasm', noNative)).toBe('wasm');
    expect(kernelFor('js', noNative)).toBe('js');
    expect(() => kernelFor('native', noNative)).toThrow(/native is not loaded in this thread/);
    expect(KERNEL_CHOICES).toEqual(['auto', 'native', 'wasm', 'js']);
    expect(() => kernelFor('simd' as never, noNative)).toThrow(
      /kernel: expected one of auto, native, wasm, js/,
    );
    // resolveKernel is that rule on this thread's own support
    const loaded = nativeKernels() !== undefined;
    expect(resolveKernel('auto')).toBe(loaded ? 'native' : 'wasm');
    expect(resolveKernel('wasm')).toBe('wasm');
    expect(resolveKernel('js')).toBe('js');
    if (loaded) expect(resolveKernel('native')).toBe('native');
    else expect(() => resolveKernel('native')).toThrow(/native is not loaded in this thread/);
    expect(() => resolveKernel('simd' as never)).toThrow(/kernel: expected one of auto, native, wasm, js/);
  });

  test('scanHexchain finds the same first nonce as the JavaScript scan (10^7 nonces, random headers)', () => {
    const wasm = new WasmKernels();
    let hashed = 0;
    let hits = 0;
    for (let trial = 0; hashed < 10_000_000; trial++) {
      const { params } = prepareHexchain({ header: randomBytes(88), target: new Uint8Array(32) }, 'js');
      params[12] = randomBytes(4).readInt32LE(0);
      // Targets from "almost never" to "almost always"; ranges of every alignment and length,
      // some ending exactly at 2^32.
      const t0 = trial % 5 === 0 ? 0xffffffff : randomBytes(4).readUInt32LE(0) >>> (4 + (trial % 24));
      const count = 1 + (randomBytes(4).readUInt32LE(0) % 200_000);
      const loStart =
        trial % 7 === 0 ? 2 ** 32 - count : randomBytes(4).readUInt32LE(0) % (2 ** 32 - count + 1);
      const loEnd = loStart + count;
      const want = scanHexchain(params, loStart, loEnd, t0);
      expect(wasm.scanHexchain(params, loStart, loEnd, t0)).toBe(want);
      hashed += want < 0 ? count : want - loStart + 1;
      if (want >= 0) hits++;
    }
    expect(hits).toBeGreaterThan(10);
  });

  test('scanHexchain checks every lane against the range end (counts 1 to 9)', () => {
    const wasm = new WasmKernels();
    const { params } = prepareHexchain({ header: randomBytes(88), target: new Uint8Array(32) }, 'js');
    for (let count = 0; count <= 9; count++) {
      for (let start = 0; start < 64; start += 3) {
        for (const t0 of [0, 0x0fffffff, 0x7fffffff, 0xffffffff]) {
          expect(wasm.scanHexchain(params, start, start + count, t0)).toBe(
            scanHexchain(params, start, start + count, t0),
          );
        }
      }
    }
  });

  test('postStats gives the accumulator fold, sum, min and max of every count', () => {
    const wasm = new WasmKernels();
    const lanes = new Int32Array(8);
    const out = new Float64Array(3);
    for (const count of COUNTS) {
      for (const range of [2 ** 20, 2 ** 31 - 1]) {
        const z = Int32Array.from({ length: count }, () => rand(-range, range));
        if (count > 40) {
          z[rand(0, count - 1)] = -range - (range === 2 ** 31 - 1 ? 1 : 0);
          z[rand(0, count - 1)] = range;
        }
        writeZ(wasm, z);
        wasm.postStats(count, lanes, out);
        const want = Int32Array.from({ length: 8 }, (_, l) => l);
        z.forEach((v, i) => {
          const x = want[i & 7]! ^ v;
          want[i & 7] = Math.imul((x << 13) | (x >>> 19), 0x9e3779b1 | 0);
        });
        expect(Array.from(lanes)).toEqual(Array.from(want));
        expect(out[0]).toBe(z.reduce((a, v) => a + v, 0));
        expect(out[1]).toBe(z.reduce((a, v) => Math.min(a, v)));
        expect(out[2]).toBe(z.reduce((a, v) => Math.max(a, v)));
      }
    }
  });

  test('postFired writes the bitmap and its MML length, runs of every length, every count', () => {
    const wasm = new WasmKernels();
    for (const count of COUNTS) {
      for (const meanRun of [0, 1, 2, 5, 40, 700, 1e9]) {
        const bits =
          meanRun === 0 ? Uint8Array.from({ length: count }, (_, i) => i & 1) : bitsOf(count, meanRun);
        const below = rand(-1000, 1000);
        const z = Int32Array.from(bits, (b) => (b ? below + rand(1, 2 ** 20) : below - rand(0, 2 ** 20)));
        writeZ(wasm, z);
        const fired = new Uint8Array(Math.ceil(count / 8));
        const got = wasm.postFired(count, below, fired);
        const want = new Uint8Array(fired.length);
        bits.forEach((b, i) => {
          want[i >> 3]! |= b << (i & 7);
        });
        expect(fired).toEqual(want);
        expect(got).toBe(mmlBits(bits));
        const scaled = got * 65536;
        expect(Math.min((scaled - (scaled % count)) / count, 65536)).toBe(mmlScoreQ16(want, count));
      }
    }
  });
});
