/**
 * Protocol benchmarks: the cost of the reference verifiers, as ratios to node:crypto's
 * SHA-256 over the same bytes in the same run.
 *
 *   npm run bench -w @tensormine/protocol      (writes its section of docs/benchmarks.md)
 */
import { hash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { utf8 } from '../src/bytes.js';
import { keyPairFromSecret } from '../src/ed25519.js';
import { taggedHash } from '../src/hash.js';
import { deriveChallenge } from '../src/tensor/challenge.js';
import { DEVICE_PROFILES, type DeviceType } from '../src/tensor/devices.js';
import { proofBytesFromWire, proofFromWork, proofMessage, signProof } from '../src/tensor/proof.js';
import { solveProof } from '../src/tensor/solve.js';
import { verifyProof } from '../src/tensor/verify.js';
import { formatRate, machineLine, measure, writeSection } from './harness.js';
import { hexchainCases } from './hexchain.cases.js';

const docPath = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const miner = keyPairFromSecret(taggedHash('bench/key', utf8('miner')));
const validatorSeed = taggedHash('bench/seed', utf8('validator'));

const rows: string[] = [];
for (const deviceType of Object.keys(DEVICE_PROFILES) as DeviceType[]) {
  for (const operation of DEVICE_PROFILES[deviceType].operations) {
    let serial = 0;
    let c = deriveChallenge({ validatorSeed, slot: 1, slotHash: 'bench', serial, deviceType, difficulty: 4 });
    while (c.operation !== operation) {
      serial++;
      c = deriveChallenge({ validatorSeed, slot: 1, slotHash: 'bench', serial, deviceType, difficulty: 4 });
    }
    const s = solveProof(c, miner.publicKey)!;
    const proof = proofFromWork('bench', c.challengeHash, miner.publicKey, s.nonce, s.work);
    const bytes = proofBytesFromWire(proof, s.work.mmlScoreQ16);
    const signature = signProof(bytes, miner.secretKey);
    const message = proofMessage(bytes);
    const [verifyRate, hashRate] = measure([
      { name: 'verify', run: () => verifyProof(c, proof, { signature }).ok },
      { name: 'sha256', run: () => hash('sha256', message, 'buffer') },
    ]);
    const dims = operation === 'conv' ? `${c.filters}x${c.dim}x${c.dim}` : `${c.dim}x${c.dim}`;
    rows.push(
      `| verifyProof, ${deviceType} ${operation} ${dims} | ${formatRate(verifyRate!.opsPerSecond)} | ${formatRate(hashRate!.opsPerSecond)} (${message.length} B) | ${(hashRate!.opsPerSecond / verifyRate!.opsPerSecond).toFixed(0)}x |`,
    );
    console.log(rows.at(-1));
  }
}
for (const row of hexchainCases()) {
  rows.push(row);
  console.log(row);
}

writeSection(
  docPath,
  'protocol',
  `## Protocol reference verifiers

Command: \`npm run bench -w @tensormine/protocol\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}).
Each line is measured side by side with \`crypto.hash('sha256')\` over the same bytes in the same run
(interleaved rounds, median). The cost column is how many SHA-256 calls one operation costs.

| operation | rate | crypto.hash sha256, same bytes | cost in sha256 calls |
|---|---|---|---|
${rows.join('\n')}

verifyProof recomputes the whole tensor computation for the submitted nonce (weights from
SHA-256, the matmul or convolution, normalisation, activation, the neural path and the MML
score) and checks the ed25519 signature; its cost is dominated by the multiply-accumulates
(262,144 for the native 64x64 matmul, 294,912 for 8 native 3x3 filters over 64x64).`,
);
