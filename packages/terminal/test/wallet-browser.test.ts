import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Signer } from '@tensormine/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBrowser } from '../../../test-support/services.ts';
import { connectStandardWallet, contextWithStandardWallet } from './browser-wallet.js';
import { balance, type Env, newWallet, startEnv, type Wallet } from './env.js';

/**
 * The terminal page as a person uses it, in Chromium, with each kind of wallet: a wallet of the
 * browser registered through the Wallet Standard (as Phantom, Solflare or Backpack do), and the
 * page's built-in wallet (a key made in the page, kept encrypted with a passphrase). Connect,
 * sign in through the provider's consent page, claim, and buy from the page (the wallet signs
 * the transfer to the treasury). Screenshots at desktop and phone width, dark and light, land in
 * test-results/terminal/.
 */

const SHOTS = join(import.meta.dirname, '..', '..', '..', 'test-results', 'terminal');
const PHONE = { width: 390, height: 844 };

let env: Env;
let browser: Browser;
/** A wallet funded at genesis, used through the Wallet Standard. */
const rich = newWallet();
/** A funded wallet whose key file is imported into the built-in wallet. */
const imported = newWallet();

beforeAll(async () => {
  env = await startEnv({
    users: [
      { wallet: rich, token: 'PTM', amount: '500' },
      { wallet: rich, token: 'SOL', amount: '1' },
      { wallet: imported, token: 'PTM', amount: '300' },
    ],
  });
  browser = await testBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await env?.close();
});

async function signIn(page: Page, login: string): Promise<void> {
  await page.click('#signin');
  await page.waitForSelector('#allow');
  await page.fill('#login', login);
  await Promise.all([page.waitForURL(`${env.base}/`), page.click('#allow')]);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() => document.getElementById('account')?.textContent !== 'not signed in');
}

async function claim(page: Page): Promise<void> {
  await page.click('#claim');
  await page.waitForSelector('#claim-result.ok');
}

/** Clicks a buy button and waits for the outcome; returns the result line. */
async function buy(page: Page, product: 'premium' | 'no-ads', currency: 'PTM' | 'SOL'): Promise<string> {
  await page.selectOption('#currency', currency);
  await page.click(`#buy-${product}`);
  await page.waitForSelector('#buy-result.ok, #buy-result.error');
  return (await page.textContent('#buy-result')) ?? '';
}

/** How far the page is wider than the screen (0: nothing sticks out). */
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

