/**
 * Failover: one client, two validators. The first stops; the client moves to the second and
 * says so, keeps mining there, and moves back when the first returns.
 *
 *   npx tsx --conditions=@tensormine/source examples/failover.ts
 */
import { createClient, Signer, solveWork } from '@tensormine/client';
import { createValidator } from '@tensormine/validator';

const options = { dataDir: ':memory:', difficulty: 2, hexDifficulty: 256n, logger: false } as const;
const primary = await createValidator(options);
const backup = await createValidator(options);
const primaryUrl = await primary.listen({ host: '127.0.0.1', port: 0 });
const backupUrl = await backup.listen({ host: '127.0.0.1', port: 0 });
let restarted: Awaited<ReturnType<typeof createValidator>> | undefined;

const signer = Signer.generate();
const client = createClient({ urls: [primaryUrl, backupUrl], signer });
client.on('failover', (e) =>
  console.log(`  [failover] ${e.from} -> ${e.to} (${e.reason}: ${e.error.shortMessage})`),
);
client.on('recovered', (e) => console.log(`  [recovered] ${e.endpoint} is back; requests go to ${e.active}`));
client.on('retry', (e) =>
  console.log(`  [retry] ${e.operationId} on ${e.nextEndpoint} after ${e.delayMs} ms`),
);

try {
  // Each validator has its own database: register the key with both.
  await client.miners.register({}, { endpoint: primaryUrl });
  await client.miners.register({}, { endpoint: backupUrl });
  console.log(`requests go to ${client.endpoints().find((e) => e.active)?.url} (primary)`);

  console.log('stopping the primary');
  await primary.close();
  const health = await client.node.health();
  console.log(`health answered by ${health.node_id} at ${client.endpoints().find((e) => e.active)?.url}`);

  const work = await client.getWork();
  const solution = solveWork(work, signer);
  if (solution === undefined) throw new Error('the nonce space ran out');
  const submitted = await client.submitWork(work, solution);
  const what =
    submitted.version === '4.1'
      ? `a block at depth ${submitted.result.depth}`
      : `a proof (${submitted.result.reward} PTM)`;
  console.log(`mined ${what} on ${submitted.endpoint}`);

  console.log('starting the primary again on its address');
  restarted = await createValidator(options);
  await restarted.listen({ host: '127.0.0.1', port: Number(new URL(primaryUrl).port) });
  await client.probe(); // the periodic probe (every 15 s by default) would find it too
  console.log(`requests go to ${client.endpoints().find((e) => e.active)?.url} again`);
} finally {
  await client.close();
  await backup.close();
  await restarted?.close();
  await primary.close();
}
