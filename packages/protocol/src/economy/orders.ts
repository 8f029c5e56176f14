import { PRICE_DECIMALS } from '../amount.js';
import { mulDivCeil, mulDivFloor, pow10 } from './math.js';

/**
 * Marketplace limit orders. An order buys or sells `amount` minor units of a token at a limit
 * `price` in quote-token whole units per 1 whole token, as a fixed-point integer of 10^-18
 * (PRICE_DECIMALS). The value in quote minor units of `amount` token minor units at `price` is
 *   value(amount, price) = amount * price * 10^quoteDecimals / (10^tokenDecimals * 10^18).
 *
 * Placement: an order worth less than MARKET_MIN_ORDER_VALUE at its limit is refused. A sell
 * escrows `amount` of the token; a buy escrows ceil(value(amount, limit)) of the quote token
 * (rounded up, so the escrow always covers the fills).
 *
 * Rounding, once per order and never per fill: after its fills, an order has moved exactly
 * {@link settledQuote} of the quote token, that is
 *   a sell has received  floor(value(filled, limit)) + floor(value of its gain)
 *   a buy has paid        ceil(value(filled, limit)) - floor(value of its gain)
 * where its gain is sum(q * |fill price - limit|) over the fills it made as the incoming
 * order (a resting order fills at its own limit, so its gain never changes once it rests).
 * A fill moves the difference of these totals before and after it: the seller never receives
 * more, and the buyer never pays less, than the exact value of the fills, however the amounts
 * are sliced; each order loses less than 2 quote minor units to rounding over its whole life,
 * and what buyers pay beyond what sellers receive goes to MARKET_ROUNDING_ACCOUNT.
 *
 * An order whose remainder is worth less than MARKET_MIN_ORDER_VALUE at its limit after a fill
 * ({@link isDust}) is closed: the remainder's escrow goes back to its owner (status cancelled),
 * so the book never holds dust.
 */

/** The token every marketplace price is quoted in. */
export const MARKET_QUOTE_TOKEN = 'USDC';

/**
 * The smallest order the marketplace takes, in quote-token minor units (0.01 USDC): an order
 * worth less at its limit price is refused (`order_below_minimum`), and a remainder worth less
 * after a fill is returned to its owner instead of resting.
 */
export const MARKET_MIN_ORDER_VALUE = 10_000n;

/**
 * The default of the validator setting `marketMaxFills`: the most fills one placement makes;
 * what remains of the order then rests in the book at its limit (or is returned when it is dust).
 */
export const MAX_FILLS_PER_ORDER = 100;

/** The quote value of `amount` at `price`, rounded down (what a fill moves). */
export function quoteValueFloor(
  amount: bigint,
  price: bigint,
  tokenDecimals: number,
  quoteDecimals: number,
): bigint {
  return mulDivFloor(amount * price, pow10(quoteDecimals), pow10(tokenDecimals + PRICE_DECIMALS));
}

/** The quote value of `amount` at `price`, rounded up (what a buy order escrows). */
export function quoteValueCeil(
  amount: bigint,
  price: bigint,
  tokenDecimals: number,
  quoteDecimals: number,
): bigint {
  return mulDivCeil(amount * price, pow10(quoteDecimals), pow10(tokenDecimals + PRICE_DECIMALS));
}

/**
 * True when a new order of `side` at `limit` may trade with a resting order at `resting`
 * price: a buy crosses a sell priced at or below its limit; a sell crosses a buy priced at or
 * above its limit.
 */
export function crosses(side: 'buy' | 'sell', limit: bigint, resting: bigint): boolean {
  return side === 'buy' ? resting <= limit : resting >= limit;
}

/** The value of `numerator` (an amount times a price, e.g. `amount * price`) in quote minor units, rounded down. */
function scaledFloor(numerator: bigint, tokenDecimals: number, quoteDecimals: number): bigint {
  return mulDivFloor(numerator, pow10(quoteDecimals), pow10(tokenDecimals + PRICE_DECIMALS));
}

