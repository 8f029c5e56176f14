import type {
  EconomyRepos,
  EconomyRequestRecord,
  EconomyRequestRepo,
  OrderFillRecord,
  OrderRecord,
  OrderRepo,
  OrderSide,
  OrderState,
  StakeRecord,
  StakeRepo,
  SwapPoolRecord,
  SwapPoolRepo,
  TransferRecord,
  TransferRepo,
  VaultRecord,
  VaultRepo,
} from './economy-types.js';
import { StorageError } from './errors.js';
import {
  bigintOf,
  int,
  nextSerial,
  nullableInt,
  nullableText,
  type Row,
  type Scope,
  text,
} from './sql-repos.js';

/** The economy repositories on node:sqlite (tables of migration step "economy"). */
export function sqlEconomyRepos(scope: Scope): EconomyRepos {
  return {
    requests: new SqlRequestRepo(scope),
    transfers: new SqlTransferRepo(scope),
    stakes: new SqlStakeRepo(scope),
    vaults: new SqlVaultRepo(scope),
    swapPools: new SqlSwapPoolRepo(scope),
    orders: new SqlOrderRepo(scope),
    async supply() {
      return sumByToken(await scope.read().prepare('SELECT token, amount AS value FROM balances').all());
    },
    async issued() {
      return sumByToken(
        await scope
          .read()
          .prepare(
            "SELECT token, credited AS value FROM ledger_totals WHERE type IN ('genesis', 'mining_reward')",
          )
          .all(),
      );
    },
  };
}

function sumByToken(rows: readonly Row[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const row of rows) {
    const token = text(row, 'token');
    out.set(token, (out.get(token) ?? 0n) + bigintOf(row, 'value'));
  }
  return out;
}

class SqlRequestRepo implements EconomyRequestRepo {
  constructor(private readonly scope: Scope) {}

  async get(pubkey: string, nonce: string): Promise<EconomyRequestRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(
        'SELECT pubkey, nonce, request_hash, operation, result, created_at FROM economy_requests WHERE pubkey = ? AND nonce = ?',
      )
      .get(pubkey, nonce);
    if (row === undefined) return undefined;
    return {
      pubkey: text(row, 'pubkey'),
      nonce: text(row, 'nonce'),
      requestHash: text(row, 'request_hash'),
      operation: text(row, 'operation'),
      result: text(row, 'result'),
      createdAt: int(row, 'created_at'),
    };
  }

  async insert(r: EconomyRequestRecord): Promise<void> {
    await this.scope
      .write('economy.requests.insert')
      .prepare(
        'INSERT INTO economy_requests (pubkey, nonce, request_hash, operation, result, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(r.pubkey, r.nonce, r.requestHash, r.operation, r.result, r.createdAt);
  }

  async prune(before: number): Promise<number> {
    const result = await this.scope
      .write('economy.requests.prune')
      .prepare('DELETE FROM economy_requests WHERE created_at < ?')
      .run(before);
    return Number(result.changes);
  }
}

class SqlTransferRepo implements TransferRepo {
  constructor(private readonly scope: Scope) {}

  async insert(t: TransferRecord): Promise<void> {
    await this.scope
      .write('economy.transfers.insert')
      .prepare(
        'INSERT INTO transfers (id, from_pubkey, to_pubkey, token, amount, memo, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(t.id, t.from, t.to, t.token, t.amount.toString(), t.memo, t.timestamp);
  }

  async get(id: string): Promise<TransferRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(
        'SELECT id, from_pubkey, to_pubkey, token, amount, memo, timestamp FROM transfers WHERE id = ?',
      )
      .get(id);
    if (row === undefined) return undefined;
    return {
      id: text(row, 'id'),
      from: text(row, 'from_pubkey'),
      to: text(row, 'to_pubkey'),
      token: text(row, 'token'),
      amount: bigintOf(row, 'amount'),
      memo: nullableText(row, 'memo'),
      timestamp: int(row, 'timestamp'),
    };
  }
}

const STAKE_COLUMNS =
  'id, serial, pubkey, token, amount, lock_days, yield_bps, penalty_bps, created_at, lock_expiry, yield_paid, last_claim_at, closed_at';

function toStake(row: Row): StakeRecord {
  const lockDays = int(row, 'lock_days');
  if (lockDays !== 0 && lockDays !== 7 && lockDays !== 30) {
    throw new StorageError('corrupt_row', `stored lock_days: unexpected value ${lockDays}`);
  }
  return {
    id: text(row, 'id'),
    serial: int(row, 'serial'),
    pubkey: text(row, 'pubkey'),
    token: text(row, 'token'),
    amount: bigintOf(row, 'amount'),
    lockDays,
    yieldBps: BigInt(int(row, 'yield_bps')),
    penaltyBps: BigInt(int(row, 'penalty_bps')),
    createdAt: int(row, 'created_at'),
    lockExpiry: int(row, 'lock_expiry'),
    yieldPaid: bigintOf(row, 'yield_paid'),
    lastClaimAt: int(row, 'last_claim_at'),
    closedAt: nullableInt(row, 'closed_at'),
  };
}

