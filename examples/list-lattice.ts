/**
 * Mines a few v4.1 blocks, then reads the lattice back with the client: the status, every
 * block page by page (limit and next_cursor), and one block by its coordinate.
 *
 *   npx tsx --conditions=@tensormine/source examples/list-lattice.ts
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
const signer = Signer.generate();
const client = createClient({ url, signer });

try {
  await client.miners.register();
  for (let i = 0; i < 5; i++) {
    const work = await client.getWork();
    const solution = solveWork(work, signer);
    if (solution === undefined) throw new Error('the nonce space ran out');
    await client.submitWork(work, solution);
  }

  const status = await client.hexchain.status();
  console.log(
    `lattice: ${status.occupied} cells occupied (genesis included), max depth ${status.max_depth}, ` +
      `frontier ${status.frontier_size}, ${status.blocks_until_retarget} blocks until the next retarget`,
  );
  console.log(`depths: ${status.depth_distribution.map((d) => `${d.depth}:${d.count}`).join(' ')}`);

  let cursor: string | undefined;
  let page = 0;
  do {
    const result = await client.hexchain.lattice({ limit: 2, ...(cursor === undefined ? {} : { cursor }) });
    page++;
    for (const block of result.blocks) {
      console.log(
        `  page ${page}: ${formatCoord(block.coord).padEnd(16)} depth ${block.depth} ` +
          `parents ${block.parents.length} ${block.block_hash.slice(0, 16)}...`,
      );
    }
    cursor = result.next_cursor ?? undefined;
  } while (cursor !== undefined);

  const first = (await client.hexchain.lattice({ limit: 1 })).blocks[0];
  if (first === undefined) throw new Error('no block in the lattice');
  const block = await client.hexchain.block(first.coord);
  console.log(
    `block at ${formatCoord(block.coord)}: nonce ${block.nonce}, mined by ${block.miner_pubkey.slice(0, 16)}...`,
  );
} finally {
  await client.close();
  await validator.close();
}
