import { existsSync } from 'node:fs';
import { type Signer, type TensormineClient, ValidatorError } from '@tensormine/client';
import type { Command } from 'commander';
import { withClient } from '../client.js';
import { CliError } from '../errors.js';
import { loadSigner } from '../key-file.js';
import { addSettings, type CommandContext, loadSettings } from '../program.js';

/**
 * What the economy commands (wallet, transfer, stake, swap, vault, orders) share: the
 * validators and the key of the settings, one client, and errors that say what to do.
 */

/** Adds --url, --key, --config and --json to an economy command. */
export function economyOptions(command: Command): Command {
  command.option('--json', 'machine-readable output');
  return addSettings(command, ['urls', 'key']);
}

/**
 * Runs `fn` with a client of the command's validators, signed by the key when `signed`
 * (a missing key file is then an error), or with the key's public key when there is one.
 */
export async function withEconomy<T>(
  cmd: Command,
  ctx: CommandContext,
  signed: boolean,
  fn: (client: TensormineClient, signer: Signer | undefined) => Promise<T>,
): Promise<T> {
  const { settings } = loadSettings(cmd, ctx.io);
  const signer = signed || existsSync(settings.key) ? await loadSigner(settings.key) : undefined;
  try {
    return await withClient(settings, signer, (client) => fn(client, signer));
  } catch (error) {
    throw explain(error);
  }
}

/** Adds what to do next to the economy's refusals (the validator's message says what happened). */
function explain(error: unknown): unknown {
  if (!(error instanceof ValidatorError)) return error;
  const hints: Record<string, string> = {
    insufficient_balance: '"miner wallet" shows what is available, staked, in vaults and in orders',
    slippage_exceeded: 'quote again with "miner swap quote", or lower --min-received',
    stake_not_found: '"miner wallet" lists your open stake positions',
    vault_not_found: '"miner vault list" lists your vaults',
    vault_locked: 'withdraw at or after unlock_at ("miner vault list")',
    order_not_found: '"miner orders list --mine" lists your open orders',
    swap_pool_not_found: '"miner swap pools" lists the pools',
  };
  const hint = hints[error.code];
  return new CliError(
    'failure',
    `${error.endpoint ?? 'the validator'} answered ${error.status} ${error.code}: ${error.serverMessage}`,
    hint ? [hint] : [],
    { cause: error },
  );
}

/**
 * A vault unlock time: Unix seconds, an ISO date (2027-01-31 or 2027-01-31T12:00:00Z), or a
 * duration from now such as 90m, 12h, 30d.
 */
export function parseUnlockAt(text: string, nowMs: number): number {
  const duration = /^(\d+)([smhd])$/.exec(text);
  if (duration) {
    const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[duration[2] as 's' | 'm' | 'h' | 'd'];
    return Math.floor(nowMs / 1000) + Number(duration[1]) * unit;
  }
  if (/^\d{9,12}$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && Number.isFinite(date)) return Math.floor(date / 1000);
  throw new CliError(
    'usage',
    `--unlock: expected Unix seconds, an ISO date (2027-01-31) or a duration (90m, 12h, 30d), got ${JSON.stringify(text)}`,
  );
}

/** A whole-number option in [min, max]. */
export function intOption(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new CliError(
      'usage',
      `${name}: expected an integer in [${min}, ${max}], got ${JSON.stringify(text)}`,
    );
  }
  return Number(text);
}

/** Unix seconds as ISO 8601 UTC (the protocol's isoTime). */
export { isoTime } from '@tensormine/protocol';
