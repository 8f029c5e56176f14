import { describe, expect, it } from 'vitest';
import { u32le } from '../src/bytes.js';
import { keyPairFromSecret } from '../src/ed25519.js';
import { sha256, taggedHash } from '../src/hash.js';
import { encodeHeader } from '../src/hexchain/header.js';
import { solveBlock } from '../src/hexchain/solve-block.js';
import { hashMeetsTarget, targetFromDifficulty } from '../src/hexchain/target.js';

const miner = keyPairFromSecret(sha256(Uint8Array.of(1, 2, 3)));
const coord = { q: 3, r: -2, s: -1 };

describe('solveBlock', () => {
  it('returns the first nonce from startNonce whose header hash meets the target', () => {
    const target = targetFromDifficulty(64n);
    const challengeHash = taggedHash('test/solve', u32le(1));
    const solved = solveBlock({
      challengeHash,
      coord,
      minerPublicKey: miner.publicKey,
      target,
      startNonce: 1000,
    })!;
    expect(solved.nonce).toBeGreaterThanOrEqual(1000);
    expect(solved.iterations).toBe(solved.nonce - 1000 + 1);
    expect(solved.header).toEqual(
      encodeHeader({ coord, challengeHash, minerPublicKey: miner.publicKey, nonce: solved.nonce }),
    );
    expect(solved.powHash).toEqual(sha256(solved.header));
    expect(hashMeetsTarget(solved.powHash, target)).toBe(true);
    for (let nonce = 1000; nonce < solved.nonce; nonce++) {
      const h = sha256(encodeHeader({ coord, challengeHash, minerPublicKey: miner.publicKey, nonce }));
      expect(hashMeetsTarget(h, target)).toBe(false);
    }
  });

  it('gives up after maxIterations and at the end of the nonce space', () => {
    const target = targetFromDifficulty(2n ** 40n);
    const base = {
      challengeHash: taggedHash('test/solve', u32le(2)),
      coord,
      minerPublicKey: miner.publicKey,
      target,
    };
    expect(solveBlock({ ...base, maxIterations: 100 })).toBeUndefined();
    expect(solveBlock({ ...base, startNonce: Number.MAX_SAFE_INTEGER - 5 })).toBeUndefined();
  });

  it('needs D hashes on average: the mean iteration count matches D within 3 standard errors', () => {
    // The iteration count of one challenge is geometric with success probability
    // p = (target + 1) / 2^256 (= 1/D up to 2^-200), so its mean is 1/p and its variance
    // (1 - p) / p^2. Scaled by p, each count has mean 1 and variance 1 - p, so the mean of
    // N scaled counts has standard error sqrt(sum(1 - p_i)) / N, about 1/sqrt(4000) = 0.016.
    // The challenges are fixed, so this test is deterministic; a correct solver lands within
    // 3 standard errors for 99.7 % of choices of fixed challenges.
    const difficulties = [16n, 24n, 32n, 48n, 64n];
    const perDifficulty = 800;
    let scaledSum = 0;
    let varianceSum = 0;
    let n = 0;
    for (const d of difficulties) {
      const target = targetFromDifficulty(d);
      const p = Number(((target + 1n) * 2n ** 64n) >> 256n) / 2 ** 64;
      for (let i = 0; i < perDifficulty; i++) {
        const challengeHash = taggedHash('test/solve-mean', u32le(Number(d)), u32le(i));
        const solved = solveBlock({ challengeHash, coord, minerPublicKey: miner.publicKey, target })!;
        scaledSum += solved.iterations * p;
        varianceSum += 1 - p;
        n++;
      }
    }
    const mean = scaledSum / n;
    const standardError = Math.sqrt(varianceSum) / n;
    expect(Math.abs(mean - 1)).toBeLessThan(3 * standardError);
  });
});
