import { BPS_DENOMINATOR, PRICE_DECIMALS } from '../amount.js';
import { ProtocolError } from '../errors.js';
import { mulDivCeil, mulDivFloor, pow10, ratioToNumber } from './math.js';

/**
 * Constant-product swaps (x * y = k).
 *
 * For an input `amountIn` of token X into a pool holding `reserveIn` of X and `reserveOut` of Y,
 * with a fee of `feeBps` basis points:
 *   fee       = ceil(amountIn * feeBps / 10 000)       (rounded up: toward the house)
 *   netIn     = amountIn - fee                          (added to reserveIn)
 *   amountOut = floor(reserveOut * netIn / (reserveIn + netIn))   (rounded down: toward the pool)
 * The fee goes to the fee account (`@fees`), not into the pool. Because amountOut is rounded
 * down, the product of the reserves never decreases: (reserveIn + netIn) * (reserveOut -
 * amountOut) >= reserveIn * reserveOut; the rounding remainder stays in the pool.
 */

export interface SwapQuoteMath {
  readonly amountIn: bigint;
  readonly fee: bigint;
  readonly netIn: bigint;
  readonly amountOut: bigint;
  /** Reserves after the swap. */
  readonly newReserveIn: bigint;
  readonly newReserveOut: bigint;
}

/**
 * The exact result of swapping `amountIn` against the reserves.
 * @throws ProtocolError `invalid_amount` for a non-positive amount, empty reserves or a fee
 *   outside [0, 10 000) bps.
 */
export function swapOut(
  reserveIn: bigint,
  reserveOut: bigint,
  amountIn: bigint,
  feeBps: bigint,
): SwapQuoteMath {
  if (amountIn <= 0n)
    throw new ProtocolError('invalid_amount', `amount: expected more than 0, got ${amountIn}`);
  if (reserveIn <= 0n || reserveOut <= 0n) {
    throw new ProtocolError('invalid_amount', 'the pool has no liquidity on one side');
  }
  if (feeBps < 0n || feeBps >= BPS_DENOMINATOR) {
    throw new ProtocolError('invalid_amount', `fee: expected [0, 10000) bps, got ${feeBps}`);
  }
  const fee = mulDivCeil(amountIn, feeBps, BPS_DENOMINATOR);
  const netIn = amountIn - fee;
  const amountOut = mulDivFloor(reserveOut, netIn, reserveIn + netIn);
  return {
    amountIn,
    fee,
    netIn,
    amountOut,
    newReserveIn: reserveIn + netIn,
    newReserveOut: reserveOut - amountOut,
  };
}

/**
 * The effective price of a swap, `to` whole tokens per 1 whole `from` token, in 10^-18 units,
 * rounded down: `amountOut * 10^decIn * 10^18 / (amountIn * 10^decOut)`.
 */
export function effectivePrice(amountIn: bigint, amountOut: bigint, decIn: number, decOut: number): bigint {
  if (amountIn <= 0n) return 0n;
  return mulDivFloor(amountOut * pow10(decIn), pow10(PRICE_DECIMALS), amountIn * pow10(decOut));
}

/**
 * Price impact of the trade (the quote's `slippage`), for display: how much worse the price
 * obtained for the net input is than the spot price `reserveOut / reserveIn`,
 * `1 - amountOut * reserveIn / (netIn * reserveOut)`, in [0, 1]. The fee is reported apart.
 */
export function priceImpact(q: SwapQuoteMath, reserveIn: bigint, reserveOut: bigint): number {
  if (q.netIn <= 0n) return 1;
  const obtained = q.amountOut * reserveIn;
  const spot = q.netIn * reserveOut;
  return ratioToNumber(spot - obtained, spot);
}
