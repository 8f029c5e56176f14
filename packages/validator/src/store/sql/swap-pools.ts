import type { SwapPoolRecord, SwapPoolRepo } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { nextSerial } from './sequences.js';
import { bigintOf, int, text } from './values.js';

function toPool(row: Row): SwapPoolRecord {
  return {
    pair: text(row, 'pair'),
    base: text(row, 'base'),
    quote: text(row, 'quote'),
    feeBps: BigInt(int(row, 'fee_bps')),
    createdAt: int(row, 'created_at'),
  };
}

/** Table `swap_pools`: the swap pools and their serials. */
export class SqlSwapPoolRepo implements SwapPoolRepo {
  constructor(private readonly scope: Scope) {}

  async insert(p: SwapPoolRecord): Promise<void> {
    await this.scope
      .write('economy.swapPools.insert')
      .prepare('INSERT INTO swap_pools (pair, base, quote, fee_bps, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(p.pair, p.base, p.quote, Number(p.feeBps), p.createdAt);
  }

  async find(a: string, b: string): Promise<SwapPoolRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(
        'SELECT pair, base, quote, fee_bps, created_at FROM swap_pools WHERE (base = ?1 AND quote = ?2) OR (base = ?2 AND quote = ?1)',
      )
      .get(a, b);
    return row === undefined ? undefined : toPool(row);
  }

  async list(): Promise<SwapPoolRecord[]> {
    return (
      await this.scope
        .read()
        .prepare('SELECT pair, base, quote, fee_bps, created_at FROM swap_pools ORDER BY pair')
        .all()
    ).map(toPool);
  }

  async nextSwapSerial(): Promise<number> {
    return nextSerial(this.scope, 'economy.swapPools.nextSwapSerial', 'swaps');
  }

  async movedSince(account: string, type: 'swap', token: string, since: number): Promise<bigint> {
    const rows = await this.scope
      .read()
      .prepare(
        'SELECT amount FROM ledger_entries WHERE pubkey = ? AND type = ? AND timestamp >= ? AND token = ?',
      )
      .all(account, type, since, token);
    let sum = 0n;
    for (const row of rows) {
      const amount = bigintOf(row, 'amount');
      sum += amount < 0n ? -amount : amount;
    }
    return sum;
  }
}
