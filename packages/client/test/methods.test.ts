import { routesOf, verifySignedRequest } from '@tensormine/protocol';
import { MockAgent } from 'undici';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type CallOptions,
  CLIENT_METHODS,
  type HexWork,
  Signer,
  type SubmitWorkResult,
  type TensormineClient,
  type TensorWork,
  type Work,
} from '../src/index.js';
import { client, track } from './helpers.js';

/** Every validator operation has one named method, and each sends its route's request. */

const V = 'http://v.test';
const KEY = 'cd'.repeat(32);

describe('CLIENT_METHODS', () => {
  it('names every validator operation of ROUTES exactly once', () => {
    const named = Object.values(CLIENT_METHODS).flatMap((group) => Object.values(group));
    expect([...named].sort()).toEqual(
      routesOf('validator')
        .map((r) => r.operationId)
        .sort(),
    );
    expect(new Set(named).size).toBe(named.length);
  });
});

type Call = (c: TensormineClient, o: CallOptions) => Promise<unknown>;

/** A sample call of every method, with the request it must send. */
const CALLS: Record<string, [Call, string]> = {
  'node.health': [(c, o) => c.node.health(o), 'GET /health'],
  'node.status': [(c, o) => c.node.status(o), 'GET /status'],
  'node.peers': [(c, o) => c.node.peers(o), 'GET /network/peers'],
  'v40.challenge': [
    (c, o) => c.v40.challenge({ slot: 1, slot_hash: 'h', device_type: 'esp32' }, o),
    'POST /challenge',
  ],
  'v40.submit': [
    (c, o) =>
      c.v40.submit(
        {
          proof: {
            challenge_id: 'c-1',
            challenge_hash: 'ab'.repeat(32),
            tensor_result_hash: 'ab'.repeat(32),
            mml_score: 0.5,
            path_signature: 'ab'.repeat(8),
            path_distance: 1,
            computation_nonce: 1,
            computation_hash: 'ab'.repeat(32),
            miner_pubkey: KEY,
          },
        },
        o,
      ),
    'POST /submit',
  ],
  'hexchain.challenge': [
    (c, o) => c.hexchain.challenge({ slot: 1, slot_hash: 'h' }, o),
    'POST /api/hexchain/challenge',
  ],
  'hexchain.submit': [
    (c, o) =>
      c.hexchain.submit(
        {
          challenge_id: 'h-1',
          block: { coord: { q: 0, r: -1, s: 1 }, pow_hash: 'ab'.repeat(32), nonce: 3, miner_pubkey: KEY },
        },
        o,
      ),
    'POST /api/hexchain/submit',
  ],
  'hexchain.events': [
    async (c) => {
      const controller = new AbortController();
      const first = c.hexchain.events({ signal: controller.signal, reconnectDelayMs: 5000 }).next();
      setTimeout(() => controller.abort(), 100);
      return first;
    },
    'GET /api/hexchain/events',
  ],
  'hexchain.status': [(c, o) => c.hexchain.status(o), 'GET /api/hexchain/status'],
  'hexchain.lattice': [
    (c, o) => c.hexchain.lattice({ limit: 2, cursor: 'abc' }, o),
    'GET /api/hexchain/lattice?limit=2&cursor=abc',
  ],
  'hexchain.block': [
    (c, o) => c.hexchain.block({ q: -2, r: 1, s: 1 }, o),
    'GET /api/hexchain/lattice/-2/1/1',
  ],
  'miners.get': [(c, o) => c.miners.get(KEY, o), `GET /miners/${KEY}`],
  'miners.register': [(c, o) => c.miners.register({ port: 4000 }, o), 'POST /devices/register signed'],
  'miners.devices': [(c, o) => c.miners.devices({ limit: 3 }, o), 'GET /devices?limit=3'],
  'pool.info': [(c, o) => c.pool.info(o), 'GET /pool'],
  'pool.status': [(c, o) => c.pool.status(o), 'GET /pool/status'],
  'pool.join': [(c, o) => c.pool.join({ stake_amount: '100' }, o), 'POST /pool/join signed'],
  'pool.leave': [(c, o) => c.pool.leave(undefined, o), 'POST /pool/leave signed'],
  'economy.stake': [(c, o) => c.economy.stake({ amount: '5', lock_period_days: 7 }, o), 'POST /stake signed'],
  'economy.unstake': [(c, o) => c.economy.unstake({ stake_id: 's-1' }, o), 'POST /unstake signed'],
  'economy.claim': [(c, o) => c.economy.claim({ stake_id: 's-1' }, o), 'POST /claim signed'],
  'economy.stakes': [(c, o) => c.economy.stakes(undefined, o), 'GET /stake/<signer>'],
  'economy.swapQuote': [
    (c, o) => c.economy.swapQuote({ from_token: 'PTM', to_token: 'USDC', amount: '2.5' }, o),
    'POST /swap/quote',
  ],
  'economy.swapExecute': [
    (c, o) =>
      c.economy.swapExecute({ from_token: 'PTM', to_token: 'USDC', amount: '2.5', min_received: '1' }, o),
    'POST /swap/execute signed',
  ],
  'economy.swapPools': [(c, o) => c.economy.swapPools(o), 'GET /swap/pools'],
  'economy.vaultDeposit': [
    (c, o) => c.economy.vaultDeposit({ token: 'SOL', amount: '1', unlock_at: 2_000_000_000 }, o),
    'POST /vault/deposit signed',
  ],
  'economy.vaultWithdraw': [
    (c, o) => c.economy.vaultWithdraw({ vault_id: 'v-1' }, o),
    'POST /vault/withdraw signed',
  ],
  'economy.vaults': [(c, o) => c.economy.vaults(KEY, o), `GET /vault/${KEY}`],
  'economy.orders': [(c, o) => c.economy.orders({ type: 'sell' }, o), 'GET /marketplace/orders?type=sell'],
  'economy.placeOrder': [
    (c, o) => c.economy.placeOrder({ type: 'sell', token: 'PTM', amount: '3', price: '0.25' }, o),
    'POST /marketplace/order signed',
  ],
  'economy.cancelOrder': [
    (c, o) => c.economy.cancelOrder({ order_id: 'o-1' }, o),
    'POST /marketplace/cancel signed',
  ],
  'economy.ledger': [(c, o) => c.economy.ledger({ token: 'PTM' }, o), 'GET /ledger/entries?token=PTM'],
  'economy.transfer': [
    (c, o) => c.economy.transfer({ to: KEY, token: 'PTM', amount: '1.5', memo: 'hi' }, o),
    'POST /transfer signed',
  ],
  'economy.getTransfer': [(c, o) => c.economy.getTransfer('t-1', o), 'GET /transfers/t-1'],
  'economy.balances': [(c, o) => c.economy.balances(KEY, o), `GET /balances/${KEY}`],
  'admin.metrics': [(c, o) => c.admin.metrics(o), 'GET /admin/metrics admin'],
  'admin.config': [(c, o) => c.admin.config(o), 'GET /admin/config admin'],
  'admin.setConfig': [(c, o) => c.admin.setConfig({ pool_strategy: 'pplns' }, o), 'POST /admin/config admin'],
};

