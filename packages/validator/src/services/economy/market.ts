import {
  crosses,
  DEFAULT_PAGE_LIMIT,
  formatAmount,
  formatPrice,
  getToken,
  isDust,
  MARKET_ACCOUNT,
  MARKET_MIN_ORDER_VALUE,
  MARKET_QUOTE_TOKEN,
  MARKET_ROUNDING_ACCOUNT,
  minBig,
  type OrderFill,
  type OrderProgress,
  parsePrice,
  quoteValueCeil,
  quoteValueFloor,
  settleFill,
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
 * then oldest), partial fills allowed, at the resting order's price, at most `marketMaxFills`
 * fills per placement. An order never matches orders of its own key (they are skipped). Orders
 * worth less than the minimum are refused, and a remainder worth less is returned instead of
 * resting. Rules and rounding: protocol economy/orders.ts and docs/economy.md.
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
 * A balanced movement of `amount` (none when 0; the other way when negative), each entry with
 * the ref of the order it belongs to.
 */
function move(
  from: string,
  to: string,
  token: string,
  amount: bigint,
  now: number,
  refs: { from: string; to: string },
): NewLedgerEntry[] {
  if (amount === 0n) return [];
  return [
    { type: 'order', pubkey: from, token, amount: -amount, timestamp: now, ref: refs.from },
    { type: 'order', pubkey: to, token, amount, timestamp: now, ref: refs.to },
  ];
}

/**
 * Where an order stands after a fill: filled, or still in the book, or, when it is about to
 * rest (`resting`) and what remains is worth less than the minimum order value at its limit,
 * closed (its escrow then goes back to its owner, as a cancel would). A completely filled buy
 * gets back what its escrow kept beyond its fills (its limit above the fill prices, and the
 * rounding).
 */
function settle(
  o: OrderRecord,
  now: number,
  resting: boolean,
): { order: OrderRecord; entries: NewLedgerEntry[] } {
  const done = o.filled === o.amount;
  const dust =
    resting &&
    !done &&
    isDust(o.amount - o.filled, o.price, getToken(o.token).decimals, getToken(o.quoteToken).decimals);
  if (!done && !dust) return { order: { ...o, status: stateOf(o) }, entries: [] };
  return {
    order: { ...o, escrow: 0n, status: done ? 'filled' : 'cancelled', closedAt: now },
    entries: move(MARKET_ACCOUNT, o.pubkey, escrowToken(o), o.escrow, now, { from: o.id, to: o.id }),
  };
}

/**
 * Fills `taker` against the book, moving the money of each fill from the escrow in `@market`
 * to the counterparties, and returns the fills and the taker as it ends up. At most `maxFills`
 * fills: the work one placement does, and so the longest another request waits behind it.
 */
