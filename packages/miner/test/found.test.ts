import { fromHex, targetFromDifficulty } from '@tensormine/protocol';
import { describe, expect, test } from 'vitest';
import { MinerError } from '../src/errors.js';
import { type FoundResult, resultFromNonce, signFound, verifyFound } from '../src/found.js';
import type { MiningJob } from '../src/job.js';
import { hexJob, KEY, signerOf, tensorTestJob } from './helpers.js';

/** The first result of a job from nonce 0, built with the reference. */
function firstResult(job: MiningJob): FoundResult {
  for (let nonce = 0; ; nonce++) {
    const verdict = resultFromNonce(job, nonce, { device: 'cpu' });
    if (verdict.ok) return verdict.found;
  }
}

describe('a result is built, verified and signed once', () => {
  test('resultFromNonce freezes what it checked; verifyFound checks anything else in full', () => {
    const job = hexJob(16);
    const found = firstResult(job);
    expect(Object.isFrozen(found)).toBe(true);
    if (found.kind !== 'hexchain') throw new Error('expected a hexchain result');
    expect(Object.isFrozen(found.submission.block.coord)).toBe(true);
    expect(verifyFound(job, found)).toEqual({ ok: true });
    // A copy that says another pow_hash is not the result that was checked: checked, refused.
    const copy = {
      ...found,
      submission: { ...found.submission, block: { ...found.submission.block, pow_hash: '00'.repeat(32) } },
    };
    expect(verifyFound(job, copy)).toMatchObject({ ok: false, code: 'pow_hash_mismatch' });
    // The same result against other terms (a harder target) is checked again, in full.
    const harder = { ...job, target: targetFromDifficulty(2n ** 50n) };
    expect(verifyFound(harder, found)).toMatchObject({ ok: false, code: 'pow_above_target' });
  });

  test('a tensor result against other thresholds is checked again', () => {
    const job = tensorTestJob('esp8266', 4);
    const found = firstResult(job);
    expect(verifyFound(job, found)).toEqual({ ok: true });
    const stricter = { ...job, task: { ...job.task, pathDistanceMax: -1 } };
    expect(verifyFound(stricter, found)).toMatchObject({ ok: false, code: 'path_distance_above_max' });
  });

  test("signFound signs the result's own submission, as the client's Signer would build it", () => {
    const job = hexJob(16);
    const found = firstResult(job);
    if (found.kind !== 'hexchain') throw new Error('expected a hexchain result');
    const signer = signerOf(KEY);
    const body = signFound(found, signer);
    expect(body).toEqual(
      signer.buildHexSubmission({
        challengeId: job.challengeId,
        challengeHash: job.challengeHash,
        coord: job.coord,
        nonce: found.nonce,
      }),
    );
    expect({ ...body, signature: undefined }).toEqual({ ...found.submission, signature: undefined });
  });

  test('signFound refuses a result whose parts disagree (a damaged journal line), before signing', () => {
    const hex = firstResult(hexJob(16));
    const tensor = firstResult(tensorTestJob('esp8266', 4));
    const signer = signerOf(KEY);
    for (const damaged of [
      { ...hex, nonce: hex.nonce + 1 },
      { ...hex, header: `${(hex as { header: string }).header.slice(0, -2)}ff` },
      { ...hex, header: 'zz' },
      { ...tensor, nonce: tensor.nonce + 1 },
    ] as FoundResult[]) {
      const error = (() => {
        try {
          signFound(damaged, signer);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(MinerError);
      expect(error).toMatchObject({ code: 'invalid_result' });
      expect((error as Error).message).toMatch(new RegExp(`^result ${damaged.id} \\(challenge`));
    }
    // The header of another key is this signer's to refuse.
    const theirs = firstResult({ ...hexJob(16), minerPublicKey: fromHex('ab'.repeat(32)) });
    expect(() => signFound(theirs, signer)).toThrow(/expected this signer's public key/);
  });
});
