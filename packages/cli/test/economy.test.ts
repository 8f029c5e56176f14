import { join } from 'node:path';
import { Signer } from '@tensormine/client';
import { describe, expect, test } from 'vitest';
import { runCli, tempHome, testValidator } from './helpers.js';

async function wallet() {
  const { env, dir } = await tempHome();
  const key = join(dir, 'k.key');
  const signer = Signer.generate();
  await signer.save(key);
  const { url } = await testValidator({
    genesis: {
      reserve: '1000',
      pools: [{ base: 'PTM', quote: 'USDC', base_reserve: '100000', quote_reserve: '5000', fee_bps: 30 }],
      allocations: [
        { pubkey: signer.publicKeyHex, token: 'PTM', amount: '500' },
        { pubkey: signer.publicKeyHex, token: 'USDC', amount: '20' },
      ],
    },
  });
  const cli = (args: string[]) => runCli([...args, '--url', url, '--key', key], env);
  return { cli, signer };
}

describe('economy commands', () => {
  test('wallet shows balances, transfer sends, and an overdraft says what is available', async () => {
    const { cli, signer } = await wallet();
    const shown = await cli(['wallet']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`wallet ${signer.publicKeyHex}`);
    expect(shown.stdout).toMatch(/PTM\s+500\s+0\s+0\s+0\s+500/);
    expect(shown.stdout).toMatch(/genesis\s+\+500 PTM/);

    const bob = Signer.generate().publicKeyHex;
    const sent = await cli(['transfer', bob, '2.5', 'USDC', '--memo', 'thanks']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(
      new RegExp(`^sent 2.5 USDC to ${bob} \\(transfer t-[0-9a-f]{32}, memo "thanks"\\)\\n$`),
    );
    // The memo and the other side, in the wallet's and the ledger's rows.
    expect((await cli(['ledger', '--type', 'transfer'])).stdout).toMatch(
      new RegExp(`transfer\\s+-2\\.5 USDC\\s+t-[0-9a-f]{32}\\s+to ${bob.slice(0, 12)}… "thanks"\\n$`),
    );
    expect((await cli(['wallet'])).stdout).toContain(`to ${bob.slice(0, 12)}… "thanks"`);
    // A bad argument is said in the command's words, not the request schema's.
    const typo = await cli(['transfer', 'bob', '1', 'USDC']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      'miner: <to>: expected the receiving public key, 64 lowercase hex digits (as "miner keys show" prints it), got "bob"\n',
    );
    const memo = await cli(['transfer', bob, '1', 'USDC', '--memo', 'ünïcode']);
    expect(memo.code).toBe(2);
    expect(memo.stderr).toMatch(/^miner: memo: /);
    expect(memo.stderr).not.toMatch(/body\.|\(and \d+ more\)/);

    const over = await cli(['transfer', bob, '100', 'USDC']);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain(
      'insufficient_balance: insufficient USDC: your balance holds 17.5 USDC, 100 USDC required',
    );
    expect(over.stderr).toContain('miner wallet');

    const json = await cli(['ledger', '--type', 'transfer', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).entries).toMatchObject([
      { type: 'transfer', amount: '-2.5', token: 'USDC' },
    ]);
  });

  test('stake, claim and unstake; swap quote and execute; vault deposit and list; orders place, list and cancel', async () => {
    const { cli } = await wallet();
    const staked = await cli(['stake', '100', '--lock', '7', '--json']);
    expect(staked.code, staked.stderr).toBe(0);
    const stake = JSON.parse(staked.stdout);
    expect(stake).toMatchObject({ amount: '100', lock_period_days: 7, yield_rate: 0.06 });
    expect((await cli(['claim', stake.stake_id])).stdout).toMatch(/^claimed [0-9.]+ PTM from s-1\n$/);
    const unstaked = await cli(['unstake', stake.stake_id]);
    expect(unstaked.stdout).toMatch(
      /^unstaked s-1: 99 PTM returned, yield [0-9.]+ PTM, early-unstake penalty 1 PTM\n$/,
    );

    const quote = await cli(['swap', 'quote', '10', 'PTM', 'USDC']);
    expect(quote.code, quote.stderr).toBe(0);
    expect(quote.stdout).toMatch(
      /^10 PTM -> 0\.\d+ USDC \(price 0\.\d+ USDC\/PTM, impact 0\.\d+%, fee 0\.03 PTM\)\n$/,
    );
    const swapped = await cli(['swap', 'execute', '10', 'PTM', 'USDC']);
    expect(swapped.code, swapped.stderr).toBe(0);
    expect(swapped.stdout).toMatch(/^swapped 10 PTM for 0\.\d+ USDC \(fee 0\.03 PTM, swap x-1\)\n$/);
    const refused = await cli(['swap', 'execute', '10', 'PTM', 'USDC', '--min-received', '1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('slippage_exceeded');

    const locked = await cli(['vault', 'deposit', '5', 'PTM', '--unlock', '1h']);
    expect(locked.stdout).toMatch(/^locked 5 PTM in v-1 until \d{4}-/);
    expect((await cli(['vault', 'list'])).stdout).toMatch(/^v-1\s+5 PTM\s+unlock \S+\s+locked\n$/);
    const early = await cli(['vault', 'withdraw', 'v-1']);
    expect(early.stderr).toContain('vault_locked');
    // When it unlocks, as a date and a span, not a raw Unix time.
    expect(early.stderr).toMatch(
      /vault v-1 unlocks at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, in (59m \d\ds|1h 00m); withdraw at or after it/,
    );

    const placed = await cli(['orders', 'place', 'sell', '10', 'PTM', '--price', '0.07']);
    expect(placed.stdout).toBe('order o-1 open: 0 of 10 PTM filled in 0 fills\n');
    expect((await cli(['orders', 'list', '--mine'])).stdout).toMatch(
      /^o-1\s+sell\s+10 of 10 PTM\s+at 0\.07 USDC\s+open/,
    );
    const cancelled = await cli(['orders', 'cancel', 'o-1']);
    expect(cancelled.stdout).toBe('cancelled o-1 (0 filled before); 10 PTM returned\n');
    expect((await cli(['orders', 'list'])).stdout).toBe('no open orders\n');
  });
});