class SqlStakeRepo implements StakeRepo {
  constructor(private readonly scope: Scope) {}

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'economy.stakes.nextSerial', 'stakes');
  }

  async insert(s: StakeRecord): Promise<void> {
    await this.scope
      .write('economy.stakes.insert')
      .prepare(`INSERT INTO stakes (${STAKE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(
        s.id,
        s.serial,
        s.pubkey,
        s.token,
        s.amount.toString(),
        s.lockDays,
        Number(s.yieldBps),
        Number(s.penaltyBps),
        s.createdAt,
        s.lockExpiry,
        s.yieldPaid.toString(),
        s.lastClaimAt,
        s.closedAt,
      );
  }

  async get(id: string): Promise<StakeRecord | undefined> {
    const row = await this.scope.read().prepare(`SELECT ${STAKE_COLUMNS} FROM stakes WHERE id = ?`).get(id);
    return row === undefined ? undefined : toStake(row);
  }

  async listOpen(pubkey: string, limit: number): Promise<StakeRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(
          `SELECT ${STAKE_COLUMNS} FROM stakes WHERE pubkey = ? AND closed_at IS NULL ORDER BY serial LIMIT ?`,
        )
        .all(pubkey, limit)
    ).map(toStake);
  }

  async allOpen(): Promise<StakeRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${STAKE_COLUMNS} FROM stakes WHERE closed_at IS NULL ORDER BY serial`)
        .all()
    ).map(toStake);
  }

  async recordClaim(id: string, yieldPaid: bigint, at: number): Promise<void> {
    await this.scope
      .write('economy.stakes.recordClaim')
      .prepare('UPDATE stakes SET yield_paid = ?, last_claim_at = ? WHERE id = ? AND closed_at IS NULL')
      .run(yieldPaid.toString(), at, id);
  }

  async close(id: string, yieldPaid: bigint, at: number): Promise<void> {
    await this.scope
      .write('economy.stakes.close')
      .prepare(
        'UPDATE stakes SET yield_paid = ?, last_claim_at = ?, closed_at = ? WHERE id = ? AND closed_at IS NULL',
      )
      .run(yieldPaid.toString(), at, at, id);
  }
}

const VAULT_COLUMNS = 'id, serial, pubkey, token, amount, unlock_at, created_at, withdrawn_at';

function toVault(row: Row): VaultRecord {
  return {
    id: text(row, 'id'),
    serial: int(row, 'serial'),
    pubkey: text(row, 'pubkey'),
    token: text(row, 'token'),
    amount: bigintOf(row, 'amount'),
    unlockAt: int(row, 'unlock_at'),
    createdAt: int(row, 'created_at'),
    withdrawnAt: nullableInt(row, 'withdrawn_at'),
  };
}

