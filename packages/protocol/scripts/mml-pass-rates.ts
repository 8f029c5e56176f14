/**
 * Measures q_mml(d): the share of honest nonce results whose MML score is at or below the
 * threshold of difficulty d, per device type, and prints the expected-iterations table of
 * docs/protocol.md. The MML gate does not bind up to level 8 (q = 1 exactly).
 *
 *   npx tsx packages/protocol/scripts/mml-pass-rates.ts [samples-per-device]
 */
import { utf8 } from '../src/bytes.js';
import { taggedHash } from '../src/hash.js';
import { deriveChallenge } from '../src/tensor/challenge.js';
import { DEVICE_TYPES } from '../src/tensor/devices.js';
import { difficultyParams, MAX_DIFFICULTY } from '../src/tensor/difficulty.js';
import { computeWork } from '../src/tensor/work.js';

const samples = Number(process.argv[2] ?? 4000);
const seed = taggedHash('calibration', utf8('seed'));
const key = taggedHash('calibration', utf8('key'));
const scores = new Map<string, number[]>();
for (const deviceType of DEVICE_TYPES) {
  const list: number[] = [];
  for (let serial = 0; list.length < samples; serial++) {
    const c = deriveChallenge({
      validatorSeed: seed,
      slot: serial,
      slotHash: 'cal',
      serial,
      deviceType,
      difficulty: 1,
    });
    for (let nonce = 0; nonce < 20; nonce++) list.push(computeWork(c, key, nonce).mmlScoreQ16);
  }
  scores.set(deviceType, list);
}
console.log(
  `| d | path_distance_max | mml_threshold | 1/p_path | ${DEVICE_TYPES.map((t) => `q_mml ${t}`).join(' | ')} | ${DEVICE_TYPES.map((t) => `E ${t}`).join(' | ')} |`,
);
console.log(`|${'---|'.repeat(4 + 2 * DEVICE_TYPES.length)}`);
for (let d = 1; d <= MAX_DIFFICULTY; d++) {
  const p = difficultyParams(d);
  const q = DEVICE_TYPES.map((t) => {
    const list = scores.get(t)!;
    return list.filter((s) => s <= p.mmlThresholdQ16).length / list.length;
  });
  const e = q.map((x) => Math.round(Number(p.pathTotal) / Number(p.pathPassing) / x));
  console.log(
    `| ${d} | ${p.pathDistanceMax} | ${(p.mmlThresholdQ16 / 65536).toFixed(4)} | ${(Number(p.pathTotal) / Number(p.pathPassing)).toPrecision(4)} | ${q.map((x) => (d <= 8 ? '1 (exact)' : x.toFixed(3))).join(' | ')} | ${e.map((x) => x.toLocaleString('en-US')).join(' | ')} |`,
  );
}
