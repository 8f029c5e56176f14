import type {
  EconomyRepos,
  EconomyRequestRecord,
  EconomyRequestRepo,
  TransferRecord,
  TransferRepo,
} from '../types.js';
import type { Row } from './executor.js';
import { SqlOrderRepo } from './orders.js';
import type { Scope } from './scope.js';
import { SqlStakeRepo } from './stakes.js';
import { SqlSwapPoolRepo } from './swap-pools.js';
import { bigintOf, int, nullableText, text } from './values.js';
import { SqlVaultRepo } from './vaults.js';

/** The economy repositories (tables of migration step "economy"): requests and transfers here, one file per product beside. */
export function sqlEconomyRepos(scope: Scope): EconomyRepos {
  return {
    requests: new SqlRequestRepo(scope),
    transfers: new SqlTransferRepo(scope),
    stakes: new SqlStakeRepo(scope),
    vaults: new SqlVaultRepo(scope),
    swapPools: new SqlSwapPoolRepo(scope),
    orders: new SqlOrderRepo(scope),
    async supply() {
      return sumByToken(await scope.read().prepare('SELECT token, amount AS value FROM balances').all());
    },
    async issued() {
      return sumByToken(
        await scope
          .read()
          .prepare(
            "SELECT token, credited AS value FROM ledger_totals WHERE type IN ('genesis', 'mining_reward')",
          )
          .all(),
      );
    },
  };
}

function sumByToken(rows: readonly Row[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const row of rows) {
    const token = text(row, 'token');
    out.set(token, (out.get(token) ?? 0n) + bigintOf(row, 'value'));
  }
  return out;
}

export class SqlRequestRepo implements EconomyRequestRepo {
  constructor(private readonly scope: Scope) {}

  async get(pubkey: string, nonce: string): Promise<EconomyRequestRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(
        'SELECT pubkey, nonce, request_hash, operation, result, created_at FROM economy_requests WHERE pubkey = ? AND nonce = ?',
      )
      .get(pubkey, nonce);
    if (row === undefined) return undefined;
    return {
      pubkey: text(row, 'pubkey'),
      nonce: text(row, 'nonce'),
      requestHash: text(row, 'request_hash'),
      operation: text(row, 'operation'),
      result: text(row, 'result'),
      createdAt: int(row, 'created_at'),
    };
  }

  async insert(r: EconomyRequestRecord): Promise<void> {
    await this.scope
      .write('economy.requests.insert')
      .prepare(
        'INSERT INTO economy_requests (pubkey, nonce, request_hash, operation, result, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(r.pubkey, r.nonce, r.requestHash, r.operation, r.result, r.createdAt);
  }

  async prune(before: number): Promise<number> {
    const result = await this.scope
      .write('economy.requests.prune')
      .prepare('DELETE FROM economy_requests WHERE created_at < ?')
      .run(before);
    return Number(result.changes);
  }
}

export class SqlTransferRepo implements TransferRepo {
  constructor(private readonly scope: Scope) {}

  async insert(t: TransferRecord): Promise<void> {
    await this.scope
      .write('economy.transfers.insert')
      .prepare(
        'INSERT INTO transfers (id, from_pubkey, to_pubkey, token, amount, memo, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(t.id, t.from, t.to, t.token, t.amount.toString(), t.memo, t.timestamp);
  }

  async get(id: string): Promise<TransferRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(
        'SELECT id, from_pubkey, to_pubkey, token, amount, memo, timestamp FROM transfers WHERE id = ?',
      )
      .get(id);
    if (row === undefined) return undefined;
    return {
      id: text(row, 'id'),
      from: text(row, 'from_pubkey'),
      to: text(row, 'to_pubkey'),
      token: text(row, 'token'),
      amount: bigintOf(row, 'amount'),
      memo: nullableText(row, 'memo'),
      timestamp: int(row, 'timestamp'),
    };
  }
}
