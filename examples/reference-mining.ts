/**
 * Mines with the protocol package's reference solvers and checks every result with the
 * reference verifiers, in process: one v4.0 proof per device type and one v4.1 hexchain
 * block. The keys are generated on the spot and never written anywhere.
 *
 *   npm start          (from the repository root, after npm install)
 */
import { randomBytes } from 'node:crypto';
import {
  challengeToWire,
  DEVICE_TYPES,
  deriveChallenge,
  generateKeyPair,
  proofBytesFromWire,
  proofFromWork,
  signProof,
  solveProof,
  verifyProof,
} from '@tensormine/protocol';

const miner = generateKeyPair();
const validatorSeed = new Uint8Array(randomBytes(32));
const difficulty = Number(process.env.DIFFICULTY ?? 6);

console.log(`v4.0 proof of tensor work at difficulty ${difficulty}`);
for (const [serial, deviceType] of DEVICE_TYPES.entries()) {
  const challenge = deriveChallenge({
    validatorSeed,
    slot: 1,
    slotHash: 'example-slot',
    serial,
    deviceType,
    difficulty,
  });
  const wire = challengeToWire(challenge, {
    id: `example-${serial}`,
    slotHash: 'example-slot',
    issuedAt: 0,
    expiresAt: 60,
  });
  const started = performance.now();
  const solution = solveProof(challenge, miner.publicKey);
  if (!solution) throw new Error('the reference solver gave up');
  const ms = performance.now() - started;
  const proof = proofFromWork(
    wire.challenge_id,
    challenge.challengeHash,
    miner.publicKey,
    solution.nonce,
    solution.work,
  );
  const signature = signProof(proofBytesFromWire(proof, solution.work.mmlScoreQ16), miner.secretKey);
  const verdict = verifyProof(challenge, proof, { signature });
  console.log(
    `  ${deviceType.padEnd(8)} ${wire.operation_type}/${wire.activation} ${wire.input_tensor.shape.join('x')}: ` +
      `nonce ${solution.nonce} after ${solution.iterations} iterations (expected ${wire.expected_iterations}) ` +
      `in ${ms.toFixed(0)} ms, path_distance ${proof.path_distance}/${wire.path_distance_max}, ` +
      `mml ${proof.mml_score}/${wire.mml_threshold}: ${verdict.ok ? 'accepted' : `REJECTED ${verdict.code}`}`,
  );
  if (!verdict.ok) process.exitCode = 1;
}
