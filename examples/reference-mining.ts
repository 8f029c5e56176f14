/**
 * Mines with the protocol package's reference solvers and checks every result with the
 * reference verifiers, in process: one v4.0 proof per device type and one v4.1 hexchain
 * block. The keys are generated on the spot and never written anywhere.
 *
 *   npx tsx --conditions=@tensormine/source examples/reference-mining.ts   (or npm run examples)
 */
import { randomBytes } from 'node:crypto';
import {
  buildSubmission,
  cellSelector,
  challengeToWire,
  chooseTargetCell,
  DEVICE_TYPES,
  depthFromParents,
  deriveChallenge,
  formatCoord,
  generateKeyPair,
  hexChallengeEntropy,
  hexChallengeHash,
  Lattice,
  parentsRoot,
  proofBytesFromWire,
  proofFromWork,
  signProof,
  solveBlock,
  solveProof,
  targetFromDifficulty,
  verifyBlock,
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

// v4.1 hexchain: grow a small lattice from genesis, one block per challenge.
const lattice = new Lattice();
const hexDifficulty = 1n << BigInt(Number(process.env.HEX_DIFFICULTY_BITS ?? 14));
const target = targetFromDifficulty(hexDifficulty);
console.log(`v4.1 hexchain at difficulty ${hexDifficulty} (expected hashes per block)`);
for (let serial = 0; serial < 4; serial++) {
  const entropy = hexChallengeEntropy(validatorSeed, serial);
  const coord = chooseTargetCell(lattice.frontier(), cellSelector(serial, 'example-slot', entropy));
  const parents = lattice.parentsOf(coord);
  const challengeHash = hexChallengeHash({
    coord,
    slot: serial,
    slotHash: 'example-slot',
    target,
    parentsRoot: parentsRoot(parents),
    entropy,
  });
  const started = performance.now();
  const solved = solveBlock({ challengeHash, coord, minerPublicKey: miner.publicKey, target });
  if (!solved) throw new Error('the reference block solver gave up');
  const ms = performance.now() - started;
  const id = `hex-${serial}`;
  const submission = buildSubmission({
    challengeId: id,
    challengeHash,
    coord,
    nonce: solved.nonce,
    keyPair: miner,
  });
  const verdict = verifyBlock({ id, coord, challengeHash, target }, submission);
  if (!verdict.ok) {
    console.log(`  block at ${formatCoord(coord)}: REJECTED ${verdict.code}`);
    process.exitCode = 1;
    continue;
  }
  const depth = depthFromParents(parents);
  lattice.add({ coord, blockHash: verdict.blockHash, depth });
  console.log(
    `  block at ${formatCoord(coord)} depth ${depth}: nonce ${solved.nonce} in ${ms.toFixed(0)} ms, ` +
      `pow_hash ${submission.block.pow_hash.slice(0, 16)}...: accepted`,
  );
}
