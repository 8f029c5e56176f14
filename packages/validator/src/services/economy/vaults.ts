import {
  formatAmount,
  getToken,
  isoTime,
  spanText,
  unlockProblem,
  VAULT_ACCOUNT,
} from '@tensormine/protocol';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { VaultRecord } from '../../store/types.js';
import { positiveAmount } from './amounts.js';
import { executeOnce } from './requests.js';

function vaultWire(v: VaultRecord) {
  return {
    vault_id: v.id,
    pubkey: v.pubkey,
    token: v.token,
    amount: formatAmount(v.amount, v.token),
    unlock_at: v.unlockAt,
    withdrawn: v.withdrawnAt !== null,
    created_at: v.createdAt,
    withdrawn_at: v.withdrawnAt,
  };
}

/** POST /vault/deposit, POST /vault/withdraw, GET /vault/:pubkey (rules: protocol economy/vault.ts). */
export function vaultHandlers() {
  return routeHandlers({
    async vaultDeposit({ body, raw, claimNonce }, ctx) {
      getToken(body.token);
      const amount = positiveAmount(body.amount, body.token);
      return executeOnce(ctx, raw, claimNonce, 'vaultDeposit', async (tx, now) => {
        const problem = unlockProblem(body.unlock_at, now);
        if (problem !== undefined) {
          throw new ApiError('unlock_time_invalid', problem, { unlock_at: body.unlock_at, now });
        }
        const serial = await tx.economy.vaults.nextSerial();
        const id = `v-${serial}`;
        await tx.ledger.apply([
          {
            type: 'vault_deposit',
            pubkey: body.pubkey,
            token: body.token,
            amount: -amount,
            timestamp: now,
            ref: id,
          },
          {
            type: 'vault_deposit',
            pubkey: VAULT_ACCOUNT,
            token: body.token,
            amount,
            timestamp: now,
            ref: id,
          },
        ]);
        const record: VaultRecord = {
          id,
          serial,
          pubkey: body.pubkey,
          token: body.token,
          amount,
          unlockAt: body.unlock_at,
          createdAt: now,
          withdrawnAt: null,
        };
        await tx.economy.vaults.insert(record);
        return vaultWire(record);
      });
    },

    async vaultWithdraw({ body, raw, claimNonce }, ctx) {
      return executeOnce(ctx, raw, claimNonce, 'vaultWithdraw', async (tx, now) => {
        const vault = await tx.economy.vaults.get(body.vault_id);
        if (vault === undefined || vault.pubkey !== body.pubkey) {
          throw new ApiError('vault_not_found', `no vault ${body.vault_id} belongs to ${body.pubkey}`, {
            vault_id: body.vault_id,
          });
        }
        if (vault.withdrawnAt !== null) {
          throw new ApiError(
            'vault_withdrawn',
            `vault ${vault.id} was already withdrawn at ${isoTime(vault.withdrawnAt)}`,
            {
              vault_id: vault.id,
              withdrawn_at: vault.withdrawnAt,
            },
          );
        }
        if (now < vault.unlockAt) {
          throw new ApiError(
            'vault_locked',
            `vault ${vault.id} unlocks at ${isoTime(vault.unlockAt)}, in ${spanText(vault.unlockAt - now)}; withdraw at or after it`,
            { vault_id: vault.id, unlock_at: vault.unlockAt, now },
          );
        }
        await tx.ledger.apply([
          {
            type: 'vault_withdraw',
            pubkey: VAULT_ACCOUNT,
            token: vault.token,
            amount: -vault.amount,
            timestamp: now,
            ref: vault.id,
          },
          {
            type: 'vault_withdraw',
            pubkey: vault.pubkey,
            token: vault.token,
            amount: vault.amount,
            timestamp: now,
            ref: vault.id,
          },
        ]);
        await tx.economy.vaults.markWithdrawn(vault.id, now);
        return vaultWire({ ...vault, withdrawnAt: now });
      });
    },

    async getVaults({ params }, ctx) {
      const vaults = await ctx.storage.read((tx) => tx.economy.vaults.list(params.pubkey, 1000));
      return { vaults: vaults.map(vaultWire) };
    },
  });
}
