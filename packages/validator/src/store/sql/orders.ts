import { StorageError } from '../errors.js';
import type { OrderFillRecord, OrderRecord, OrderRepo, OrderSide, OrderState } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { nextSerial } from './sequences.js';
import { bigintOf, int, nullableInt, text } from './values.js';

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

/** Tables `orders` and `order_fills`: the order book. */
export class SqlOrderRepo implements OrderRepo {
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
