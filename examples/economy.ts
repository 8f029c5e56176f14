/**
 * The economy with the client: a validator in process whose genesis gives Alice 100 USDC; she
 * quotes a swap locally with the protocol's own rule and on the validator (the same number),
 * swaps, sends some PTM to Bob, stakes the rest for 7 days and prints her balances.
 *
 *   npx tsx --conditions=@tensormine/source examples/economy.ts
 */
import { createClient, Signer } from '@tensormine/client';
import { formatAmount, parseAmount, swapOut } from '@tensormine/protocol';
import { createValidator } from '@tensormine/validator';

const alice = Signer.generate();
const bob = Signer.generate();
const validator = await createValidator({
  dataDir: ':memory:',
  logger: false,
  genesis: {
    reserve: '1000',
    pools: [{ base: 'PTM', quote: 'USDC', base_reserve: '1000000', quote_reserve: '50000', fee_bps: 30 }],
    allocations: [{ pubkey: alice.publicKeyHex, token: 'USDC', amount: '100' }],
  },
});
const url = await validator.listen({ host: '127.0.0.1', port: 0 });
const client = createClient({ url, signer: alice });

try {
  // The same rule the validator applies, computed here before asking.
  const local = swapOut(
    parseAmount('50000', 'USDC'),
    parseAmount('1000000', 'PTM'),
    parseAmount('40', 'USDC'),
    30n,
  );
  const quote = await client.economy.swapQuote({ from_token: 'USDC', to_token: 'PTM', amount: '40' });
  if (quote.to_amount !== formatAmount(local.amountOut, 'PTM')) throw new Error('the local quote differs');
  console.log(
    `quote: 40 USDC -> ${quote.to_amount} PTM (impact ${(quote.slippage * 100).toFixed(3)} %, fee ${quote.fee} USDC)`,
  );

  const swap = await client.economy.swapExecute({
    from_token: 'USDC',
    to_token: 'PTM',
    amount: '40',
    min_received: quote.to_amount,
  });
  const sent = await client.economy.transfer({
    to: bob.publicKeyHex,
    token: 'PTM',
    amount: '100',
    memo: 'thanks',
  });
  const stake = await client.economy.stake({ amount: '500', lock_period_days: 7 });
  console.log(
    `swapped: ${swap.to_amount} PTM; sent ${sent.amount} PTM (${sent.transfer_id}); staked ${stake.amount} PTM at ${stake.yield_rate * 100} %`,
  );

  const { balances } = await client.economy.balances();
  for (const b of balances)
    console.log(`${b.token}: ${b.available} available, ${b.staked} staked, total ${b.total}`);
} finally {
  await client.close();
  await validator.close();
}
