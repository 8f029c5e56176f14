/**
 * Mines one v4.1 hexchain block with the client, against a validator started in this process:
 * register the key, ask for work, solve it with the protocol's reference solver, submit the
 * signed block, read the reward.
 *
 *   npx tsx --conditions=@tensormine/source examples/mine-hexchain-block.ts
 */
import { createClient, Signer, solveWork } from '@tensormine/client';
import { formatCoord } from '@tensormine/protocol';
import { createValidator } from '@tensormine/validator';

const validator = await createValidator({
  dataDir: ':memory:',
  difficulty: 2,
  hexDifficulty: 256n,
  logger: false,
});
const url = await validator.listen({ host: '127.0.0.1', port: 0 });
const signer = Signer.generate(); // a real miner loads its key: await Signer.load('miner.key')
const client = createClient({ url, signer });

try {
  await client.miners.register(); // a signed request: device_type native
  const work = await client.getWork(); // detects the hexchain: v4.1 here
  if (work.version !== '4.1') throw new Error(`expected v4.1 work, got v${work.version}`);
  const { challenge } = work;
  console.log(
    `challenge ${challenge.id}: cell ${formatCoord(challenge.coord)} at depth ${challenge.depth}, ` +
      `difficulty ${challenge.difficulty} (expected hashes)`,
  );

  const solution = solveWork(work, signer);
  if (solution === undefined) throw new Error('the nonce space ran out');
  console.log(`nonce ${solution.nonce} after ${solution.iterations} hashes`);

  const { result } = await client.submitWork(work, solution);
  console.log(
    `block ${result.block_hash.slice(0, 16)}... accepted at ${formatCoord(result.coord)}, ` +
      `depth ${result.depth}: reward ${result.reward} ${result.token}`,
  );
  const account = await client.miners.get();
  console.log(`balances: ${account.balances.map((b) => `${b.amount} ${b.token}`).join(', ')}`);
} finally {
  await client.close();
  await validator.close();
}
