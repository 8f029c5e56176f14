import type { TensormineClient } from '@tensormine/client';
import { LEDGER_ENTRY_TYPES, type LedgerEntry, type Transfer } from '@tensormine/protocol';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { writeLine } from '../io.js';
import { type CommandContext, table, writeJson } from '../program.js';
import { economyOptions, intOption, isoTime, withEconomy } from './economy-shared.js';

/**
 * `miner wallet`: the key's balances per token (available, staked, in vaults, in orders), its
 * open stake positions and its latest ledger entries; `miner ledger` pages through the ledger; `miner transfer` sends tokens to another key.
 */
export function walletCommand(program: Command, ctx: CommandContext): void {
  const wallet = economyOptions(
    program
      .command('wallet')
      .description("the key's balances per token, open stake positions and latest ledger entries")
      .option('--pubkey <pubkey>', 'another key than the key file'),
  );
  wallet.action(async (options: { json?: boolean; pubkey?: string }, cmd: Command) => {
    const { io } = ctx;
    const view = await withEconomy(cmd, ctx, options.pubkey === undefined, async (client, signer) => {
      const pubkey = options.pubkey ?? signer!.publicKeyHex;
      const [balances, stakes, ledger] = await Promise.all([
        client.economy.balances(pubkey),
        client.economy.stakes(pubkey),
        client.economy.ledger({ pubkey, limit: 10 }),
      ]);
      const transfers = options.json ? new Map() : await transfersOf(client, ledger.entries);
      return {
        pubkey,
        balances: balances.balances,
        stakes: stakes.stakes,
        ledger: ledger.entries,
        transfers,
      };
    });
    if (options.json) {
      const { transfers: _, ...json } = view;
      writeJson(io, json);
      return;
    }
    writeLine(io.stdout, `wallet ${view.pubkey}`);
    for (const line of table([
      ['token', 'available', 'staked', 'in vaults', 'in orders', 'total'],
      ...view.balances.map((b) => [b.token, b.available, b.staked, b.in_vaults, b.in_orders, b.total]),
    ])) {
      writeLine(io.stdout, `  ${line}`);
    }
    if (view.stakes.length > 0) {
      writeLine(io.stdout, 'stakes');
      for (const line of table(
        view.stakes.map((s) => [
          s.stake_id,
          `${s.amount} ${s.token}`,
          `${s.lock_period_days}d @ ${(s.yield_rate * 100).toFixed(2)}%`,
          `unlocks ${isoTime(s.lock_expiry)}`,
          `yield ${s.yield_earned} ${s.token}`,
        ]),
      )) {
        writeLine(io.stdout, `  ${line}`);
      }
    }
    writeLine(io.stdout, view.ledger.length > 0 ? 'latest entries' : 'no ledger entries yet');
    for (const line of ledgerRows(view.ledger, view.transfers, view.pubkey))
      writeLine(io.stdout, `  ${line}`);
  });

  const ledger = economyOptions(
    program
      .command('ledger')
      .description("a page of the key's ledger entries, newest first")
      .option('--pubkey <pubkey>', 'another key than the key file')
      .option('--type <type>', `only entries of this type (${LEDGER_ENTRY_TYPES.join(', ')})`)
      .option('--token <token>', 'only entries in this token')
      .option('--limit <n>', 'entries per page, 1..500', '20')
      .option('--cursor <cursor>', 'the next_cursor of the previous page'),
  );
  ledger.action(
    async (
      options: {
        json?: boolean;
        pubkey?: string;
        type?: string;
        token?: string;
        limit: string;
        cursor?: string;
      },
      cmd: Command,
    ) => {
      const { io } = ctx;
      const type = options.type;
      if (type !== undefined && !(LEDGER_ENTRY_TYPES as readonly string[]).includes(type)) {
        throw new CliError(
          'usage',
          `--type: expected one of ${LEDGER_ENTRY_TYPES.join(', ')}, got ${JSON.stringify(type)}`,
        );
      }
      const limit = intOption('--limit', options.limit, 1, 500);
      const { page, transfers, pubkey } = await withEconomy(
        cmd,
        ctx,
        options.pubkey === undefined,
        async (client, signer) => {
          const pubkey = options.pubkey ?? signer!.publicKeyHex;
          const page = await client.economy.ledger({
            pubkey,
            limit,
            ...(type !== undefined ? { type: type as (typeof LEDGER_ENTRY_TYPES)[number] } : {}),
            ...(options.token !== undefined ? { token: options.token } : {}),
            ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
          });
          const transfers = options.json ? new Map() : await transfersOf(client, page.entries);
          return { page, transfers, pubkey };
        },
      );
      if (options.json) {
        writeJson(io, page);
        return;
      }
      if (page.entries.length === 0) writeLine(io.stdout, 'no ledger entries');
      for (const line of ledgerRows(page.entries, transfers, pubkey)) writeLine(io.stdout, line);
      if (page.next_cursor) writeLine(io.stdout, `more: --cursor ${page.next_cursor}`);
    },
  );

  const transfer = economyOptions(
    program
      .command('transfer')
      .description('send tokens from the key to another key (signed)')
      .argument('<to>', 'the receiving public key (64 hex digits)')
      .argument('<amount>', 'the amount, in whole tokens (e.g. 12.5)')
      .argument('<token>', 'PTM, SOL or USDC')
      .option('--memo <text>', 'a note for the receiver (at most 64 printable ASCII characters)'),
  );
  transfer.action(
    async (
      to: string,
      amount: string,
      token: string,
      options: { json?: boolean; memo?: string },
      cmd: Command,
    ) => {
      const { io } = ctx;
      if (!/^[0-9a-f]{64}$/.test(to)) {
        throw new CliError(
          'usage',
          `<to>: expected the receiving public key, 64 lowercase hex digits (as "miner keys show" prints it), got ${to.length > 80 ? `${to.length} characters` : JSON.stringify(to)}`,
        );
      }
      const t = await withEconomy(cmd, ctx, true, (client) =>
        client.economy.transfer({
          to,
          amount,
          token,
          ...(options.memo !== undefined ? { memo: options.memo } : {}),
        }),
      );
      if (options.json) {
        writeJson(io, t);
        return;
      }
      writeLine(
        io.stdout,
        `sent ${t.amount} ${t.token} to ${t.to} (transfer ${t.transfer_id}${t.memo ? `, memo ${JSON.stringify(t.memo)}` : ''})`,
      );
    },
  );
}

