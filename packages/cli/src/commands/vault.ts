import { VAULT_MAX_HORIZON_S } from '@tensormine/protocol';
import type { Command } from 'commander';
import { writeLine } from '../io.js';
import { type CommandContext, table, writeJson } from '../program.js';
import { economyOptions, isoTime, parseUnlockAt, withEconomy } from './economy-shared.js';

/** `miner vault deposit|withdraw|list` (docs/economy.md, vaults). */
export function vaultCommand(program: Command, ctx: CommandContext): void {
  const vault = program.command('vault').description('time-locked vaults');

  const deposit = economyOptions(
    vault
      .command('deposit')
      .description('lock tokens until a time (signed)')
      .argument('<amount>', 'the amount, in whole tokens')
      .argument('<token>', 'PTM, SOL or USDC')
      .requiredOption(
        '--unlock <when>',
        `when it may be withdrawn: Unix seconds, an ISO date (2027-01-31) or a duration (90m, 12h, 30d); at most ${VAULT_MAX_HORIZON_S / 86_400} days ahead`,
      ),
  );
  deposit.action(
    async (amount: string, token: string, options: { json?: boolean; unlock: string }, cmd: Command) => {
      const unlockAt = parseUnlockAt(options.unlock, Date.now());
      const v = await withEconomy(cmd, ctx, true, (client) =>
        client.economy.vaultDeposit({ token, amount, unlock_at: unlockAt }),
      );
      if (options.json) return writeJson(ctx.io, v);
      writeLine(
        ctx.io.stdout,
        `locked ${v.amount} ${v.token} in ${v.vault_id} until ${isoTime(v.unlock_at)}`,
      );
    },
  );

  const withdraw = economyOptions(
    vault
      .command('withdraw')
      .description('withdraw a vault at or after its unlock time (signed)')
      .argument('<vault_id>', 'the vault (miner vault list)'),
  );
  withdraw.action(async (vaultId: string, options: { json?: boolean }, cmd: Command) => {
    const v = await withEconomy(cmd, ctx, true, (client) =>
      client.economy.vaultWithdraw({ vault_id: vaultId }),
    );
    if (options.json) return writeJson(ctx.io, v);
    writeLine(ctx.io.stdout, `withdrew ${v.amount} ${v.token} from ${v.vault_id}`);
  });

  const list = economyOptions(
    vault
      .command('list')
      .description("the key's vaults")
      .option('--pubkey <pubkey>', 'another key than the key file'),
  );
  list.action(async (options: { json?: boolean; pubkey?: string }, cmd: Command) => {
    const r = await withEconomy(cmd, ctx, options.pubkey === undefined, (client, signer) =>
      client.economy.vaults(options.pubkey ?? signer!.publicKeyHex),
    );
    if (options.json) return writeJson(ctx.io, r);
    if (r.vaults.length === 0) return writeLine(ctx.io.stdout, 'no vaults');
    const now = Math.floor(Date.now() / 1000);
    for (const line of table(
      r.vaults.map((v) => [
        v.vault_id,
        `${v.amount} ${v.token}`,
        `unlock ${isoTime(v.unlock_at)}`,
        v.withdrawn
          ? `withdrawn ${isoTime(v.withdrawn_at ?? v.unlock_at)}`
          : v.unlock_at <= now
            ? 'unlocked'
            : 'locked',
      ]),
    )) {
      writeLine(ctx.io.stdout, line);
    }
  });
}
