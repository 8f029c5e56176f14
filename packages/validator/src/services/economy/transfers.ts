import { formatAmount, parseAmount, TOKEN_SYMBOLS, transferId } from '@tensormine/protocol';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { TransferRecord } from '../../store/types.js';
import { executeOnce } from './requests.js';

function transferWire(t: TransferRecord) {
  return {
    transfer_id: t.id,
    from: t.from,
    to: t.to,
    token: t.token,
    amount: formatAmount(t.amount, t.token),
    memo: t.memo,
    timestamp: t.timestamp,
  };
}

/** POST /transfer, GET /transfers/:transfer_id, GET /balances/:pubkey. */
export function transferHandlers() {
  return routeHandlers({
    async transfer({ body, signer, raw, claimNonce }, ctx) {
      if (body.from !== signer) {
        throw new ApiError(
          'pubkey_mismatch',
          `from: the body names ${body.from} but the request was signed by ${signer}; a transfer is signed by its sender`,
          { body_pubkey: body.from, signer_pubkey: signer },
        );
      }
      if (body.to === body.from) {
        throw new ApiError(
          'validation_failed',
          'to: expected a key other than from (a transfer to oneself moves nothing)',
        );
      }
      const amount = parseAmount(body.amount, body.token);
      if (amount === 0n) throw new ApiError('amount_too_small', 'amount: expected more than 0');
      return executeOnce(
        ctx,
        raw,
        claimNonce,
        'transfer',
        async (tx, now, key) => {
          const record: TransferRecord = {
            // Computable by the client from what it signed (protocol transferId).
            id: transferId({ from: body.from, nonce: key.nonce, timestamp: key.timestamp }),
            from: body.from,
            to: body.to,
            token: body.token,
            amount,
            memo: body.memo ?? null,
            timestamp: now,
          };
          await tx.ledger.apply([
            {
              type: 'transfer',
              pubkey: record.from,
              token: record.token,
              amount: -amount,
              timestamp: now,
              ref: record.id,
            },
            {
              type: 'transfer',
              pubkey: record.to,
              token: record.token,
              amount,
              timestamp: now,
              ref: record.id,
            },
          ]);
          // Left in flight (it travels with the COMMIT; a failure fails the transaction): its
          // id comes from the nonce claimed above, so no other transfer holds it.
          tx.inFlight(tx.economy.transfers.insert(record));
          return transferWire(record);
        },
        { isolation: 'row-locks', withClaim: true },
      );
    },

    async getTransfer({ params }, ctx) {
      const record = await ctx.storage.read((tx) => tx.economy.transfers.get(params.transfer_id));
      if (record === undefined) {
        throw new ApiError('transfer_not_found', `no transfer with id ${params.transfer_id}`, {
          transfer_id: params.transfer_id,
        });
      }
      return transferWire(record);
    },

    /** Per listed token: the spendable balance and what the key holds in stakes, vaults and orders. */
    async getBalances({ params }, ctx) {
      const pubkey = params.pubkey;
      const held = await ctx.storage.read(async (tx) => ({
        balances: await tx.ledger.balances(pubkey),
        stakes: await tx.economy.stakes.listOpen(pubkey, 1_000_000),
        vaults: (await tx.economy.vaults.list(pubkey, 1_000_000)).filter((v) => v.withdrawnAt === null),
        orders: await tx.economy.orders.listResting({ pubkey, afterSerial: 0, limit: 1_000_000 }),
      }));
      const sum = (token: string, items: readonly { token: string; amount: bigint }[]) =>
        items.filter((i) => i.token === token).reduce((s, i) => s + i.amount, 0n);
      const escrows = held.orders.map((o) => ({
        token: o.side === 'sell' ? o.token : o.quoteToken,
        amount: o.escrow,
      }));
      return {
        pubkey,
        balances: TOKEN_SYMBOLS.map((token) => {
          const available = sum(token, held.balances);
          const staked = sum(token, held.stakes);
          const inVaults = sum(token, held.vaults);
          const inOrders = sum(token, escrows);
          return {
            token,
            available: formatAmount(available, token),
            staked: formatAmount(staked, token),
            in_vaults: formatAmount(inVaults, token),
            in_orders: formatAmount(inOrders, token),
            total: formatAmount(available + staked + inVaults + inOrders, token),
          };
        }),
      };
    },
  });
}
