/**
 * Testing your own code against a real validator, in process: no mocks of our server, no
 * network beyond loopback. Runs with `npm test` (the `examples` vitest project).
 */
import { createClient, Signer, solveWork, type TensormineClient, ValidatorError } from '@tensormine/client';
import { parseAmount } from '@tensormine/protocol';
import { createValidator, type Validator } from '@tensormine/validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// ---- "your own code": a bot that mines a number of blocks and reports what it earned ----------

async function mineBlocks(client: TensormineClient, signer: Signer, count: number): Promise<bigint> {
  let earned = 0n;
  for (let i = 0; i < count; i++) {
    const work = await client.getWork();
    const solution = solveWork(work, signer);
    if (solution === undefined) throw new Error('the nonce space ran out');
    const { result } = await client.submitWork(work, solution);
    earned += parseAmount(result.reward, result.token);
  }
  return earned;
}

// ---- its test ---------------------------------------------------------------------------------

describe('mineBlocks', () => {
  let validator: Validator;
  let client: TensormineClient;
  const signer = Signer.generate();

  beforeAll(async () => {
    validator = await createValidator({
      dataDir: ':memory:',
      difficulty: 2,
      hexDifficulty: 256n,
      logger: false,
    });
    const url = await validator.listen({ host: '127.0.0.1', port: 0 });
    client = createClient({ url, signer });
  });

  afterAll(async () => {
    await client.close();
    await validator.close();
  });

  it('is refused work until the key is registered', async () => {
    const error = await mineBlocks(client, signer, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidatorError);
    expect((error as ValidatorError).code).toBe('miner_not_registered');
  });

  it('earns 1 PTM per block, and the validator agrees', async () => {
    await client.miners.register();
    const earned = await mineBlocks(client, signer, 3);
    expect(earned).toBe(parseAmount('3', 'PTM'));
    const account = await client.miners.get();
    expect(account.blocks_accepted).toBe(3);
    expect(account.balances).toContainEqual({ token: 'PTM', amount: '3' });
    expect((await client.hexchain.status()).occupied).toBe(4); // genesis + 3
  });
});