describe('named methods', () => {
  it('have a sample call for every method', () => {
    const methods = Object.entries(CLIENT_METHODS).flatMap(([group, names]) =>
      Object.keys(names).map((name) => `${group}.${name}`),
    );
    expect(Object.keys(CALLS).sort()).toEqual(methods.sort());
  });

  it.each(Object.entries(CALLS))('%s sends %s', async (method, [call, expected]) => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    track(agent);
    const signer = Signer.generate();
    const seen: string[] = [];
    agent
      .get(V)
      .intercept({ path: () => true, method: () => true })
      .reply((opts) => {
        const headers = opts.headers as Record<string, string>;
        const body = typeof opts.body === 'string' ? opts.body : undefined;
        let line = `${opts.method} ${opts.path.replace(signer.publicKeyHex, '<signer>')}`;
        if (headers['x-tm-signature'] !== undefined) {
          const verdict = verifySignedRequest({
            method: opts.method,
            path: opts.path,
            body,
            headers,
            now: Date.now(),
          });
          expect(verdict).toMatchObject({ ok: true, publicKey: signer.publicKeyHex });
          const sent = JSON.parse(body ?? '{}');
          // A transfer names its sender in from; every other signed body in pubkey.
          expect(sent.pubkey ?? sent.from).toBe(signer.publicKeyHex);
          line += ' signed';
        }
        if (headers.authorization === 'Bearer admin-token-0123456789') line += ' admin';
        seen.push(line);
        return {
          statusCode: 200,
          data: { ok: true },
          responseOptions: { headers: { 'content-type': 'application/json' } },
        };
      });
    const c = client({
      url: V,
      dispatcher: agent,
      signer,
      adminToken: 'admin-token-0123456789',
      validateResponses: false,
    });
    await call(c, {});
    expect(seen, method).toEqual([expected]);
  });
});

describe('types', () => {
  it('type the mining helpers per protocol version', () => {
    expectTypeOf<SubmitWorkResult<HexWork>['result']>().toHaveProperty('block_hash');
    expectTypeOf<SubmitWorkResult<TensorWork>['result']>().toHaveProperty('tx_sig');
    expectTypeOf<SubmitWorkResult<Work>['version']>().toEqualTypeOf<'4.0' | '4.1'>();
  });

  it('type request() from ROUTES', () => {
    type Lattice = Awaited<ReturnType<TensormineClient['hexchain']['lattice']>>;
    expectTypeOf<Lattice['blocks']>().toBeArray();
    const typed = (c: TensormineClient) => c.request('getMiner', { params: { pubkey: KEY } });
    expectTypeOf<Awaited<ReturnType<typeof typed>>['balances']>().toBeArray();
  });
});

describe('secrets', () => {
  it('never shows the admin token or the secret key in toString, inspect or JSON', async () => {
    const { inspect } = await import('node:util');
    const signer = Signer.fromSecretKey('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
    const c = client({
      url: V,
      signer,
      adminToken: 'admin-token-0123456789',
      dispatcher: track(new MockAgent()),
    });
    for (const text of [String(c), inspect(c, { depth: 20, showHidden: true }), JSON.stringify(c)]) {
      expect(text).not.toContain('admin-token-0123456789');
      expect(text).not.toContain('9d61b19deffd5a60');
    }
    expect(String(c)).toBe(`TensormineClient(validator: ${V})`);
    expect(JSON.parse(JSON.stringify(c)).service).toBe('validator');
  });
});