async function match(
  tx: StorageTx,
  taker: OrderRecord,
  now: number,
  maxFills: number,
): Promise<{ taker: OrderRecord; fills: OrderFill[] }> {
  const tokenDecimals = getToken(taker.token).decimals;
  const quoteDecimals = getToken(taker.quoteToken).decimals;
  const opposite = taker.side === 'buy' ? 'sell' : 'buy';
  const fills: OrderFill[] = [];
  let current = taker;
  // The taker's rounding state: its gain from filling at better prices than its limit.
  let incoming: OrderProgress = { side: taker.side, price: taker.price, filled: 0n, gain: 0n };
  const resting = () => current.status === 'open' || current.status === 'partially_filled';
  book: while (resting() && fills.length < maxFills) {
    const makers = await tx.economy.orders.book(
      current.token,
      current.quoteToken,
      opposite,
      current.pubkey,
      Math.min(100, maxFills - fills.length),
    );
    if (makers.length === 0) break;
    for (const maker of makers) {
      if (!crosses(current.side, current.price, maker.price)) break book;
      const quantity = minBig(current.amount - current.filled, maker.amount - maker.filled);
      const fill = settleFill(
        incoming,
        { side: maker.side, price: maker.price, filled: maker.filled, gain: 0n },
        quantity,
        tokenDecimals,
        quoteDecimals,
      );
      incoming = fill.incoming;
      const buyer = current.side === 'buy' ? current : maker;
      const seller = current.side === 'buy' ? maker : current;
      let { buyerPays, rounding } = fill;
      if (rounding < 0n) {
        // Only a buy filled under the older per-fill rounding (before this rule) can leave the
        // rounding account short: its escrow, which kept that rounding, pays the difference.
        const held = await tx.ledger.balance(MARKET_ROUNDING_ACCOUNT, current.quoteToken);
        const short = minBig(-(held + rounding), buyer.escrow - buyerPays);
        if (short > 0n) {
          buyerPays += short;
          rounding += short;
        }
      }
      // The rounding moves first: when negative it funds part of the seller's receipt.
      const entries: NewLedgerEntry[] = [
        ...move(MARKET_ACCOUNT, MARKET_ROUNDING_ACCOUNT, current.quoteToken, rounding, now, {
          from: buyer.id,
          to: buyer.id,
        }),
        ...move(MARKET_ACCOUNT, seller.pubkey, current.quoteToken, fill.sellerReceives, now, {
          from: buyer.id,
          to: seller.id,
        }),
        ...move(MARKET_ACCOUNT, buyer.pubkey, current.token, quantity, now, {
          from: seller.id,
          to: buyer.id,
        }),
      ];
      // The resting side stays in the book; the incoming order may fill on (checked at the end).
      const nextBuyer = settle(
        { ...buyer, filled: buyer.filled + quantity, escrow: buyer.escrow - buyerPays },
        now,
        buyer === maker,
      );
      const nextSeller = settle(
        { ...seller, filled: seller.filled + quantity, escrow: seller.escrow - quantity },
        now,
        seller === maker,
      );
      entries.push(...nextBuyer.entries, ...nextSeller.entries);
      await tx.ledger.apply(entries);
      for (const o of [nextBuyer.order, nextSeller.order]) {
        await tx.economy.orders.update(o.id, {
          filled: o.filled,
          escrow: o.escrow,
          status: o.status,
          closedAt: o.closedAt,
        });
      }
      await tx.economy.orders.insertFill({
        takerOrderId: current.id,
        makerOrderId: maker.id,
        amount: quantity,
        price: maker.price,
        quoteAmount: fill.sellerReceives,
        executedAt: now,
      });
      fills.push({
        counter_order_id: maker.id,
        amount: formatAmount(quantity, current.token),
        price: formatPrice(maker.price),
        executed_at: now,
      });
      current = current.side === 'buy' ? nextBuyer.order : nextSeller.order;
      if (!resting() || fills.length >= maxFills) break book;
    }
  }
  if (resting()) {
    // What is left of the incoming order rests, unless it is dust.
    const last = settle(current, now, true);
    if (last.order.status !== current.status) {
      await tx.ledger.apply(last.entries);
      await tx.economy.orders.update(current.id, {
        filled: last.order.filled,
        escrow: last.order.escrow,
        status: last.order.status,
        closedAt: last.order.closedAt,
      });
      current = last.order;
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
      const value = quoteValueFloor(amount, price, tokenDecimals, quoteDecimals);
      if (value < MARKET_MIN_ORDER_VALUE) {
        const minimum = formatAmount(MARKET_MIN_ORDER_VALUE, quoteToken);
        throw new ApiError(
          'order_below_minimum',
          `amount x price: the order is worth ${formatAmount(value, quoteToken)} ${quoteToken} at its limit, below the marketplace's minimum of ${minimum} ${quoteToken}`,
          { minimum_value: minimum, value: formatAmount(value, quoteToken), quote_token: quoteToken },
        );
      }
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
        const { taker, fills } = await match(tx, order, now, ctx.config.marketMaxFills);
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
