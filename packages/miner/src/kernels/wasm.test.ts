import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { prepareHexchain } from './hexchain.js';
import { scanHexchain } from './sha256.generated.js';
import { KERNEL_CHOICES, resolveKernel, WasmKernels, wasmSimdSupported } from './wasm.js';

/**
 * The WebAssembly SIMD kernels against the JavaScript ones, on many random inputs (the
 * protocol vectors and the reference are in test/kernels.cross-check.test.ts).
 */
describe('wasm kernels', () => {
  test('Node 24 supports WebAssembly SIMD, so auto selects wasm', () => {
    expect(wasmSimdSupported()).toBe(true);
    expect(resolveKernel('auto')).toBe('wasm');
    expect(resolveKernel('wasm')).toBe('wasm');
    expect(resolveKernel('js')).toBe('js');
    expect(KERNEL_CHOICES).toEqual(['auto', 'wasm', 'js']);
    expect(() => resolveKernel('simd' as never)).toThrow(/kernel: expected one of auto, wasm, js/);
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
});
