import { LOCK_TERMS } from '@tensormine/protocol';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { writeLine } from '../io.js';
import { type CommandContext, writeJson } from '../program.js';
import { economyOptions, isoTime, withEconomy } from './economy-shared.js';

const LOCKS = Object.values(LOCK_TERMS)
  .map(
    (t) =>
      `${t.days} (${Number(t.yieldBps) / 100}% a year${t.penaltyBps > 0n ? `, ${Number(t.penaltyBps) / 100}% early-unstake penalty` : ''})`,
  )
  .join(', ');

/** `miner stake`, `miner unstake`, `miner claim` (docs/economy.md, staking). */
export function stakeCommands(program: Command, ctx: CommandContext): void {
  const stake = economyOptions(
    program
      .command('stake')
      .description('stake PTM for a lock period (signed)')
      .argument('<amount>', 'PTM to stake, in whole tokens')
      .option('--lock <days>', `the lock period in days: ${LOCKS}`, '0'),
  );
  stake.action(async (amount: string, options: { json?: boolean; lock: string }, cmd: Command) => {
    const lock = Number(options.lock);
    if (lock !== 0 && lock !== 7 && lock !== 30) {
      throw new CliError('usage', `--lock: expected 0, 7 or 30, got ${JSON.stringify(options.lock)}`);
    }
    const s = await withEconomy(cmd, ctx, true, (client) =>
      client.economy.stake({ amount, lock_period_days: lock }),
    );
    if (options.json) return writeJson(ctx.io, s);
    writeLine(
      ctx.io.stdout,
      `staked ${s.amount} ${s.token} as ${s.stake_id}: ${(s.yield_rate * 100).toFixed(2)}% a year, ` +
        (s.lock_period_days === 0 ? 'flexible (no lock)' : `locked until ${isoTime(s.lock_expiry)}`),
    );
  });

  const unstake = economyOptions(
    program
      .command('unstake')
      .description(
        'close a stake position: principal and unclaimed yield back (a penalty before lock expiry)',
      )
      .argument('<stake_id>', 'the position (miner wallet lists them)'),
  );
  unstake.action(async (stakeId: string, options: { json?: boolean }, cmd: Command) => {
    const r = await withEconomy(cmd, ctx, true, (client) => client.economy.unstake({ stake_id: stakeId }));
    if (options.json) return writeJson(ctx.io, r);
    writeLine(
      ctx.io.stdout,
      `unstaked ${r.stake_id}: ${r.returned} ${r.token} returned, yield ${r.yield_paid} ${r.token}` +
        (r.penalty !== '0' ? `, early-unstake penalty ${r.penalty} ${r.token}` : ''),
    );
  });

  const claim = economyOptions(
    program
      .command('claim')
      .description('harvest the yield of a stake position')
      .argument('<stake_id>', 'the position (miner wallet lists them)'),
  );
  claim.action(async (stakeId: string, options: { json?: boolean }, cmd: Command) => {
    const r = await withEconomy(cmd, ctx, true, (client) => client.economy.claim({ stake_id: stakeId }));
    if (options.json) return writeJson(ctx.io, r);
    writeLine(ctx.io.stdout, `claimed ${r.claimed} ${r.token} from ${r.stake_id}`);
  });
}
