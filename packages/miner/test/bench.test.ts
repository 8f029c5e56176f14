import {
  computeWork,
  encodeHeader,
  hashMeetsTarget,
  hexPowHash,
  meetsThresholds,
  sha256,
  toHex,
  utf8,
} from '@tensormine/protocol';
import { describe, expect, test } from 'vitest';
import { bench, benchJobs } from '../src/bench.js';
import { missingCpuFlags } from '../src/kernels/native/cpu.js';

/** What `auto` runs here: native on x86-64 with SHA-NI and AVX2 (and a compiler: CI has one). */
const AUTO = process.arch === 'x64' && missingCpuFlags({})?.length === 0 ? 'native' : 'wasm';

const HEX = 2 ** 17;
const TENSOR = 48;

/** The checksum of a case computed with the reference implementation alone. */
function referenceChecksums(): Map<string, string> {
  const sums = new Map<string, string>();
  for (const { name, job } of benchJobs(HEX, TENSOR)) {
    const lines: string[] = [];
    for (let nonce = job.nonceStart!; nonce < job.nonceEnd!; nonce++) {
      if (job.kind === 'hexchain') {
        const hash = hexPowHash(
          encodeHeader({
            coord: job.coord,
            challengeHash: job.challengeHash,
            minerPublicKey: job.minerPublicKey,
            nonce,
          }),
        );
        if (hashMeetsTarget(hash, job.target)) lines.push(`${nonce}:${toHex(hash)}`);
      } else {
        const work = computeWork(job.task, job.minerPublicKey, nonce);
        if (meetsThresholds(job.task, work)) lines.push(`${nonce}:${toHex(work.computationHash)}`);
      }
    }
    sums.set(name, toHex(sha256(utf8(lines.join('\n')))));
  }
  return sums;
}

describe('bench', () => {
  test('hashes a fixed amount and returns checksums the reference agrees with, for 1 and 2 threads and every kernel', async () => {
    // One thread on the JavaScript kernels, two on WebAssembly SIMD, two on auto (native where
    // it runs): the same checksums.
    const one = await bench({ threads: 1, kernel: 'js', hexchainHashes: HEX, tensorIterations: TENSOR });
    const two = await bench({ threads: 2, kernel: 'wasm', hexchainHashes: HEX, tensorIterations: TENSOR });
    const auto = await bench({ threads: 2, kernel: 'auto', hexchainHashes: HEX, tensorIterations: TENSOR });
    expect(one.kernel).toBe('js');
    expect(two.kernel).toBe('wasm');
    expect(auto.kernel, auto.kernelNotice).toBe(AUTO);
    expect(auto.checksum).toBe(one.checksum);
    expect(auto.kernelErrors).toBe(0);
    expect(one.cases.map((c) => c.name)).toEqual([
      'hexchain',
      'tensor native matmul 64x64',
      'tensor native conv 8x64x64',
      'tensor esp32 matmul 32x32',
      'tensor esp32 conv 4x32x32',
      'tensor esp8266 matmul 16x16',
    ]);
    expect(one.cases.map((c) => c.hashes)).toEqual([HEX, TENSOR, TENSOR, TENSOR, TENSOR, TENSOR]);
    expect(two.cases.map((c) => c.checksum)).toEqual(one.cases.map((c) => c.checksum));
    expect(two.checksum).toBe(one.checksum);
    expect(one.kernelErrors + two.kernelErrors).toBe(0);
    expect(one.cases.every((c) => c.rate > 0 && c.seconds > 0)).toBe(true);
    expect(one.cases[0]!.results).toBeGreaterThan(0);

    const reference = referenceChecksums();
    for (const c of one.cases) expect(c.checksum, c.name).toBe(reference.get(c.name));
  });
});
