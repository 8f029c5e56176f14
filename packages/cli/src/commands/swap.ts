import type { Command } from 'commander';
import { writeLine } from '../io.js';
import { type CommandContext, table, writeJson } from '../program.js';
import { economyOptions, withEconomy } from './economy-shared.js';

/** `miner swap quote|execute|pools` (docs/economy.md, swaps). */
export function swapCommand(program: Command, ctx: CommandContext): void {
  const swap = program.command('swap').description('constant-product token swaps');

  const quote = economyOptions(
    swap
      .command('quote')
      .description('what a swap would yield now (reserves nothing)')
      .argument('<amount>', 'the amount of <from> to give')
      .argument('<from>', 'the token given')
      .argument('<to>', 'the token received'),
  );
  quote.action(
    async (amount: string, from: string, to: string, options: { json?: boolean }, cmd: Command) => {
      const q = await withEconomy(cmd, ctx, false, (client) =>
        client.economy.swapQuote({ from_token: from, to_token: to, amount }),
      );
      if (options.json) return writeJson(ctx.io, q);
      writeLine(
        ctx.io.stdout,
        `${q.from_amount} ${q.from_token} -> ${q.to_amount} ${q.to_token} (price ${q.price_decimal} ${q.to_token}/${q.from_token}, impact ${(q.slippage * 100).toFixed(3)}%, fee ${q.fee} ${q.fee_token})`,
      );
    },
  );

  const execute = economyOptions(
    swap
      .command('execute')
      .description('swap now (signed); fails and moves nothing if the output would be below --min-received')
      .argument('<amount>', 'the amount of <from> to give')
      .argument('<from>', 'the token given')
      .argument('<to>', 'the token received')
      .option('--min-received <amount>', 'the smallest acceptable output (default: the quote now, less 1%)'),
  );
  execute.action(
    async (
      amount: string,
      from: string,
      to: string,
      options: { json?: boolean; minReceived?: string },
      cmd: Command,
    ) => {
      const r = await withEconomy(cmd, ctx, true, async (client) => {
        let minReceived = options.minReceived;
        if (minReceived === undefined) {
          const q = await client.economy.swapQuote({ from_token: from, to_token: to, amount });
          minReceived = lessOnePercent(q.to_amount);
        }
        return client.economy.swapExecute({
          from_token: from,
          to_token: to,
          amount,
          min_received: minReceived,
        });
      });
      if (options.json) return writeJson(ctx.io, r);
      writeLine(
        ctx.io.stdout,
        `swapped ${r.from_amount} ${r.from_token} for ${r.to_amount} ${r.to_token} (fee ${r.fee} ${r.fee_token}, swap ${r.swap_id})`,
      );
    },
  );

  const pools = economyOptions(swap.command('pools').description('the liquidity pools'));
  pools.action(async (options: { json?: boolean }, cmd: Command) => {
    const r = await withEconomy(cmd, ctx, false, (client) => client.economy.swapPools());
    if (options.json) return writeJson(ctx.io, r);
    for (const line of table([
      ['pair', 'reserves', 'liquidity', 'volume 24h', 'fee'],
      ...r.pools.map((p) => {
        const quoteToken = p.pair.split('/')[1];
        return [
          p.pair,
          p.reserves.map((x) => `${x.amount} ${x.token}`).join(' + '),
          `${p.liquidity} ${quoteToken}`,
          `${p.volume_24h} ${quoteToken}`,
          `${(p.fee_rate * 100).toFixed(2)}%`,
        ];
      }),
    ])) {
      writeLine(ctx.io.stdout, line);
    }
  });
}

/** 99 % of a decimal amount, rounded down at its own precision (exact string arithmetic). */
function lessOnePercent(amount: string): string {
  const [whole, fraction = ''] = amount.split('.');
  const units = BigInt(whole + fraction);
  const reduced = (units * 99n) / 100n;
  if (fraction.length === 0) return reduced.toString();
  const digits = reduced.toString().padStart(fraction.length + 1, '0');
  return (
    `${digits.slice(0, -fraction.length)}.${digits.slice(-fraction.length)}`.replace(/\.?0+$/, '') || '0'
  );
}
