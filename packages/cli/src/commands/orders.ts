import { MARKET_QUOTE_TOKEN } from '@tensormine/protocol';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { writeLine } from '../io.js';
import { type CommandContext, table, writeJson } from '../program.js';
import { economyOptions, intOption, withEconomy } from './economy-shared.js';

/** `miner orders place|cancel|list`: marketplace limit orders priced in USDC (docs/economy.md). */
export function ordersCommand(program: Command, ctx: CommandContext): void {
  const orders = program
    .command('orders')
    .description(`marketplace limit orders, priced in ${MARKET_QUOTE_TOKEN}`);

  const place = economyOptions(
    orders
      .command('place')
      .description('place a limit order (signed); it matches resting orders at once, the rest rests')
      .argument('<side>', 'buy or sell')
      .argument('<amount>', 'the amount of <token>, in whole tokens')
      .argument('<token>', 'PTM or SOL')
      .requiredOption('--price <price>', `the limit price in ${MARKET_QUOTE_TOKEN} per whole token`),
  );
  place.action(
    async (
      side: string,
      amount: string,
      token: string,
      options: { json?: boolean; price: string },
      cmd: Command,
    ) => {
      if (side !== 'buy' && side !== 'sell') {
        throw new CliError('usage', `<side>: expected buy or sell, got ${JSON.stringify(side)}`);
      }
      const r = await withEconomy(cmd, ctx, true, (client) =>
        client.economy.placeOrder({ type: side, token, amount, price: options.price }),
      );
      if (options.json) return writeJson(ctx.io, r);
      writeLine(
        ctx.io.stdout,
        `order ${r.order_id} ${r.status}: ${r.filled_amount} of ${amount} ${token} filled in ${r.fills.length} fill${r.fills.length === 1 ? '' : 's'}`,
      );
      for (const f of r.fills) {
        writeLine(
          ctx.io.stdout,
          `  ${f.amount} ${token} at ${f.price} ${MARKET_QUOTE_TOKEN} (against ${f.counter_order_id})`,
        );
      }
    },
  );

  const cancel = economyOptions(
    orders
      .command('cancel')
      .description('cancel one of your resting orders (signed); the unfilled escrow comes back')
      .argument('<order_id>', 'the order (miner orders list --mine)'),
  );
  cancel.action(async (orderId: string, options: { json?: boolean }, cmd: Command) => {
    const r = await withEconomy(cmd, ctx, true, (client) =>
      client.economy.cancelOrder({ order_id: orderId }),
    );
    if (options.json) return writeJson(ctx.io, r);
    writeLine(
      ctx.io.stdout,
      `cancelled ${r.order_id} (${r.filled} filled before); ${r.returned.amount} ${r.returned.token} returned`,
    );
  });

  const list = economyOptions(
    orders
      .command('list')
      .description('open orders of the book, oldest first, with what remains of each')
      .option('--mine', "only the key's orders")
      .option('--token <token>', 'only orders for this token')
      .option('--side <side>', 'only buy or only sell orders')
      .option('--limit <n>', 'orders per page, 1..500', '50')
      .option('--cursor <cursor>', 'the next_cursor of the previous page'),
  );
  list.action(
    async (
      options: {
        json?: boolean;
        mine?: boolean;
        token?: string;
        side?: string;
        limit: string;
        cursor?: string;
      },
      cmd: Command,
    ) => {
      const side = options.side;
      if (side !== undefined && side !== 'buy' && side !== 'sell') {
        throw new CliError('usage', `--side: expected buy or sell, got ${JSON.stringify(side)}`);
      }
      const limit = intOption('--limit', options.limit, 1, 500);
      const page = await withEconomy(cmd, ctx, options.mine === true, (client, signer) =>
        client.economy.orders({
          limit,
          ...(options.mine ? { pubkey: signer!.publicKeyHex } : {}),
          ...(options.token !== undefined ? { token: options.token } : {}),
          ...(side !== undefined ? { type: side } : {}),
          ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
        }),
      );
      if (options.json) return writeJson(ctx.io, page);
      if (page.orders.length === 0) writeLine(ctx.io.stdout, 'no open orders');
      for (const line of table(
        page.orders.map((o) => [
          o.id,
          o.type,
          `${o.remaining} of ${o.amount} ${o.token}`,
          `at ${o.price} ${o.quote_token}`,
          o.status,
          `${o.pubkey.slice(0, 12)}...`,
        ]),
      )) {
        writeLine(ctx.io.stdout, line);
      }
      if (page.next_cursor) writeLine(ctx.io.stdout, `more: --cursor ${page.next_cursor}`);
    },
  );
}