describe('the terminal page with a Wallet Standard wallet', () => {
  it('connects, signs in, claims and buys premium and no-ads from the page, the wallet signing each payment', async () => {
    const { context, signed } = await contextWithStandardWallet(browser, rich);
    const page = await context.newPage();
    await connectStandardWallet(page, env.base);
    expect(await page.textContent('#wallet')).toBe(rich.address);
    expect(await page.textContent('#wallet-via')).toBe('(Test Wallet)');
    // The proof: the wallet signed the challenge text.
    expect(Buffer.from(signed[0]!, 'hex').toString('utf8')).toContain(`Wallet: ${rich.address}`);
    await page.waitForFunction(() => document.getElementById('balances')?.textContent?.includes('500 PTM'));

    // Prices, treasury and the exact transfer to make by hand.
    expect(await page.textContent('#prices-body tr[data-product="premium"]')).toBe(
      'Premium0.1 SOL200 PTM30 days',
    );
    expect(await page.textContent('#prices-body tr[data-product="no_ads"]')).toBe(
      'No ads0.05 SOL100 PTMdoes not expire',
    );
    expect(await page.textContent('#treasury')).toBe(env.treasury.address);
    expect(await page.textContent('#treasury-hex')).toBe(env.treasury.hex);
    expect(await page.textContent('#manual-command')).toContain(
      `npx miner transfer ${env.treasury.hex} 200 PTM --memo "tensormine terminal: premium"`,
    );
    expect(await page.isHidden('#notice')).toBe(true);

    await signIn(page, 'frank');
    // Back from the provider, the browser wallet is connected again without asking.
    await page.waitForFunction(() => document.getElementById('wallet-via')?.textContent === '(Test Wallet)');
    await claim(page);
    expect(await page.textContent('#claim-result')).toBe('Sent 100 PTM and 0.05 SOL to your wallet.');

    const treasuryPtm = await balance(env.validatorUrl, env.treasury, 'PTM');
    expect(await buy(page, 'premium', 'PTM')).toMatch(/^Bought premium for 200 PTM \(transfer [\w-]+\)\.$/);
    await page.waitForFunction(() =>
      document.getElementById('entitlements')?.textContent?.startsWith('premium until'),
    );
    // The wallet signed a signed request of POST /transfer (binary, tagged), for exactly that body.
    const payment = Buffer.from(signed.at(-1)!, 'hex');
    expect(payment.subarray(0, 15).toString('latin1')).toBe('PTM/request/v1\0');
    expect(await balance(env.validatorUrl, rich, 'PTM')).toBe('400');
    expect(Number(await balance(env.validatorUrl, env.treasury, 'PTM'))).toBe(Number(treasuryPtm) + 200);

    expect(await buy(page, 'no-ads', 'SOL')).toMatch(/^Bought no ads for 0\.05 SOL/);
    await page.waitForFunction(() =>
      document.getElementById('entitlements')?.textContent?.includes('no ads'),
    );
    expect(await balance(env.validatorUrl, rich, 'SOL')).toBe('1');
    await page.screenshot({ path: join(SHOTS, 'standard-wallet-bought.png'), fullPage: true });
    await context.close();
  });

  it('at phone width in light mode: nothing sticks out, the colours are light, nothing is missing (favicon)', async () => {
    const wallet = newWallet();
    const { context } = await contextWithStandardWallet(browser, wallet, {
      viewport: PHONE,
      colorScheme: 'light',
    });
    const page = await context.newPage();
    const missing: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) missing.push(`${r.status()} ${r.url()}`);
    });
    await connectStandardWallet(page, env.base);
    expect(
      await page.evaluate(() => (document.querySelector('link[rel="icon"]') as HTMLLinkElement).href),
    ).toBe(`${env.base}/favicon.svg`);
    for (const icon of ['/favicon.svg', '/favicon.ico']) {
      const res = await fetch(`${env.base}${icon}`);
      expect(res.status, icon).toBe(200);
    }
    await page.click('#builtin summary');
    await page.click('#manual summary');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
      'rgb(245, 247, 251)',
    );
    // Every input and button fits in its card.
    const sticking = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea, button, pre, table')]
        .filter((e) => {
          const card = e.closest('.card')?.getBoundingClientRect();
          const box = e.getBoundingClientRect();
          return card && box.width > 0 && (box.right > card.right + 0.5 || box.left < card.left - 0.5);
        })
        .map((e) => e.id || e.tagName),
    );
    expect(sticking).toEqual([]);
    expect(missing).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'phone-light.png'), fullPage: true });
    await context.close();
  });
});

/**
 * Waits for the built-in wallet to be connected and proved, and the page to show it. The result
 * line turns `ok` once before that ("Saved in this browser…", while the challenge is still being
 * signed), and the "Connected" line comes before the page has read the balances and drawn the
 * wallet: the end of it is the "Connected" line and the page no longer busy.
 */
async function builtinConnected(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const result = document.getElementById('builtin-result');
    const wallet = document.getElementById('wallet')?.textContent ?? 'not connected';
    return Boolean(
      result?.classList.contains('ok') &&
        result.textContent?.startsWith('Connected') &&
        wallet !== 'not connected',
    );
  });
}

