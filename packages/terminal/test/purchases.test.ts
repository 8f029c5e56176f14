import { createClient, Signer } from '@tensormine/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPromtoolClean } from '../../../test-support/prometheus.ts';
import { Browserless, type Env, newWallet, pay, startEnv, type Wallet } from './env.js';

/**
 * Purchases against a real validator: the buyer pays the treasury with a signed transfer (the
 * SDK), then names the transfer; the terminal reads it on the ledger before it grants anything.
 */

const DAY = 86_400;
let env: Env;
let buyer: Wallet;
let other: Wallet;
let session: Browserless;

beforeAll(async () => {
  buyer = newWallet();
  other = newWallet();
  env = await startEnv({
    users: [
      { wallet: buyer, token: 'PTM', amount: '5000' },
      { wallet: buyer, token: 'SOL', amount: '10' },
      { wallet: other, token: 'PTM', amount: '5000' },
    ],
  });
  session = new Browserless(env.base);
  await session.proveWallet(buyer);
});

afterAll(async () => {
  await env?.close();
});

const buy = (s: Browserless, path: string, wallet: Wallet, currency: string, transferId: string) =>
  s.call('POST', path, { wallet: wallet.address, currency, transfer_id: transferId });

describe('purchases', () => {
  it('a real transfer of the price to the treasury buys premium for 30 days; a second one extends it', async () => {
    const transferId = await pay(env.validatorUrl, buyer, env.treasury.hex, 'PTM', '200');
    const t0 = Math.floor(Date.now() / 1000);
    const first = await buy(session, '/api/crypto/premium-purchase', buyer, 'PTM', transferId);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      product: 'premium',
      wallet: buyer.address,
      amount: '200',
      currency: 'PTM',
      transfer_id: transferId,
    });
    const until = first.json.valid_until as number;
    expect(until).toBeGreaterThanOrEqual(t0 + 30 * DAY);
    expect(until).toBeLessThanOrEqual(t0 + 30 * DAY + 5);

    const second = await buy(
      session,
      '/api/crypto/premium-purchase',
      buyer,
      'SOL',
      await pay(env.validatorUrl, buyer, env.treasury.hex, 'SOL', '0.1'),
    );
    expect(second.status).toBe(200);
    expect(second.json.valid_until).toBe(until + 30 * DAY);
    const me = await session.call('GET', '/api/session');
    expect(me.json.entitlements).toEqual([{ product: 'premium', valid_until: until + 30 * DAY }]);
  });

  it('a transfer buys one thing once', async () => {
    const transferId = await pay(env.validatorUrl, buyer, env.treasury.hex, 'PTM', '300');
    expect((await buy(session, '/api/crypto/no-ads-purchase', buyer, 'PTM', transferId)).status).toBe(200);
    const again = await buy(session, '/api/crypto/no-ads-purchase', buyer, 'PTM', transferId);
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('payment_already_used');
    const other = await buy(session, '/api/crypto/premium-purchase', buyer, 'PTM', transferId);
    expect(other.json.code).toBe('payment_already_used');
    // Racing the same transfer: one purchase.
    const fresh = await pay(env.validatorUrl, buyer, env.treasury.hex, 'PTM', '100');
    const raced = await Promise.all(
      Array.from({ length: 6 }, () => buy(session, '/api/crypto/no-ads-purchase', buyer, 'PTM', fresh)),
    );
    expect(raced.filter((r) => r.status === 200)).toHaveLength(1);
    expect(raced.filter((r) => r.json.code === 'payment_already_used')).toHaveLength(5);
  });

  it('no-ads does not expire by default', async () => {
    const me = await session.call('GET', '/api/session');
    expect(me.json.entitlements).toContainEqual({ product: 'no_ads', valid_until: null });
  });

  it('counts the purchases by product and result (the terminal’s metrics)', async () => {
    const text = await env.terminal.app.metrics.text();
    expect(text).toContain('tensormine_terminal_purchases_total{product="premium",result="ok"} 2\n');
    expect(text).toContain('tensormine_terminal_purchases_total{product="no_ads",result="ok"} 2\n');
    expect(text).toContain(
      'tensormine_terminal_purchases_total{product="no_ads",result="payment_already_used"} 6\n',
    );
    expect(text).toContain(
      'tensormine_terminal_purchases_total{product="premium",result="payment_already_used"} 1\n',
    );
    await expectPromtoolClean(text);
  });

  it('refuses an unknown transfer', async () => {
    const r = await buy(session, '/api/crypto/premium-purchase', buyer, 'PTM', 'no-such-transfer');
    expect(r.status).toBe(404);
    expect(r.json.code).toBe('transfer_not_found');
  });

  it('refuses a transfer below the price, saying the price', async () => {
    const transferId = await pay(env.validatorUrl, buyer, env.treasury.hex, 'PTM', '199.999999999');
    const r = await buy(session, '/api/crypto/premium-purchase', buyer, 'PTM', transferId);
    expect(r.status).toBe(422);
    expect(r.json).toMatchObject({ code: 'payment_too_small', details: { price: '200', currency: 'PTM' } });
  });

  it('refuses a transfer to another recipient, in another token, or from another wallet', async () => {
    const elsewhere = await pay(env.validatorUrl, buyer, other.hex, 'PTM', '500');
    const r1 = await buy(session, '/api/crypto/premium-purchase', buyer, 'PTM', elsewhere);
    expect(r1.status).toBe(422);
    expect(r1.json.code).toBe('payment_invalid');
    expect(r1.json.message).toContain('not sent to the treasury');

    const inSol = await pay(env.validatorUrl, buyer, env.treasury.hex, 'SOL', '5');
    const r2 = await buy(session, '/api/crypto/premium-purchase', buyer, 'PTM', inSol);
    expect(r2.json.code).toBe('payment_invalid');
    expect(r2.json.message).toContain('is in SOL, not PTM');

    // Someone else's payment cannot be claimed by the buyer.
    const theirs = await pay(env.validatorUrl, other, env.treasury.hex, 'PTM', '200');
    const r3 = await buy(session, '/api/crypto/premium-purchase', buyer, 'PTM', theirs);
    expect(r3.json.code).toBe('payment_invalid');
    expect(r3.json.message).toContain('not sent from your wallet');
  });

  it('needs the buyer to have proven the wallet in this session', async () => {
    const transferId = await pay(env.validatorUrl, other, env.treasury.hex, 'PTM', '200');
    const stranger = new Browserless(env.base);
    const r1 = await buy(stranger, '/api/crypto/premium-purchase', other, 'PTM', transferId);
    expect(r1.status).toBe(401);
    expect(r1.json.code).toBe('session_required');
    // Proven wallet A cannot buy for wallet B.
    const r2 = await buy(session, '/api/crypto/premium-purchase', other, 'PTM', transferId);
    expect(r2.status).toBe(403);
    expect(r2.json.code).toBe('wallet_mismatch');
  });
});

