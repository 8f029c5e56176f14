import { randomBytes } from 'node:crypto';
import { signRequest, toHex } from '@tensormine/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browserless, balance, type Env, newWallet, startEnv, type Wallet } from './env.js';

/**
 * Paying from the page: the wallet signs a POST /transfer in the browser and the terminal
 * passes it to the validator exactly as signed (POST /api/crypto/transfer), only when it is a
 * payment from the proven wallet to the treasury; and what the page shows before: the offer
 * (prices, treasury, the welcome package and whether the treasury can pay it).
 */

let env: Env;
let buyer: Wallet;
let session: Browserless;

beforeAll(async () => {
  buyer = newWallet();
  env = await startEnv({
    users: [
      { wallet: buyer, token: 'PTM', amount: '1000' },
      { wallet: buyer, token: 'USDC', amount: '10' },
    ],
  });
  session = new Browserless(env.base);
  await session.proveWallet(buyer);
});

afterAll(async () => {
  await env?.close();
});

/** What the page sends: a transfer body and its signed-request parts, signed by `signer`. */
function signedPayment(
  signer: Wallet,
  body: Record<string, unknown>,
  options: { timestamp?: number } = {},
): { body: string; timestamp: string; nonce: string; signature: string } {
  const text = JSON.stringify(body);
  const nonce = randomBytes(16);
  const headers = signRequest({
    method: 'POST',
    path: '/transfer',
    body: text,
    secretKey: signer.key.secretKey,
    nonce,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
  });
  return {
    body: text,
    timestamp: headers['x-tm-timestamp'],
    nonce: headers['x-tm-nonce'],
    signature: headers['x-tm-signature'],
  };
}

const payment = (amount = '100', extra: Record<string, unknown> = {}) => ({
  from: buyer.hex,
  to: env.treasury.hex,
  token: 'PTM',
  amount,
  memo: 'tensormine terminal: no ads',
  ...extra,
});

describe('GET /api/offer', () => {
  it('gives the prices, the treasury to pay and the welcome package the treasury can pay', async () => {
    const offer = await session.call('GET', '/api/offer');
    expect(offer.status).toBe(200);
    expect(offer.json).toEqual({
      treasury: { wallet: env.treasury.address, pubkey: env.treasury.hex },
      welcome: {
        tokens: [
          { token: 'PTM', amount: '100' },
          { token: 'SOL', amount: '0.05' },
        ],
        status: 'ready',
        missing: [],
      },
      products: [
        {
          product: 'premium',
          days: 30,
          prices: [
            { currency: 'SOL', amount: '0.1' },
            { currency: 'PTM', amount: '200' },
          ],
          memo: 'tensormine terminal: premium',
        },
        {
          product: 'no_ads',
          days: null,
          prices: [
            { currency: 'SOL', amount: '0.05' },
            { currency: 'PTM', amount: '100' },
          ],
          memo: 'tensormine terminal: no ads',
        },
      ],
    });
  });

  it('says what an empty treasury lacks, at start and to the page', async () => {
    const poor = await startEnv({ fundTreasury: false });
    try {
      const offer = await new Browserless(poor.base).call('GET', '/api/offer');
      expect(offer.json.welcome).toEqual({
        tokens: [
          { token: 'PTM', amount: '100' },
          { token: 'SOL', amount: '0.05' },
        ],
        status: 'treasury_short',
        missing: [
          { token: 'PTM', needed: '100', available: '0' },
          { token: 'SOL', needed: '0.05', available: '0' },
        ],
      });
      expect(await poor.terminal.describeWelcome()).toEqual([
        `  warning: the treasury ${poor.treasury.address} cannot pay the welcome package (100 PTM and 0.05 SOL): it holds 0 PTM (needs 100), 0 SOL (needs 0.05); claims answer treasury_empty until it is funded (docs/terminal.md, "Try it locally")`,
      ]);
    } finally {
      await poor.close();
    }
    expect(await env.terminal.describeWelcome()).toEqual([
      '  welcome package 100 PTM and 0.05 SOL: the treasury holds it',
    ]);
  });
});

describe('POST /api/crypto/transfer', () => {
  it('passes a payment signed by the proven wallet to the validator; the same request again pays once', async () => {
    const request = signedPayment(buyer, payment());
    const first = await session.call('POST', '/api/crypto/transfer', request);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ from: buyer.hex, to: env.treasury.hex, token: 'PTM', amount: '100' });
    // A lost answer: the page sends the same signed request again.
    const again = await session.call('POST', '/api/crypto/transfer', request);
    expect(again.status).toBe(200);
    expect(again.json.transfer_id).toBe(first.json.transfer_id);
    expect(await balance(env.validatorUrl, buyer, 'PTM')).toBe('900');
    // It buys the product like any payment.
    const bought = await session.call('POST', '/api/crypto/no-ads-purchase', {
      wallet: buyer.address,
      currency: 'PTM',
      transfer_id: first.json.transfer_id,
    });
    expect(bought.status).toBe(200);
  });

  it('refuses what is not a payment of this wallet to the treasury, before the validator sees it', async () => {
    const stranger = newWallet();
    const cases: [string, ReturnType<typeof signedPayment>, Browserless, number, string][] = [
      [
        'no proven wallet',
        signedPayment(buyer, payment()),
        new Browserless(env.base),
        401,
        'session_required',
      ],
      [
        'from another wallet',
        signedPayment(stranger, payment('1', { from: stranger.hex })),
        session,
        403,
        'wallet_mismatch',
      ],
      [
        'to someone else',
        signedPayment(buyer, payment('1', { to: stranger.hex })),
        session,
        422,
        'payment_invalid',
      ],
      ['in USDC', signedPayment(buyer, payment('1', { token: 'USDC' })), session, 422, 'payment_invalid'],
      [
        'not a transfer',
        { ...signedPayment(buyer, payment()), body: '{"from":1}' },
        session,
        400,
        'validation_failed',
      ],
      [
        'not JSON',
        { ...signedPayment(buyer, payment()), body: 'from=me' },
        session,
        400,
        'validation_failed',
      ],
    ];
    for (const [what, request, who, status, code] of cases) {
      const res = await who.call('POST', '/api/crypto/transfer', request);
      expect({ what, status: res.status, code: res.json.code }).toEqual({ what, status, code });
    }
    expect(await balance(env.validatorUrl, stranger, 'PTM')).toBe('0');
  });

  it("passes the validator's refusals on with their codes: a bad signature, an old one, too little money", async () => {
    const good = signedPayment(buyer, payment('1'));
    const forged = { ...good, signature: toHex(randomBytes(64)) };
    const old = signedPayment(buyer, payment('1'), { timestamp: Date.now() - 10 * 60_000 });
    const tooMuch = signedPayment(buyer, payment('100000'));
    const answers = [];
    for (const request of [forged, old, tooMuch]) {
      const res = await session.call('POST', '/api/crypto/transfer', request);
      answers.push([res.status, res.json.code]);
    }
    expect(answers).toEqual([
      [401, 'signature_invalid'],
      [401, 'request_expired'],
      [409, 'insufficient_balance'],
    ]);
  });

  it('answers a refused schema (an enum) with the values it accepts', async () => {
    const res = await session.call('POST', '/api/crypto/premium-purchase', {
      wallet: buyer.address,
      currency: 'USDC',
      transfer_id: 't-1',
    });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe('body/currency: must be one of SOL, PTM');
  });
});
