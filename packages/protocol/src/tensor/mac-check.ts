import { expand, taggedHash } from '../hash.js';
import { conv3x3, matmul } from './fixed-point.js';
import { type MacCore, referenceMac, wasmMac } from './mac.js';
import { computeWork } from './work.js';

/**
 * The WebAssembly core checked before use: the check compares it with the reference, down to
 * whole iterations of `computeWork`, so it lives above both (mac.ts and work.ts).
 */

/**
 * `wasmMac()` after a self-check against the reference (matmul and conv at several sizes, on
 * fixed pseudo-random and extreme operands), or undefined when WebAssembly SIMD is missing or
 * the check fails. A verifier uses this: a wrong fast core must never decide a proof.
 */
export function checkedWasmMac(): MacCore | undefined {
  if (selfCheck === undefined) {
    try {
      selfCheck = selfCheckWasmMac();
    } catch {
      selfCheck = false;
    }
  }
  return selfCheck ? wasmMac() : undefined;
}

/** The self-check's verdict, once per process (the module and the reference do not change). */
let selfCheck: boolean | undefined;

function selfCheckWasmMac(): boolean {
  const mac = wasmMac();
  if (mac === undefined) return false;
  const bytes = (label: string, length: number) => {
    const b = expand(taggedHash('PTM4/mac-check', new TextEncoder().encode(label)), length);
    return new Int8Array(b.buffer, b.byteOffset, length);
  };
  const same = (a: Int32Array, b: Int32Array) => a.length === b.length && a.every((v, i) => v === b[i]);
  for (const n of [4, 7, 16, 33, 64]) {
    const x = bytes(`x${n}`, n * n);
    const w = bytes(`w${n}`, n * n);
    if (!same(mac.matmul(x, w, n), matmul(x, w, n))) return false;
    const min = new Int8Array(n * n).fill(-128);
    if (!same(mac.matmul(min, min, n), matmul(min, min, n))) return false;
    for (const f of [1, 3, 8]) {
      const k = bytes(`k${n}/${f}`, f * 9);
      if (!same(mac.conv3x3(x, k, n, f), conv3x3(x, k, n, f))) return false;
    }
    for (const operation of ['matmul', 'conv'] as const) {
      const task = { operation, dim: n, filters: 5, input: x };
      const seed = taggedHash('PTM4/mac-check', new Uint8Array(x.buffer, x.byteOffset, 4));
      if (!same(mac.accumulators(task, seed), referenceMac.accumulators(task, seed))) return false;
      // The whole iteration, the core's passes over Z included, for each activation.
      for (const activation of ['relu', 'sigmoid', 'tanh'] as const) {
        const full = { ...task, activation, challengeHash: seed, pathTarget: seed.subarray(0, 8) };
        const a = computeWork(full, seed, n, mac);
        const b = computeWork(full, seed, n);
        const fields = [
          [a.result, b.result],
          [a.accumulatorHash, b.accumulatorHash],
          [a.tensorResultHash, b.tensorResultHash],
          [a.pathSignature, b.pathSignature],
          [a.computationHash, b.computationHash],
        ] as const;
        if (a.mmlScoreQ16 !== b.mmlScoreQ16 || a.pathDistance !== b.pathDistance) return false;
        if (!fields.every(([p, q]) => p.length === q.length && p.every((v, i) => v === q[i]))) return false;
      }
    }
  }
  return true;
}
