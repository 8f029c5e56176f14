import {
  crosses,
  DEFAULT_PAGE_LIMIT,
  formatAmount,
  formatPrice,
  getToken,
  MARKET_ACCOUNT,
  MARKET_QUOTE_TOKEN,
  MAX_FILLS_PER_ORDER,
  minBig,
  type OrderFill,
  parsePrice,
  quoteValueCeil,
  quoteValueFloor,
} from '@tensormine/protocol';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { NewLedgerEntry, OrderRecord, OrderState, StorageTx } from '../../store/types.js';
import { decodeCursor, encodeCursor } from '../mining/cursor.js';
import { positiveAmount } from './amounts.js';
import { executeOnce } from './requests.js';

/**
 * The marketplace: limit orders of a token (PTM, SOL) priced in the quote token (USDC), escrowed
 * in `@market` while they rest, matched on placement by price-time priority (best price first,
 * then oldest), partial fills allowed, at the resting order's price. An order never matches
 * orders of its own key (they are skipped). Rules and rounding: protocol economy/orders.ts.
 */

function stateOf(o: { amount: bigint; filled: bigint }): OrderState {
  if (o.filled === o.amount) return 'filled';
  return o.filled > 0n ? 'partially_filled' : 'open';
}

function orderWire(o: OrderRecord) {
  return {
    id: o.id,
    type: o.side,
    token: o.token,
    quote_token: o.quoteToken,
    amount: formatAmount(o.amount, o.token),
    price: formatPrice(o.price),
    pubkey: o.pubkey,
    created_at: o.createdAt,
    filled: formatAmount(o.filled, o.token),
    remaining: formatAmount(o.amount - o.filled, o.token),
    status: o.status,
  };
}

/** The token an order escrows: the token for a sell, the quote token for a buy. */
function escrowToken(o: Pick<OrderRecord, 'side' | 'token' | 'quoteToken'>): string {
  return o.side === 'sell' ? o.token : o.quoteToken;
}

/**
 * Fills `taker` against the book, moving the money of each fill from the escrow in `@market`
 * to the counterparties, and returns the fills and the taker as it ends up.
 */
async function match(
  tx: StorageTx,
  taker: OrderRecord,
  now: number,
): Promise<{ taker: OrderRecord; fills: OrderFill[] }> {
  const tokenDecimals = getToken(taker.token).decimals;
  const quoteDecimals = getToken(taker.quoteToken).decimals;
  const opposite = taker.side === 'buy' ? 'sell' : 'buy';
  const fills: OrderFill[] = [];
  let current = taker;
  book: while (current.filled < current.amount && fills.length < MAX_FILLS_PER_ORDER) {
    const resting = await tx.economy.orders.book(
      current.token,
      current.quoteToken,
      opposite,
      current.pubkey,
      100,
    );
    if (resting.length === 0) break;
    for (const maker of resting) {
      if (!crosses(current.side, current.price, maker.price)) break book;
      const quantity = minBig(current.amount - current.filled, maker.amount - maker.filled);
      const quote = quoteValueFloor(quantity, maker.price, tokenDecimals, quoteDecimals);
      // A fill whose quote value rounds to 0 would give tokens away: matching stops there.
      if (quote === 0n) break book;
      const buyer = current.side === 'buy' ? current : maker;
      const seller = current.side === 'buy' ? maker : current;
      const entries: NewLedgerEntry[] = [
        {
          type: 'order',
          pubkey: MARKET_ACCOUNT,
          token: current.token,
          amount: -quantity,
          timestamp: now,
          ref: seller.id,
        },
        {
          type: 'order',
          pubkey: buyer.pubkey,
          token: current.token,
          amount: quantity,
          timestamp: now,
          ref: buyer.id,
        },
        {
          type: 'order',
          pubkey: MARKET_ACCOUNT,
          token: current.quoteToken,
          amount: -quote,
          timestamp: now,
          ref: buyer.id,
        },
        {
          type: 'order',
          pubkey: seller.pubkey,
          token: current.quoteToken,
          amount: quote,
          timestamp: now,
          ref: seller.id,
        },
      ];
      const nextBuyer = { ...buyer, filled: buyer.filled + quantity, escrow: buyer.escrow - quote };
      const nextSeller = { ...seller, filled: seller.filled + quantity, escrow: seller.escrow - quantity };
      // A completely filled buy gets back what its escrow kept beyond the fills (its limit price
      // above the fill prices, and the rounding of each fill).
      if (nextBuyer.filled === nextBuyer.amount && nextBuyer.escrow > 0n) {
        entries.push(
          {
            type: 'order',
            pubkey: MARKET_ACCOUNT,
            token: current.quoteToken,
            amount: -nextBuyer.escrow,
            timestamp: now,
            ref: buyer.id,
          },
          {
            type: 'order',
            pubkey: buyer.pubkey,
            token: current.quoteToken,
            amount: nextBuyer.escrow,
            timestamp: now,
            ref: buyer.id,
          },
        );
        nextBuyer.escrow = 0n;
      }
      await tx.ledger.apply(entries);
      for (const o of [nextBuyer, nextSeller]) {
        const status = stateOf(o);
        await tx.economy.orders.update(o.id, {
          filled: o.filled,
          escrow: o.escrow,
          status,
          closedAt: status === 'filled' ? now : null,
        });
      }
      await tx.economy.orders.insertFill({
        takerOrderId: current.id,
        makerOrderId: maker.id,
        amount: quantity,
        price: maker.price,
        quoteAmount: quote,
        executedAt: now,
      });
      fills.push({
        counter_order_id: maker.id,
        amount: formatAmount(quantity, current.token),
        price: formatPrice(maker.price),
        executed_at: now,
      });
      const updated = current.side === 'buy' ? nextBuyer : nextSeller;
      current = { ...updated, status: stateOf(updated) };
      if (current.filled === current.amount || fills.length >= MAX_FILLS_PER_ORDER) break book;
    }
  }
  return { taker: current, fills };
}

