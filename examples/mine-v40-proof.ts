/**
 * Mines one v4.0 proof of tensor work with the client (protocol forced to 4.0), against a
 * validator started in this process, and checks the validator's signed receipt.
 *
 *   npx tsx --conditions=@tensormine/source examples/mine-v40-proof.ts
 */
import { createClient, Signer, solveWork } from '@tensormine/client';
import { fromHex, parseAmount, verifyReceipt } from '@tensormine/protocol';
import { createValidator } from '@tensormine/validator';

const validator = await createValidator({
  dataDir: ':memory:',
  difficulty: 2,
  hexDifficulty: 256n,
  logger: false,
});
const url = await validator.listen({ host: '127.0.0.1', port: 0 });
const signer = Signer.generate();
const client = createClient({ url, signer, protocol: '4.0' });

try {
  await client.miners.register({ device_type: 'esp32' });
  const work = await client.getWork({ deviceType: 'esp32' });
  if (work.version !== '4.0') throw new Error(`expected v4.0 work, got v${work.version}`);
  const { challenge } = work;
  console.log(
    `challenge ${challenge.challenge_id}: ${challenge.operation_type}/${challenge.activation} ` +
      `${challenge.input_tensor.shape.join('x')} for ${challenge.device_type}, difficulty ${challenge.difficulty}, ` +
      `mml <= ${challenge.mml_threshold}, path distance <= ${challenge.path_distance_max}`,
  );

  const solution = solveWork(work, signer);
  if (solution === undefined) throw new Error('the nonce space ran out');
  console.log(
    `nonce ${solution.nonce} after ${solution.iterations} iterations (expected ${challenge.expected_iterations})`,
  );

  const { result, proof } = await client.submitWork(work, solution);
  console.log(
    `proof accepted: reward ${result.reward} ${result.token}, ledger entry ${result.ledger_entry_id}`,
  );

  // The receipt: tx_sig is the validator's signature over the acceptance (docs/protocol.md).
  const { node_pubkey } = await client.node.health();
  const valid = verifyReceipt(
    {
      challengeId: result.challenge_id,
      minerPubkey: result.miner_pubkey,
      computationHash: proof.computation_hash,
      ledgerEntryId: BigInt(result.ledger_entry_id),
      rewardMinor: parseAmount(result.reward, result.token),
      acceptedAt: result.accepted_at,
    },
    result.tx_sig,
    fromHex(node_pubkey),
  );
  console.log(`receipt signed by ${node_pubkey.slice(0, 16)}...: ${valid ? 'valid' : 'INVALID'}`);
  if (!valid) process.exitCode = 1;
} finally {
  await client.close();
  await validator.close();
}
