import { PRICE_DECIMALS } from '../amount.js';
import { mulDivCeil, mulDivFloor, pow10 } from './math.js';

/**
 * Marketplace limit orders. An order buys or sells `amount` minor units of a token at a limit
 * `price` in quote-token whole units per 1 whole token, as a fixed-point integer of 10^-18
 * (PRICE_DECIMALS). The value in quote minor units of `amount` token minor units at `price` is
 *   amount * price * 10^quoteDecimals / (10^tokenDecimals * 10^18).
 *
 * Escrow on placement: a sell escrows `amount` of the token; a buy escrows
 * ceil(value(amount, limit price)) of the quote token (rounded up, so the escrow always covers
 * the fills). A fill of `q` token units at the resting order's price moves
 * floor(value(q, price)) of the quote token from the buyer to the seller (rounded down: the
 * sub-unit remainder stays with the buyer and is returned with the rest of the buy escrow when
 * the order is filled or cancelled).
 */

/** The token every marketplace price is quoted in. */
export const MARKET_QUOTE_TOKEN = 'USDC';

/** The most fills one placement makes; the rest of the order rests in the book. */
export const MAX_FILLS_PER_ORDER = 1000;

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
