import { nowSeconds, type ValidatorContext } from '../../context.js';
import { HEX_DIFFICULTY_META_KEY, HEX_DIFFICULTY_WRITES_COUNTER, LiveDifficulty } from './difficulty.js';
import { LatticeState } from './lattice-state.js';

/** Meta key of the genesis time t[0] in Unix ms: the first start of this database. */
export const HEX_GENESIS_TIME_META_KEY = 'hexchain.genesis_time_ms';

/** The hexchain as the storage holds it at start. */
export interface LoadedHexchain {
  /** Every committed block and the open challenges. */
  readonly state: LatticeState;
  readonly difficulty: LiveDifficulty;
  /** t[0], the window start of the first retarget (written at the first start). */
  readonly genesisTimeMs: bigint;
}

/**
 * Start-up: reads the stored blocks, the open challenges and the live difficulty into memory,
 * and writes the genesis time at the first start of a database.
 */
export async function loadHexchain(ctx: ValidatorContext): Promise<LoadedHexchain> {
  const state = new LatticeState();
  const { stored, storedSeq, blocks, genesisTimeMs, openExpiries } = await ctx.storage.transaction(
    async (tx) => {
      let genesis = await tx.meta.get(HEX_GENESIS_TIME_META_KEY);
      if (genesis === undefined) {
        genesis = String(ctx.now());
        await tx.meta.set(HEX_GENESIS_TIME_META_KEY, genesis);
      }
      return {
        stored: await tx.meta.get(HEX_DIFFICULTY_META_KEY),
        storedSeq: await tx.counters.get(HEX_DIFFICULTY_WRITES_COUNTER),
        blocks: await tx.blocks.all(),
        genesisTimeMs: BigInt(genesis),
        openExpiries: await tx.hexChallenges.openExpiries(nowSeconds(ctx)),
      };
    },
  );
  const difficulty = new LiveDifficulty(ctx.config.hexDifficulty, state, stored, storedSeq);
  for (const block of blocks) state.add(block);
  for (const expiresAt of openExpiries) state.addOpenChallenge(expiresAt);
  return { state, difficulty, genesisTimeMs };
}
