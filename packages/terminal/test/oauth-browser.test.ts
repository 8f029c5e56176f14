import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBrowser } from '../../../test-support/services.ts';
import { WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { connectStandardWallet, contextWithStandardWallet } from './browser-wallet.js';
import { balance, type Env, newWallet, startEnv, type Wallet } from './env.js';

/**
 * The whole sign-in in Chromium: the terminal's page proves the wallet (a Wallet Standard
 * wallet signs the challenge with the wallet key), "Sign in with X" goes through the
 * provider's consent page (a real OAuth 2 server), the callback comes back, and the claim pays
 * the welcome tokens on the validator ledger. Then the ways it must refuse.
 */

const SHOTS = join(import.meta.dirname, '..', '..', '..', 'test-results', 'terminal');

let env: Env;
let browser: Browser;

beforeAll(async () => {
  env = await startEnv();
  browser = await testBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await env?.close();
});

/** A browser context with a Wallet Standard wallet of `wallet` (what a wallet extension registers). */
async function contextWith(wallet: Wallet): Promise<BrowserContext> {
  return (await contextWithStandardWallet(browser, wallet)).context;
}

async function connectWallet(page: Page): Promise<void> {
  await connectStandardWallet(page, env.base);
}

/** From the terminal page to the consent page (stops there). */
async function toConsent(page: Page): Promise<void> {
  await page.click('#signin');
  await page.waitForSelector('#allow');
}

async function allowAs(page: Page, login: string): Promise<void> {
  await page.fill('#login', login);
  await Promise.all([
    page.waitForURL(`${env.base}/`, { timeout: WAIT_TIMEOUT_MS }),
    page.click('#allow'),
  ]).catch(async (e) => {
    await page.screenshot({ path: join(SHOTS, 'allow-failed.png') });
    throw new Error(
      `${(e as Error).message}; at ${page.url()}: ${(await page.textContent('body'))?.slice(0, 300)}`,
    );
  });
  await page.waitForSelector('body[data-ready="true"]');
}

async function claimInPage(page: Page): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(async () => {
    const session = (await (await fetch('/api/session')).json()) as { wallet: string; claim_session: string };
    const response = await fetch('/api/x-auth/claim', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wallet: session.wallet, session: session.claim_session }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  });
}

describe('sign-in, wallet proof and claim in Chromium', () => {
  it('proves the wallet, signs in through consent, and claims the welcome tokens once', async () => {
    const wallet = newWallet();
    const context = await contextWith(wallet);
    const page = await context.newPage();
    await connectWallet(page);
    expect(await page.textContent('#wallet')).toBe(wallet.address);
    await toConsent(page);
    // The provider got a PKCE S256 challenge and a state.
    const consentUrl = new URL(page.url());
    expect(consentUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(consentUrl.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(consentUrl.searchParams.get('state')).toBeTruthy();
    await page.screenshot({ path: join(SHOTS, 'consent.png') });
    await allowAs(page, 'alice');
    expect(await page.textContent('#account')).toBe('@alice (x)');

    // The session cookie: http-only, SameSite=Lax, and sealed (nothing readable in it).
    const cookie = (await context.cookies()).find((c) => c.name === 'tm_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    expect(cookie?.value).not.toContain('alice');
    expect(await page.evaluate(() => document.cookie)).toBe('');

    await page.click('#claim');
    await page.waitForSelector('#claim-result.ok');
    expect(await page.textContent('#claim-result')).toBe('Sent 100 PTM and 0.05 SOL to your wallet.');
    await page.screenshot({ path: join(SHOTS, 'claimed.png') });
    expect(await balance(env.validatorUrl, wallet, 'PTM')).toBe('100');
    expect(await balance(env.validatorUrl, wallet, 'SOL')).toBe('0.05');

    // The same claim again: nothing more is paid.
    await page.click('#claim');
    await page.waitForFunction(() =>
      document.getElementById('claim-result')?.textContent?.startsWith('Already'),
    );
    expect(await page.textContent('#claim-result')).toBe(
      'Already claimed: 100 PTM and 0.05 SOL were sent earlier.',
    );
    const again = await claimInPage(page);
    expect(again.status).toBe(200);
    expect(again.body.claimed).toBe(false);
    expect(await balance(env.validatorUrl, wallet, 'PTM')).toBe('100');
    await context.close();
  });

  it('refuses another wallet for an account that already claimed', async () => {
    const first = await contextWith(newWallet());
    const p1 = await first.newPage();
    await connectWallet(p1);
    await toConsent(p1);
    await allowAs(p1, 'bob');
    expect((await claimInPage(p1)).status).toBe(200);
    await first.close();

    const other = newWallet();
    const second = await contextWith(other);
    const p2 = await second.newPage();
    await connectWallet(p2);
    await toConsent(p2);
    await allowAs(p2, 'bob');
    await p2.click('#claim');
    await p2.waitForSelector('#claim-result.error');
    expect(await p2.textContent('#claim-result')).toContain('(already_claimed)');
    await p2.screenshot({ path: join(SHOTS, 'already-claimed.png') });
    expect(await balance(env.validatorUrl, other, 'PTM')).toBe('0');
    await second.close();
  });

  it('pays one claim when many race: the same session many times, and one account from two wallets', async () => {
    const wallet = newWallet();
    const context = await contextWith(wallet);
    const page = await context.newPage();
    await connectWallet(page);
    await toConsent(page);
    await allowAs(page, 'carol');
    const results = await page.evaluate(async () => {
      const session = (await (await fetch('/api/session')).json()) as {
        wallet: string;
        claim_session: string;
      };
      const one = () =>
        fetch('/api/x-auth/claim', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ wallet: session.wallet, session: session.claim_session }),
        }).then(async (r) => ({
          status: r.status,
          claimed: ((await r.json()) as { claimed?: boolean }).claimed,
        }));
      return Promise.all(Array.from({ length: 12 }, one));
    });
    expect(results.filter((r) => r.status === 200)).toHaveLength(12);
    expect(results.filter((r) => r.claimed === true)).toHaveLength(1);
    expect(await balance(env.validatorUrl, wallet, 'PTM')).toBe('100');
    await context.close();

    // dave signs in from two browsers with two wallets and claims from both at once.
    const wallets = [newWallet(), newWallet()];
    const pages: Page[] = [];
    const contexts: BrowserContext[] = [];
    for (const w of wallets) {
      const c = await contextWith(w);
      contexts.push(c);
      const p = await c.newPage();
      await connectWallet(p);
      await toConsent(p);
      await allowAs(p, 'dave');
      pages.push(p);
    }
    const raced = await Promise.all(pages.map((p) => claimInPage(p)));
    expect(raced.map((r) => r.status).sort()).toEqual([200, 409]);
    const paid = await Promise.all(wallets.map((w) => balance(env.validatorUrl, w, 'PTM')));
    expect(paid.sort()).toEqual(['0', '100']);
    for (const c of contexts) await c.close();
  });
});

