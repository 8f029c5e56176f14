import { describe, expect, it } from 'vitest';
import { testKey } from '../scripts/vectors/_keys.js';
import { toHex, utf8 } from '../src/bytes.js';
import { taggedHash } from '../src/hash.js';
import { deriveChallenge, type TensorChallenge } from '../src/tensor/challenge.js';
import { ACTIVATIONS, DEVICE_PROFILES, type DeviceType } from '../src/tensor/devices.js';
import { computeWork, workSeed } from '../src/tensor/work.js';

/**
 * Issue 9, item 2: no proof field may be predictable with less than the full work. Rule set 1
 * took the bias from the work seed (one SHA-256): a nonce whose bias was <= -60 often silenced
 * every neuron, and for relu every proof field was then a constant a miner could guess after
 * screening nonces by one hash. Rule set 2 commits every accumulator and takes the bias from
 * that commitment; these tests check, over many nonces of every device type, operation and
 * activation, that no two nonces share a result and that the seed alone fixes no field.
 */

const validatorSeed = taggedHash('PTM/test/unpredictable', utf8('seed'));
const miner = testKey('unpredictable');

function challengeFor(deviceType: DeviceType, operation: string, activation: string): TensorChallenge {
  for (let serial = 0; serial < 10_000; serial++) {
    const c = deriveChallenge({
      validatorSeed,
      slot: 500 + serial,
      slotHash: `unpredictable-${serial}`,
      serial,
      deviceType,
      difficulty: 1,
    });
    if (c.operation === operation && c.activation === activation) return c;
  }
  throw new Error(`no ${deviceType} ${operation} ${activation} challenge in 10,000 serials`);
}

/** The rule-set 1 screen: int8(seed[31]) >> 1, known after one SHA-256. */
function seedBias(c: TensorChallenge, nonce: number): number {
  const seed = workSeed(c.challengeHash, miner.publicKey, nonce);
  return ((seed[31]! << 24) >> 24) >> 1;
}

const cases = (Object.keys(DEVICE_PROFILES) as DeviceType[]).flatMap((deviceType) =>
  DEVICE_PROFILES[deviceType].operations.flatMap((operation) =>
    ACTIVATIONS.map(
      (activation) =>
        [`${deviceType} ${operation} ${activation}`, deviceType, operation, activation] as const,
    ),
  ),
);

describe('rule set 2: no proof field without the work', () => {
  it.each(cases)(
    '%s: distinct results for every nonce, nothing fixed by the seed',
    (_, deviceType, operation, activation) => {
      const c = challengeFor(deviceType, operation, activation);
      // Fewer nonces for the big tensors keeps the suite fast; every case still has hundreds.
      const sample = deviceType === 'native' ? 160 : 400;
      const results = new Set<string>();
      const paths = new Set<string>();
      const commitments = new Set<string>();
      // Nonces that rule set 1 would have screened as degenerate (bias <= -60).
      const degenerate: { mml: number; distance: number; path: string }[] = [];
      let nonce = 0;
      for (let i = 0; i < sample || (degenerate.length < 12 && nonce < 50_000); nonce++) {
        const screened = seedBias(c, nonce) <= -60;
        if (i >= sample && !screened) continue; // past the sample: only the screened nonces
        const w = computeWork(c, miner.publicKey, nonce);
        if (i < sample) {
          results.add(toHex(w.tensorResultHash));
          paths.add(toHex(w.pathSignature));
          commitments.add(toHex(w.computationHash));
          i++;
        }
        if (screened) {
          degenerate.push({ mml: w.mmlScoreQ16, distance: w.pathDistance, path: toHex(w.pathSignature) });
        }
      }
      expect(results.size, 'tensor_result_hash distinct per nonce').toBe(sample);
      expect(paths.size, 'path_signature distinct per nonce').toBe(sample);
      expect(commitments.size, 'computation_hash distinct per nonce').toBe(sample);

      // The old screen predicts nothing: among nonces it flagged, every field varies.
      expect(degenerate.length).toBeGreaterThanOrEqual(12);
      expect(new Set(degenerate.map((d) => d.path)).size, 'path_signature of screened nonces').toBe(
        degenerate.length,
      );
      expect(
        new Set(degenerate.map((d) => d.distance)).size,
        'path_distance of screened nonces',
      ).toBeGreaterThan(1);
      expect(new Set(degenerate.map((d) => d.mml)).size, 'mml_score of screened nonces').toBeGreaterThan(1);
    },
  );

  it('the bias is a function of the accumulators: two nonces with equal work seeds bytes 31 differ', () => {
    const c = challengeFor('esp8266', 'matmul', 'relu');
    const byBias = new Map<number, Set<number>>();
    for (let nonce = 0; nonce < 600; nonce++) {
      const w = computeWork(c, miner.publicKey, nonce);
      const key = seedBias(c, nonce);
      const set = byBias.get(key) ?? new Set<number>();
      set.add(w.mmlScoreQ16);
      byBias.set(key, set);
    }
    // With 600 nonces over 128 seed-bias values, groups hold about 5 nonces: if the seed fixed
    // the score, every group would hold one value.
    const varied = [...byBias.values()].filter((s) => s.size > 1).length;
    expect(varied).toBeGreaterThan(byBias.size / 2);
  });
});
