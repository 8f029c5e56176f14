import type { ValidatorContext } from '../context.js';
import { applyGenesis, DEFAULT_GENESIS, type EconomyGenesis } from './economy/genesis.js';
import { marketHandlers } from './economy/market.js';
import { pruneStoredResults, replayStoredResult } from './economy/requests.js';
import { stakingHandlers } from './economy/staking.js';
import { swapHandlers } from './economy/swaps.js';
import { transferHandlers } from './economy/transfers.js';
import { vaultHandlers } from './economy/vaults.js';
import type { Service } from './types.js';

export { DEFAULT_GENESIS, type EconomyGenesis, readGenesisFile } from './economy/genesis.js';
export { STORED_OPERATIONS } from './economy/requests.js';

export interface EconomyService extends Service {
  /** Fastify preHandler answering retries of executed signed economy requests (requests.ts). */
  readonly replayHook: ReturnType<typeof replayStoredResult>;
  /** Stops the hourly pruning of stored request results. */
  close(): void;
}

/**
 * The economy: transfers and balances, staking, swaps, vaults, the marketplace. Writes the
 * genesis at the first start of a data directory. State lives in ctx.storage only.
 */
export async function createEconomyService(
  ctx: ValidatorContext,
  genesis: EconomyGenesis = DEFAULT_GENESIS,
): Promise<EconomyService> {
  await applyGenesis(ctx.storage, genesis, Math.floor(ctx.now() / 1000));
  const prune = () => {
    pruneStoredResults(ctx).catch((error: unknown) =>
      ctx.log.warn({ err: error }, 'could not prune stored economy request results'),
    );
  };
  prune();
  const pruner = setInterval(prune, 3_600_000);
  pruner.unref();
  return {
    close: () => clearInterval(pruner),
    handlers: {
      ...transferHandlers(),
      ...stakingHandlers(),
      ...swapHandlers(),
      ...vaultHandlers(),
      ...marketHandlers(),
    },
    replayHook: replayStoredResult(ctx),
  };
}