describe('sign-in refusals in Chromium', () => {
  it('ends on a clear page when the user denies consent', async () => {
    const context = await contextWith(newWallet());
    const page = await context.newPage();
    await connectWallet(page);
    await toConsent(page);
    const response = await Promise.all([page.waitForNavigation(), page.click('#deny')]).then(([r]) => r);
    expect(response?.status()).toBe(400);
    expect(await page.getAttribute('main', 'data-reason')).toBe('denied');
    expect(await page.textContent('h1')).toBe('Sign-in cancelled');
    await page.screenshot({ path: join(SHOTS, 'denied.png') });
    // Nothing was connected.
    await page.click('a');
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.textContent('#account')).toBe('not signed in');
    await context.close();
  });

  it('refuses a tampered state', async () => {
    const context = await contextWith(newWallet());
    const page = await context.newPage();
    await connectWallet(page);
    await toConsent(page);
    await page.evaluate(() => {
      const input = document.querySelector('input[name="state"]') as HTMLInputElement;
      input.value = `${input.value.slice(0, -4)}AAAA`;
    });
    const [response] = await Promise.all([page.waitForNavigation({ url: /callback/ }), page.click('#allow')]);
    expect(response?.status()).toBe(400);
    expect(await page.getAttribute('main', 'data-reason')).toBe('bad_state');
    await page.screenshot({ path: join(SHOTS, 'bad-state.png') });
    await context.close();
  });

  it('refuses a callback in a browser that holds no PKCE verifier (another browser, or a lost session)', async () => {
    const context = await contextWith(newWallet());
    const page = await context.newPage();
    await connectWallet(page);
    await toConsent(page);
    // Capture the callback URL the provider sends back, without letting this browser open it.
    await page.route('**/api/x-auth/callback**', (route) => route.abort());
    const callback = page.waitForRequest('**/api/x-auth/callback**');
    await page.click('#allow').catch(() => {});
    const url = (await callback).url();
    const stranger = await browser.newContext();
    const p2 = await stranger.newPage();
    const response = await p2.goto(url);
    expect(response?.status()).toBe(400);
    expect(await p2.getAttribute('main', 'data-reason')).toBe('no_flow');
    await stranger.close();
    await context.close();
  });

  it('refuses a replayed code: again in the same browser, and with a copy of the earlier cookie', async () => {
    const context = await contextWith(newWallet());
    const page = await context.newPage();
    await connectWallet(page);
    await toConsent(page);
    const before = await context.cookies();
    const callback = page.waitForRequest('**/api/x-auth/callback**');
    await allowAs(page, 'erin');
    const url = (await callback).url();
    const refusedBefore = env.auth.refused.length;

    const again = await page.goto(url);
    expect(again?.status()).toBe(400);
    expect(await page.getAttribute('main', 'data-reason')).toBe('no_flow');

    // An attacker who copied the cookie from before the callback, and the code: refused by the
    // terminal (the flow was used), before the provider is even asked.
    const copy = await browser.newContext();
    await copy.addCookies(before);
    const p2 = await copy.newPage();
    const replay = await p2.goto(url);
    expect(replay?.status()).toBe(400);
    expect(await p2.getAttribute('main', 'data-reason')).toBe('replayed');
    expect(env.auth.refused.length).toBe(refusedBefore);
    await copy.close();
    await context.close();
  });

  it('does not start a sign-in for a wallet the browser has not proven', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${env.base}/api/x-auth/authorize?wallet=${newWallet().address}`);
    expect(response?.status()).toBe(401);
    expect(await page.getAttribute('main', 'data-reason')).toBe('wallet_required');
    await context.close();
  });
});
