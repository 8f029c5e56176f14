import {
  DEFAULT_PAGE_LIMIT,
  formatAmount,
  formatSignedAmount,
  getToken,
  isDeviceType,
} from '@tensormine/protocol';
import { routeHandlers } from '../../http/handlers.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { REWARD_TOKEN } from './rules.js';

/** GET /miners/:pubkey and GET /ledger/entries. */
export function accountHandlers() {
  return routeHandlers({
    /**
     * A miner account. Every well-formed key has one (an unknown key is registered: false
     * with zero counts and no balances); a malformed key is a 400 from the schema.
     */
    async getMiner({ params }, ctx) {
      const pubkey = params.pubkey;
      const a = await ctx.storage.read(async (tx) => ({
        device: await tx.devices.get(pubkey),
        miner: await tx.miners.get(pubkey),
        balances: await tx.ledger.balances(pubkey),
        rewards: await tx.ledger.rewardsTotal(pubkey, REWARD_TOKEN),
      }));
      const deviceType = a.device && isDeviceType(a.device.deviceType) ? a.device.deviceType : null;
      return {
        pubkey,
        registered: a.device !== undefined,
        device_type: deviceType,
        registered_at: a.device?.registeredAt ?? null,
        balances: a.balances
          .filter((b) => b.amount > 0n)
          .map((b) => ({ token: b.token, amount: formatAmount(b.amount, b.token) })),
        proofs_accepted: a.miner?.proofsAccepted ?? 0,
        proofs_rejected: a.miner?.proofsRejected ?? 0,
        blocks_accepted: a.miner?.blocksAccepted ?? 0,
        rewards_total: formatAmount(a.rewards, REWARD_TOKEN),
        last_seen: a.miner?.lastSeen ?? null,
      };
    },

    /** Newest first; next_cursor encodes the id of the last entry served. */
    async getLedgerEntries({ query }, ctx) {
      const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
      if (query.token !== undefined) getToken(query.token); // unknown_token for an unlisted symbol
      const beforeId =
        query.cursor === undefined ? undefined : decodeCursor('ledger', query.cursor, 'GET /ledger/entries');
      const rows = await ctx.storage.read((tx) =>
        tx.ledger.list({
          ...(query.pubkey !== undefined ? { pubkey: query.pubkey } : {}),
          ...(query.token !== undefined ? { token: query.token } : {}),
          ...(query.type !== undefined ? { type: query.type } : {}),
          ...(beforeId !== undefined ? { beforeId } : {}),
          limit: limit + 1,
        }),
      );
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        entries: page.map((e) => ({
          id: String(e.id),
          type: e.type,
          amount: formatSignedAmount(e.amount, e.token),
          token: e.token,
          timestamp: e.timestamp,
          pubkey: e.pubkey,
          ref: e.ref,
        })),
        next_cursor: rows.length > limit && last ? encodeCursor('ledger', last.id) : null,
      };
    },
  });
}
