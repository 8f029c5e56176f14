import { describe, expect, it } from 'vitest';
import { Signer, ValidatorError } from '../src/index.js';
import { client, startValidator } from './helpers.js';

/** The economy methods against the real validator, in process on port 0. */

describe('transfers', () => {
  it('sends a transfer, reads it back by id, and shows both balances', async () => {
    const alice = Signer.generate();
    const bob = Signer.generate();
    const { url } = await startValidator({
      genesis: {
        reserve: '0',
        pools: [],
        allocations: [{ pubkey: alice.publicKeyHex, token: 'USDC', amount: '25' }],
      },
    });
    const c = client({ url, signer: alice });
    const sent = await c.economy.transfer({
      to: bob.publicKeyHex,
      token: 'USDC',
      amount: '7.25',
      memo: 'coffee',
    });
    expect(sent).toMatchObject({
      from: alice.publicKeyHex,
      to: bob.publicKeyHex,
      token: 'USDC',
      amount: '7.25',
      memo: 'coffee',
    });
    expect(await c.economy.getTransfer(sent.transfer_id)).toEqual(sent);
    const mine = await c.economy.balances();
    expect(mine.balances.find((b) => b.token === 'USDC')).toMatchObject({ available: '17.75' });
    const theirs = await c.economy.balances(bob.publicKeyHex);
    expect(theirs.balances.find((b) => b.token === 'USDC')).toMatchObject({ available: '7.25' });

    const overdraft = await c.economy
      .transfer({ to: bob.publicKeyHex, token: 'USDC', amount: '100' })
      .catch((error: unknown) => error);
    expect(overdraft).toBeInstanceOf(ValidatorError);
    expect(overdraft).toMatchObject({ code: 'insufficient_balance', status: 409 });
    await expect(c.economy.getTransfer('t-unknown')).rejects.toMatchObject({ code: 'transfer_not_found' });
  });
});
