import {
  effectivePrice,
  FEES_ACCOUNT,
  formatAmount,
  formatPrice,
  getToken,
  parseAmount,
  priceImpact,
  type SwapQuoteMath,
  swapOut,
  swapPoolAccount,
} from '@tensormine/protocol';
import { nowSeconds } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { StorageTx, SwapPoolRecord } from '../../store/types.js';
import { positiveAmount } from './amounts.js';
import { executeOnce } from './requests.js';

/** How long a quote is indicative, in seconds (it reserves nothing). */
export const QUOTE_TTL_S = 30;
/** volume_24h looks back this far. */
const DAY_S = 86_400;

interface Priced {
  readonly pool: SwapPoolRecord;
  readonly math: SwapQuoteMath;
  readonly reserveIn: bigint;
  readonly reserveOut: bigint;
}

async function price(tx: StorageTx, from: string, to: string, amountIn: bigint): Promise<Priced> {
  if (from === to)
    throw new ApiError('validation_failed', 'to_token: expected a token other than from_token');
  getToken(from);
  getToken(to);
  const pool = await tx.economy.swapPools.find(from, to);
  if (pool === undefined) {
    const pools = (await tx.economy.swapPools.list()).map((p) => p.pair);
    throw new ApiError(
      'swap_pool_not_found',
      `no pool trades ${from} for ${to}; pools: ${pools.join(', ') || 'none'}`,
      {
        pools,
      },
    );
  }
  const account = swapPoolAccount(pool.pair);
  const reserveIn = await tx.ledger.balance(account, from);
  const reserveOut = await tx.ledger.balance(account, to);
  const math = swapOut(reserveIn, reserveOut, amountIn, pool.feeBps);
  if (math.amountOut === 0n) {
    throw new ApiError(
      'amount_too_small',
      `swapping ${formatAmount(amountIn, from)} ${from} would yield 0 ${to} after the fee and rounding; swap more`,
    );
  }
  return { pool, math, reserveIn, reserveOut };
}

/** POST /swap/quote, POST /swap/execute, GET /swap/pools (rules: protocol economy/swap.ts). */
export function swapHandlers() {
  return routeHandlers({
    async swapQuote({ body }, ctx) {
      const amountIn = positiveAmount(body.amount, body.from_token);
      const now = nowSeconds(ctx);
      const p = await ctx.storage.read((tx) => price(tx, body.from_token, body.to_token, amountIn));
      const exact = effectivePrice(
        amountIn,
        p.math.amountOut,
        getToken(body.from_token).decimals,
        getToken(body.to_token).decimals,
      );
      const priceDecimal = formatPrice(exact);
      return {
        from_token: body.from_token,
        to_token: body.to_token,
        from_amount: formatAmount(amountIn, body.from_token),
        to_amount: formatAmount(p.math.amountOut, body.to_token),
        price: Number(priceDecimal),
        price_decimal: priceDecimal,
        slippage: priceImpact(p.math, p.reserveIn, p.reserveOut),
        fee: formatAmount(p.math.fee, body.from_token),
        fee_token: body.from_token,
        expires_at: now + QUOTE_TTL_S,
      };
    },

    async swapExecute({ body, raw, claimNonce }, ctx) {
      const amountIn = positiveAmount(body.amount, body.from_token);
      const minReceived = parseAmount(body.min_received, body.to_token, 'min_received');
      return executeOnce(ctx, raw, claimNonce, 'swapExecute', async (tx, now) => {
        const { pool, math } = await price(tx, body.from_token, body.to_token, amountIn);
        if (math.amountOut < minReceived) {
          throw new ApiError(
            'slippage_exceeded',
            `the swap would yield ${formatAmount(math.amountOut, body.to_token)} ${body.to_token}, below min_received ${body.min_received}; nothing moved`,
            { to_amount: formatAmount(math.amountOut, body.to_token), min_received: body.min_received },
          );
        }
        const id = `x-${await tx.economy.swapPools.nextSwapSerial()}`;
        const account = swapPoolAccount(pool.pair);
        const user = body.pubkey;
        const from = body.from_token;
        const to = body.to_token;
        await tx.ledger.apply([
          { type: 'swap', pubkey: user, token: from, amount: -math.netIn, timestamp: now, ref: id },
          ...(math.fee > 0n
            ? [
                {
                  type: 'fee' as const,
                  pubkey: user,
                  token: from,
                  amount: -math.fee,
                  timestamp: now,
                  ref: id,
                },
                {
                  type: 'fee' as const,
                  pubkey: FEES_ACCOUNT,
                  token: from,
                  amount: math.fee,
                  timestamp: now,
                  ref: id,
                },
              ]
            : []),
          { type: 'swap', pubkey: account, token: from, amount: math.netIn, timestamp: now, ref: id },
          { type: 'swap', pubkey: account, token: to, amount: -math.amountOut, timestamp: now, ref: id },
          { type: 'swap', pubkey: user, token: to, amount: math.amountOut, timestamp: now, ref: id },
        ]);
        return {
          swap_id: id,
          from_token: from,
          to_token: to,
          from_amount: formatAmount(amountIn, from),
          to_amount: formatAmount(math.amountOut, to),
          fee: formatAmount(math.fee, from),
          fee_token: from,
          executed_at: now,
        };
      });
    },

    /** liquidity: both reserves valued in the quote token at the spot price (2 x the quote reserve). */
    async getSwapPools(_request, ctx) {
      const since = nowSeconds(ctx) - DAY_S;
      const pools = await ctx.storage.read(async (tx) => {
        const out = [];
        for (const pool of await tx.economy.swapPools.list()) {
          const account = swapPoolAccount(pool.pair);
          out.push({
            pool,
            base: await tx.ledger.balance(account, pool.base),
            quote: await tx.ledger.balance(account, pool.quote),
            volume: await tx.economy.swapPools.movedSince(account, 'swap', pool.quote, since),
          });
        }
        return out;
      });
      return {
        pools: pools.map(({ pool, base, quote, volume }) => ({
          pair: pool.pair,
          liquidity: formatAmount(quote * 2n, pool.quote),
          volume_24h: formatAmount(volume, pool.quote),
          reserves: [
            { token: pool.base, amount: formatAmount(base, pool.base) },
            { token: pool.quote, amount: formatAmount(quote, pool.quote) },
          ],
          fee_rate: Number(pool.feeBps) / 10_000,
        })),
      };
    },
  });
}