/** The transfers behind the transfer entries of a page (who paid whom, the memo), by id. */
async function transfersOf(
  client: TensormineClient,
  entries: readonly LedgerEntry[],
): Promise<Map<string, Transfer>> {
  const ids = [...new Set(entries.filter((e) => e.type === 'transfer' && e.ref).map((e) => e.ref as string))];
  const found = await Promise.all(ids.map((id) => client.economy.getTransfer(id).catch(() => undefined)));
  return new Map(found.filter((t): t is Transfer => t !== undefined).map((t) => [t.transfer_id, t]));
}

function ledgerRows(
  entries: readonly LedgerEntry[],
  transfers: ReadonlyMap<string, Transfer>,
  pubkey: string,
): string[] {
  return table(
    entries.map((e) => {
      const t = e.type === 'transfer' && e.ref ? transfers.get(e.ref) : undefined;
      const other = t
        ? t.from === pubkey
          ? `to ${t.to.slice(0, 12)}…`
          : `from ${t.from.slice(0, 12)}…`
        : '';
      return [
        isoTime(e.timestamp),
        e.type,
        `${e.amount.startsWith('-') ? '' : '+'}${e.amount} ${e.token}`,
        e.ref ?? '',
        t?.memo ? `${other} ${JSON.stringify(t.memo)}` : other,
      ];
    }),
  );
}