describe('validator data through the SDK', () => {
  it('serves the staking lock terms and the vault bounds', async () => {
    const s = new Browserless(env.base);
    const staking = await s.call('GET', '/api/staking/options');
    expect(staking.json).toEqual({
      token: 'PTM',
      options: [
        { lock_period_days: 0, label: 'Flexible', yield_rate: 0.03, early_unstake_penalty: 0 },
        { lock_period_days: 7, label: '7 days', yield_rate: 0.06, early_unstake_penalty: 0.01 },
        { lock_period_days: 30, label: '30 days', yield_rate: 0.12, early_unstake_penalty: 0.03 },
      ],
    });
    const vault = await s.call('GET', '/api/vault/options');
    expect(vault.json).toMatchObject({ tokens: ['PTM', 'SOL', 'USDC'], min_lock_s: 1 });
  });

  it("serves the wallet's positions, the pools and quotes from the validator, and passes its refusals on", async () => {
    const client = createClient({
      url: env.validatorUrl,
      healthCheckIntervalMs: 0,
      signer: Signer.fromSecretKey(buyer.key.secretKey),
    });
    await client.economy.stake({ amount: '50', lock_period_days: 7 });
    await client.economy.vaultDeposit({
      token: 'PTM',
      amount: '20',
      unlock_at: Math.floor(Date.now() / 1000) + 3600,
    });
    await client.close();
    const s = new Browserless(env.base);
    const stakes = await s.call('GET', `/api/staking/positions/${buyer.address}`);
    expect(stakes.status).toBe(200);
    expect(stakes.json.stakes).toMatchObject([{ amount: '50', lock_period_days: 7 }]);
    const vaults = await s.call('GET', `/api/vault/positions/${buyer.address}`);
    expect(vaults.json.vaults).toMatchObject([{ token: 'PTM', amount: '20' }]);
    const pools = await s.call('GET', '/api/swap/pools');
    expect((pools.json.pools as { pair: string }[]).map((p) => p.pair).sort()).toEqual([
      'PTM/SOL',
      'PTM/USDC',
    ]);
    const quote = await s.call('GET', '/api/swap/quote?from_token=PTM&to_token=SOL&amount=10');
    expect(quote.json).toMatchObject({
      from_token: 'PTM',
      to_token: 'SOL',
      from_amount: '10',
      fee_token: 'PTM',
    });
    // The validator's refusal, with its code; a malformed wallet is refused before asking.
    const self = await s.call('GET', '/api/swap/quote?from_token=PTM&to_token=PTM&amount=10');
    expect(self.status).toBe(400);
    expect(self.json.code).toBe('validation_failed');
    const bad = await s.call('GET', '/api/staking/positions/0OIl');
    expect(bad.status).toBe(400);
  });
});
