import { readFileSync } from 'node:fs';
import { getToken, parseAmount, RESERVE_ACCOUNT, swapPoolAccount, TOKEN_SYMBOLS } from '@tensormine/protocol';
import type { NewLedgerEntry, Storage } from '../../store/types.js';

/**
 * The genesis of the economy: the supply that exists before the first mining reward. Written
 * once, at the first start of a data directory, as `genesis` ledger entries (the only entries
 * besides mining rewards that create money), and never again: a later change of the
 * configuration does not touch an existing economy.
 */
export interface EconomyGenesis {
  /** PTM funding the staking yield reserve (`@reserve`). */
  readonly reserve: string;
  /** Constant-product pools and their initial reserves (whole tokens, decimal strings). */
  readonly pools: readonly {
    readonly base: string;
    readonly quote: string;
    readonly base_reserve: string;
    readonly quote_reserve: string;
    /** Fee in basis points of the input (30 = 0.3 %). */
    readonly fee_bps: number;
  }[];
  /** Initial balances of keys (a local network's faucet, a test's accounts). */
  readonly allocations?: readonly {
    readonly pubkey: string;
    readonly token: string;
    readonly amount: string;
  }[];
}

/** The default genesis: a 1 000 000 PTM reserve and three pools at PTM = 0.05 USDC, SOL = 100 USDC. */
export const DEFAULT_GENESIS: EconomyGenesis = Object.freeze({
  reserve: '1000000',
  pools: Object.freeze([
    { base: 'PTM', quote: 'USDC', base_reserve: '1000000', quote_reserve: '50000', fee_bps: 30 },
    { base: 'PTM', quote: 'SOL', base_reserve: '1000000', quote_reserve: '500', fee_bps: 30 },
    { base: 'SOL', quote: 'USDC', base_reserve: '1000', quote_reserve: '100000', fee_bps: 30 },
  ]),
  allocations: Object.freeze([]),
});

const GENESIS_META = 'economy.genesis';

/** Reads a genesis file (JSON); throws an Error saying what is wrong. */
export function readGenesisFile(path: string): EconomyGenesis {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`genesis file ${path}: ${(error as Error).message}`);
  }
  const g = parsed as Partial<EconomyGenesis> | null;
  if (
    typeof g !== 'object' ||
    g === null ||
    Array.isArray(g) ||
    (g.reserve !== undefined && typeof g.reserve !== 'string') ||
    (g.pools !== undefined && !Array.isArray(g.pools)) ||
    (g.allocations !== undefined && !Array.isArray(g.allocations))
  ) {
    throw new Error(
      `genesis file ${path}: expected an object with optional reserve (a PTM amount string), pools (an array) and allocations (an array)`,
    );
  }
  // A field left out takes the built-in default's value (docs/economy.md): `"pools": []` is
  // how a file says "no swap pools", `"reserve": "0"` "no yield reserve"; a file of allocations
  // alone funds keys on top of the built-in reserve and pools.
  const genesis: EconomyGenesis = {
    ...g,
    reserve: g.reserve ?? DEFAULT_GENESIS.reserve,
    pools: g.pools ?? DEFAULT_GENESIS.pools,
    allocations: g.allocations ?? [],
  };
  try {
    checkGenesis(genesis);
  } catch (error) {
    throw new Error(`genesis file ${path}: ${(error as Error).message}`);
  }
  return genesis;
}

/** Checks a genesis configuration; throws an Error saying what is wrong. */
export function checkGenesis(genesis: EconomyGenesis): void {
  parseAmount(genesis.reserve, 'PTM', 'genesis.reserve');
  const pairs = new Set<string>();
  genesis.pools.forEach((pool, i) => {
    getToken(pool.base);
    getToken(pool.quote);
    if (pool.base === pool.quote) throw new Error(`genesis.pools[${i}]: base and quote must differ`);
    const key = [pool.base, pool.quote].sort().join('/');
    if (pairs.has(key)) throw new Error(`genesis.pools[${i}]: a second pool for ${pool.base}/${pool.quote}`);
    pairs.add(key);
    if (parseAmount(pool.base_reserve, pool.base, `genesis.pools[${i}].base_reserve`) === 0n) {
      throw new Error(`genesis.pools[${i}].base_reserve: expected more than 0`);
    }
    if (parseAmount(pool.quote_reserve, pool.quote, `genesis.pools[${i}].quote_reserve`) === 0n) {
      throw new Error(`genesis.pools[${i}].quote_reserve: expected more than 0`);
    }
    if (!Number.isInteger(pool.fee_bps) || pool.fee_bps < 0 || pool.fee_bps >= 10_000) {
      throw new Error(`genesis.pools[${i}].fee_bps: expected an integer in [0, 10000)`);
    }
  });
  if (genesis.allocations !== undefined && !Array.isArray(genesis.allocations)) {
    throw new Error('genesis.allocations: expected an array');
  }
  for (const [i, a] of (genesis.allocations ?? []).entries()) {
    if (!/^[0-9a-f]{64}$/.test(a.pubkey))
      throw new Error(`genesis.allocations[${i}].pubkey: expected 64 hex digits`);
    parseAmount(a.amount, a.token, `genesis.allocations[${i}].amount`);
  }
}

/**
 * Writes the genesis once; returns true when it was written now. Several nodes starting at once
 * on one new PostgreSQL database race to write it: the loser's insert of a swap pool fails on
 * the pool's unique key (a constraint error, not a serialization conflict, so it is not re-run);
 * it then finds the genesis written by the winner, and that is success.
 */
export async function applyGenesis(storage: Storage, genesis: EconomyGenesis, now: number): Promise<boolean> {
  checkGenesis(genesis);
  try {
    return await writeGenesis(storage, genesis, now);
  } catch (error) {
    const written = await storage.read((tx) => tx.meta.get(GENESIS_META)).catch(() => undefined);
    if (written !== undefined) return false;
    throw error;
  }
}

async function writeGenesis(storage: Storage, genesis: EconomyGenesis, now: number): Promise<boolean> {
  return storage.transaction(async (tx) => {
    if ((await tx.meta.get(GENESIS_META)) !== undefined) return false;
    const entries: NewLedgerEntry[] = [];
    const credit = (pubkey: string, token: string, amount: bigint) => {
      if (amount > 0n)
        entries.push({ type: 'genesis', pubkey, token, amount, timestamp: now, ref: 'genesis' });
    };
    credit(RESERVE_ACCOUNT, 'PTM', parseAmount(genesis.reserve, 'PTM'));
    for (const pool of genesis.pools) {
      const pair = `${pool.base}/${pool.quote}`;
      await tx.economy.swapPools.insert({
        pair,
        base: pool.base,
        quote: pool.quote,
        feeBps: BigInt(pool.fee_bps),
        createdAt: now,
      });
      credit(swapPoolAccount(pair), pool.base, parseAmount(pool.base_reserve, pool.base));
      credit(swapPoolAccount(pair), pool.quote, parseAmount(pool.quote_reserve, pool.quote));
    }
    for (const a of genesis.allocations ?? []) credit(a.pubkey, a.token, parseAmount(a.amount, a.token));
    await tx.ledger.apply(entries);
    await tx.meta.set(GENESIS_META, JSON.stringify({ at: now, tokens: TOKEN_SYMBOLS, genesis }));
    return true;
  });
}