/** POST /marketplace/order, POST /marketplace/cancel, GET /marketplace/orders. */
export function marketHandlers() {
  return routeHandlers({
    async placeOrder({ body, raw, claimNonce }, ctx) {
      const quoteToken = body.quote_token ?? MARKET_QUOTE_TOKEN;
      getToken(body.token);
      getToken(quoteToken);
      if (quoteToken !== MARKET_QUOTE_TOKEN || body.token === quoteToken) {
        throw new ApiError(
          'market_unsupported',
          `the marketplace trades tokens other than ${MARKET_QUOTE_TOKEN} priced in ${MARKET_QUOTE_TOKEN}; got ${body.token} in ${quoteToken}`,
          { quote_token: MARKET_QUOTE_TOKEN },
        );
      }
      const amount = positiveAmount(body.amount, body.token);
      const price = parsePrice(body.price);
      if (price === 0n) throw new ApiError('amount_too_small', 'price: expected more than 0');
      const tokenDecimals = getToken(body.token).decimals;
      const quoteDecimals = getToken(quoteToken).decimals;
      const escrow =
        body.type === 'sell' ? amount : quoteValueCeil(amount, price, tokenDecimals, quoteDecimals);
      return executeOnce(ctx, raw, claimNonce, 'placeOrder', async (tx, now) => {
        const serial = await tx.economy.orders.nextSerial();
        const order: OrderRecord = {
          id: `o-${serial}`,
          serial,
          pubkey: body.pubkey,
          side: body.type,
          token: body.token,
          quoteToken,
          price,
          amount,
          filled: 0n,
          escrow,
          status: 'open',
          createdAt: now,
          closedAt: null,
        };
        const token = escrowToken(order);
        await tx.ledger.apply([
          { type: 'order', pubkey: order.pubkey, token, amount: -escrow, timestamp: now, ref: order.id },
          { type: 'order', pubkey: MARKET_ACCOUNT, token, amount: escrow, timestamp: now, ref: order.id },
        ]);
        await tx.economy.orders.insert(order);
        const { taker, fills } = await match(tx, order, now);
        return {
          order_id: order.id,
          status: taker.status,
          filled_amount: formatAmount(taker.filled, taker.token),
          fills,
        };
      });
    },

    async cancelOrder({ body, raw, claimNonce }, ctx) {
      return executeOnce(ctx, raw, claimNonce, 'cancelOrder', async (tx, now) => {
        const order = await tx.economy.orders.get(body.order_id);
        if (order === undefined || order.pubkey !== body.pubkey) {
          throw new ApiError('order_not_found', `no order ${body.order_id} belongs to ${body.pubkey}`, {
            order_id: body.order_id,
          });
        }
        if (order.status === 'filled' || order.status === 'cancelled') {
          throw new ApiError(
            'order_not_open',
            `order ${order.id} is ${order.status}; nothing is left to cancel`,
            {
              order_id: order.id,
              status: order.status,
            },
          );
        }
        const token = escrowToken(order);
        if (order.escrow > 0n) {
          await tx.ledger.apply([
            {
              type: 'order',
              pubkey: MARKET_ACCOUNT,
              token,
              amount: -order.escrow,
              timestamp: now,
              ref: order.id,
            },
            {
              type: 'order',
              pubkey: order.pubkey,
              token,
              amount: order.escrow,
              timestamp: now,
              ref: order.id,
            },
          ]);
        }
        await tx.economy.orders.update(order.id, {
          filled: order.filled,
          escrow: 0n,
          status: 'cancelled',
          closedAt: now,
        });
        return {
          order_id: order.id,
          status: 'cancelled' as const,
          filled: formatAmount(order.filled, order.token),
          returned: { token, amount: formatAmount(order.escrow, token) },
          cancelled_at: now,
        };
      });
    },

    /** Resting orders, oldest first; next_cursor encodes the serial of the last order served. */
    async listOrders({ query }, ctx) {
      const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
      if (query.token !== undefined) getToken(query.token);
      const afterSerial =
        query.cursor === undefined ? 0 : decodeCursor('orders', query.cursor, 'GET /marketplace/orders');
      const rows = await ctx.storage.read((tx) =>
        tx.economy.orders.listResting({
          ...(query.token !== undefined ? { token: query.token } : {}),
          ...(query.type !== undefined ? { side: query.type } : {}),
          ...(query.pubkey !== undefined ? { pubkey: query.pubkey } : {}),
          afterSerial,
          limit: limit + 1,
        }),
      );
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        orders: page.map(orderWire),
        next_cursor: rows.length > limit && last ? encodeCursor('orders', last.serial) : null,
      };
    },
  });
}