class SqlVaultRepo implements VaultRepo {
  constructor(private readonly scope: Scope) {}

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'economy.vaults.nextSerial', 'vaults');
  }

  async insert(v: VaultRecord): Promise<void> {
    await this.scope
      .write('economy.vaults.insert')
      .prepare(`INSERT INTO vaults (${VAULT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(v.id, v.serial, v.pubkey, v.token, v.amount.toString(), v.unlockAt, v.createdAt, v.withdrawnAt);
  }

  async get(id: string): Promise<VaultRecord | undefined> {
    const row = await this.scope.read().prepare(`SELECT ${VAULT_COLUMNS} FROM vaults WHERE id = ?`).get(id);
    return row === undefined ? undefined : toVault(row);
  }

  async list(pubkey: string, limit: number): Promise<VaultRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${VAULT_COLUMNS} FROM vaults WHERE pubkey = ? ORDER BY serial LIMIT ?`)
        .all(pubkey, limit)
    ).map(toVault);
  }

  async allLocked(): Promise<VaultRecord[]> {
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${VAULT_COLUMNS} FROM vaults WHERE withdrawn_at IS NULL ORDER BY serial`)
        .all()
    ).map(toVault);
  }

  async markWithdrawn(id: string, at: number): Promise<void> {
    await this.scope
      .write('economy.vaults.markWithdrawn')
      .prepare('UPDATE vaults SET withdrawn_at = ? WHERE id = ? AND withdrawn_at IS NULL')
      .run(at, id);
  }
}

function toPool(row: Row): SwapPoolRecord {
  return {
    pair: text(row, 'pair'),
    base: text(row, 'base'),
    quote: text(row, 'quote'),
    feeBps: BigInt(int(row, 'fee_bps')),
    createdAt: int(row, 'created_at'),
  };
}

class SqlSwapPoolRepo implements SwapPoolRepo {
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

const ORDER_COLUMNS =
  'id, serial, pubkey, side, token, quote_token, price, amount, filled, escrow, status, created_at, closed_at';
const RESTING = "status IN ('open', 'partially_filled')";

/** The price as 39 zero-padded digits: text order equals numeric order (prices < 2^128 < 10^39). */
function priceKey(price: bigint): string {
  return price.toString().padStart(39, '0');
}

function toOrder(row: Row): OrderRecord {
  const side = text(row, 'side');
  const status = text(row, 'status');
  if (side !== 'buy' && side !== 'sell') throw new StorageError('corrupt_row', `stored side: ${side}`);
  if (status !== 'open' && status !== 'partially_filled' && status !== 'filled' && status !== 'cancelled') {
    throw new StorageError('corrupt_row', `stored status: ${status}`);
  }
  return {
    id: text(row, 'id'),
    serial: int(row, 'serial'),
    pubkey: text(row, 'pubkey'),
    side,
    token: text(row, 'token'),
    quoteToken: text(row, 'quote_token'),
    price: bigintOf(row, 'price'),
    amount: bigintOf(row, 'amount'),
    filled: bigintOf(row, 'filled'),
    escrow: bigintOf(row, 'escrow'),
    status,
    createdAt: int(row, 'created_at'),
    closedAt: nullableInt(row, 'closed_at'),
  };
}

class SqlOrderRepo implements OrderRepo {
  constructor(private readonly scope: Scope) {}

  async nextSerial(): Promise<number> {
    return nextSerial(this.scope, 'economy.orders.nextSerial', 'orders');
  }

  async insert(o: OrderRecord): Promise<void> {
    await this.scope
      .write('economy.orders.insert')
      .prepare(
        `INSERT INTO orders (${ORDER_COLUMNS}, price_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        o.id,
        o.serial,
        o.pubkey,
        o.side,
        o.token,
        o.quoteToken,
        o.price.toString(),
        o.amount.toString(),
        o.filled.toString(),
        o.escrow.toString(),
        o.status,
        o.createdAt,
        o.closedAt,
        priceKey(o.price),
      );
  }

  async get(id: string): Promise<OrderRecord | undefined> {
    const row = await this.scope.read().prepare(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ?`).get(id);
    return row === undefined ? undefined : toOrder(row);
  }

  async update(
    id: string,
    change: { filled: bigint; escrow: bigint; status: OrderState; closedAt: number | null },
  ): Promise<void> {
    await this.scope
      .write('economy.orders.update')
      .prepare('UPDATE orders SET filled = ?, escrow = ?, status = ?, closed_at = ? WHERE id = ?')
      .run(change.filled.toString(), change.escrow.toString(), change.status, change.closedAt, id);
  }

  async book(
    token: string,
    quoteToken: string,
    side: OrderSide,
    excludePubkey: string,
    limit: number,
  ): Promise<OrderRecord[]> {
    const order = side === 'sell' ? 'price_key ASC, serial ASC' : 'price_key DESC, serial ASC';
    return (
      await this.scope
        .read()
        .prepare(
          `SELECT ${ORDER_COLUMNS} FROM orders WHERE token = ? AND quote_token = ? AND side = ? AND ${RESTING} AND pubkey <> ? ORDER BY ${order} LIMIT ?`,
        )
        .all(token, quoteToken, side, excludePubkey, limit)
    ).map(toOrder);
  }

  async listResting(filter: {
    token?: string;
    side?: OrderSide;
    pubkey?: string;
    afterSerial: number;
    limit: number;
  }): Promise<OrderRecord[]> {
    const where = [RESTING, 'serial > ?'];
    const params: (string | number)[] = [filter.afterSerial];
    if (filter.token !== undefined) {
      where.push('token = ?');
      params.push(filter.token);
    }
    if (filter.side !== undefined) {
      where.push('side = ?');
      params.push(filter.side);
    }
    if (filter.pubkey !== undefined) {
      where.push('pubkey = ?');
      params.push(filter.pubkey);
    }
    params.push(filter.limit);
    return (
      await this.scope
        .read()
        .prepare(`SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where.join(' AND ')} ORDER BY serial LIMIT ?`)
        .all(...params)
    ).map(toOrder);
  }

  async insertFill(f: OrderFillRecord): Promise<void> {
    await this.scope
      .write('economy.orders.insertFill')
      .prepare(
        'INSERT INTO order_fills (taker_order_id, maker_order_id, amount, price, quote_amount, executed_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        f.takerOrderId,
        f.makerOrderId,
        f.amount.toString(),
        f.price.toString(),
        f.quoteAmount.toString(),
        f.executedAt,
      );
  }
}