/** As scaledFloor, rounded up. */
function scaledCeil(numerator: bigint, tokenDecimals: number, quoteDecimals: number): bigint {
  return mulDivCeil(numerator, pow10(quoteDecimals), pow10(tokenDecimals + PRICE_DECIMALS));
}

/** True when `remaining` at `price` is worth less than the marketplace's minimum order value. */
export function isDust(
  remaining: bigint,
  price: bigint,
  tokenDecimals: number,
  quoteDecimals: number,
): boolean {
  return quoteValueFloor(remaining, price, tokenDecimals, quoteDecimals) < MARKET_MIN_ORDER_VALUE;
}

/** What an order's fills have moved so far: the state {@link settledQuote} reads. */
export interface OrderProgress {
  readonly side: 'buy' | 'sell';
  /** The limit price. */
  readonly price: bigint;
  /** Token minor units filled. */
  readonly filled: bigint;
  /**
   * Its gain as the incoming order: sum(q * |fill price - limit|) over those fills, in units of
   * amount x price (0 for an order that only ever rested).
   */
  readonly gain: bigint;
}

/**
 * The quote-token total an order has moved after its fills, rounded against the order: what a
 * sell has received, `floor(value(filled, limit)) + floor(value(gain))`, or what a buy has paid,
 * `ceil(value(filled, limit)) - floor(value(gain))`. Never more (sell) or less (buy) than the
 * exact value of its fills, and less than 2 minor units from it.
 */
export function settledQuote(o: OrderProgress, tokenDecimals: number, quoteDecimals: number): bigint {
  const atLimit =
    o.side === 'sell'
      ? scaledFloor(o.filled * o.price, tokenDecimals, quoteDecimals)
      : scaledCeil(o.filled * o.price, tokenDecimals, quoteDecimals);
  const gain = scaledFloor(o.gain, tokenDecimals, quoteDecimals);
  return o.side === 'sell' ? atLimit + gain : atLimit - gain;
}

/** What one fill moves in the quote token. */
export interface FillSettlement {
  /** Out of the buyer's escrow (may be -1: rounding gives back part of an earlier fill). */
  readonly buyerPays: bigint;
  /** To the seller (never negative). */
  readonly sellerReceives: bigint;
  /** buyerPays - sellerReceives, to (or, when negative, from) the rounding account. */
  readonly rounding: bigint;
  /** The incoming order after the fill (its gain grown by this fill's price improvement). */
  readonly incoming: OrderProgress;
  /** The resting order after the fill. */
  readonly resting: OrderProgress;
}

/**
 * Settles a fill of `quantity` between the incoming order and a resting one, at the resting
 * order's price: each side moves the difference of its {@link settledQuote} before and after.
 */
export function settleFill(
  incoming: OrderProgress,
  resting: OrderProgress,
  quantity: bigint,
  tokenDecimals: number,
  quoteDecimals: number,
): FillSettlement {
  const improvement =
    incoming.price > resting.price ? incoming.price - resting.price : resting.price - incoming.price;
  const nextIncoming = {
    ...incoming,
    filled: incoming.filled + quantity,
    gain: incoming.gain + quantity * improvement,
  };
  const nextResting = { ...resting, filled: resting.filled + quantity };
  const moved = (before: OrderProgress, after: OrderProgress) =>
    settledQuote(after, tokenDecimals, quoteDecimals) - settledQuote(before, tokenDecimals, quoteDecimals);
  const incomingMoved = moved(incoming, nextIncoming);
  const restingMoved = moved(resting, nextResting);
  const buyerPays = incoming.side === 'buy' ? incomingMoved : restingMoved;
  const sellerReceives = incoming.side === 'sell' ? incomingMoved : restingMoved;
  return {
    buyerPays,
    sellerReceives,
    rounding: buyerPays - sellerReceives,
    incoming: nextIncoming,
    resting: nextResting,
  };
}