describe('the terminal page with the built-in wallet', () => {
  it('creates a key under a passphrase, proves it, signs in, claims, buys no-ads, and exports the key file of miner keys', async () => {
    const context = await browser.newContext({ viewport: PHONE, colorScheme: 'dark', acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(`${env.base}/`);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.textContent('#no-wallets')).toContain('No browser wallet found');
    await page.click('#builtin summary');
    await page.fill('#builtin-new-passphrase', 'short');
    await page.fill('#builtin-new-passphrase2', 'short');
    await page.click('#builtin-create');
    await page.waitForSelector('#builtin-result.error');
    expect(await page.textContent('#builtin-result')).toContain('at least 8 characters');

    await page.fill('#builtin-new-passphrase', 'correct horse battery');
    await page.fill('#builtin-new-passphrase2', 'correct horse battery');
    await page.click('#builtin-create');
    await builtinConnected(page);
    const address = (await page.textContent('#wallet')) ?? '';
    expect(address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(await page.textContent('#wallet-via')).toBe('(Built-in wallet)');
    // What the browser keeps: the public key and a ciphertext, never the secret.
    const stored = await page.evaluate(
      () => localStorage.getItem('tensormine.terminal.builtin-wallet') ?? '',
    );
    const sealed = JSON.parse(stored) as {
      public_key: string;
      kdf: { iterations: number };
      ciphertext: string;
    };
    expect(sealed.kdf.iterations).toBe(600_000);
    expect(Buffer.from(sealed.ciphertext, 'base64')).toHaveLength(48);
    await page.screenshot({ path: join(SHOTS, 'builtin-created-phone.png'), fullPage: true });

    await signIn(page, 'grace');
    // A new page after the sign-in: the key is locked again until the passphrase is given.
    expect(await page.textContent('#wallet-via')).toBe('(locked: connect it again to sign)');
    await claim(page);
    const wallet = { hex: sealed.public_key } as Wallet;
    expect(await balance(env.validatorUrl, wallet, 'SOL')).toBe('0.05');

    expect(await buy(page, 'no-ads', 'SOL')).toContain('connect the wallet you proved again');
    await page.click('#builtin summary');
    await page.fill('#builtin-passphrase', 'wrong passphrase');
    await page.click('#builtin-unlock');
    await page.waitForSelector('#builtin-result.error');
    expect(await page.textContent('#builtin-result')).toBe('Wallet not connected: wrong passphrase');
    await page.fill('#builtin-passphrase', 'correct horse battery');
    await page.click('#builtin-unlock');
    await builtinConnected(page);
    expect(await buy(page, 'no-ads', 'SOL')).toMatch(/^Bought no ads for 0\.05 SOL/);
    expect(await balance(env.validatorUrl, wallet, 'SOL')).toBe('0');
    // More than it holds: the validator's refusal, shown as it is; nothing moved.
    expect(await buy(page, 'premium', 'PTM')).toContain('(insufficient_balance)');
    expect(await balance(env.validatorUrl, wallet, 'PTM')).toBe('100');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'builtin-bought-phone.png'), fullPage: true });

    // The key file: the format of miner keys, loadable by the SDK, for the same key.
    await page.fill('#builtin-passphrase', 'correct horse battery');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#builtin-export')]);
    const file = join(SHOTS, 'exported.key');
    await download.saveAs(file);
    const text = readFileSync(file, 'utf8');
    expect(Object.keys(JSON.parse(text))).toEqual(['type', 'public_key', 'secret_key']);
    const signer = await Signer.load(file, { allowInsecurePermissions: true });
    expect(signer.publicKeyHex).toBe(sealed.public_key);
    await context.close();
  });

  it('imports the key file of a funded key and pays premium with it, in light mode on a desktop', async () => {
    const context = await browser.newContext({
      viewport: { width: 1000, height: 900 },
      colorScheme: 'light',
    });
    const page = await context.newPage();
    await page.goto(`${env.base}/`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.click('#builtin summary');
    const keyFile = JSON.stringify({
      type: 'ed25519',
      public_key: imported.hex,
      secret_key: Buffer.from(imported.key.secretKey).toString('hex'),
    });
    await page.fill('#builtin-import', keyFile);
    expect(await page.textContent('#builtin-create')).toBe('Import and connect');
    await page.fill('#builtin-new-passphrase', 'another passphrase');
    await page.fill('#builtin-new-passphrase2', 'another passphrase');
    await page.click('#builtin-create');
    await builtinConnected(page);
    expect(await page.textContent('#wallet')).toBe(imported.address);
    expect(await buy(page, 'premium', 'PTM')).toMatch(/^Bought premium for 200 PTM/);
    expect(await balance(env.validatorUrl, imported, 'PTM')).toBe('100');
    await page.screenshot({ path: join(SHOTS, 'builtin-imported-light.png'), fullPage: true });
    await context.close();
  });
});

describe('a treasury that cannot pay the welcome package', () => {
  it('is said on the page, which does not offer the claim', async () => {
    const poor = await startEnv({ fundTreasury: false });
    try {
      const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
      const page = await context.newPage();
      await page.goto(`${poor.base}/`);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#notice:not([hidden])');
      expect(await page.textContent('#notice')).toBe(
        'Welcome tokens are unavailable for now: the treasury lacks PTM (it holds 0, a claim sends 100) and SOL (it holds 0, a claim sends 0.05).',
      );
      expect(await page.isDisabled('#claim')).toBe(true);
      await page.screenshot({ path: join(SHOTS, 'treasury-short.png') });
      await context.close();
    } finally {
      await poor.close();
    }
  });
});
