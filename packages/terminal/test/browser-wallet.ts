import { sign, toHex } from '@tensormine/protocol';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Wallet } from './env.js';

/**
 * A wallet of the browser, as a wallet extension (Phantom, Solflare, Backpack) provides one:
 * registered through the Wallet Standard's window events (`wallet-standard:register-wallet`,
 * answering `wallet-standard:app-ready`), with `standard:connect`, `standard:events` and
 * `solana:signMessage`. The key stays in the test (Node); the page's wallet asks it to sign,
 * and every message it signed is kept in `signed` (hex), to look at.
 */

export const TEST_WALLET_NAME = 'Test Wallet';

const ICON = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#ab9ff2"/></svg>',
).toString('base64')}`;

export interface StandardWalletContext {
  readonly context: BrowserContext;
  /** The messages the wallet signed, hex, in order. */
  readonly signed: string[];
}

export async function contextWithStandardWallet(
  browser: Browser,
  wallet: Wallet,
  options: { viewport?: { width: number; height: number }; colorScheme?: 'dark' | 'light' } = {},
): Promise<StandardWalletContext> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 900, height: 900 },
    colorScheme: options.colorScheme ?? 'dark',
    acceptDownloads: true,
  });
  const signed: string[] = [];
  await context.exposeFunction('__testWalletSign', (messageHex: string) => {
    signed.push(messageHex);
    return toHex(sign(Buffer.from(messageHex, 'hex'), wallet.key.secretKey));
  });
  await context.addInitScript(
    ({ address, publicKeyHex, name, icon }) => {
      const bytes = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
      const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      const chains = ['solana:mainnet', 'solana:devnet'] as const;
      const account = Object.freeze({
        address,
        publicKey: bytes(publicKeyHex),
        chains,
        features: ['solana:signMessage'] as const,
      });
      let accounts: (typeof account)[] = [];
      const testWallet = {
        version: '1.0.0' as const,
        name,
        icon,
        chains,
        get accounts() {
          return accounts;
        },
        features: {
          'standard:connect': {
            version: '1.0.0',
            async connect() {
              accounts = [account];
              return { accounts };
            },
          },
          'standard:events': { version: '1.0.0', on: () => () => {} },
          'solana:signMessage': {
            version: '1.1.0',
            async signMessage(...inputs: { account: typeof account; message: Uint8Array }[]) {
              const sign = (window as unknown as { __testWalletSign(h: string): Promise<string> })
                .__testWalletSign;
              return Promise.all(
                inputs.map(async ({ message }) => ({
                  signedMessage: message,
                  signature: bytes(await sign(hex(message))),
                })),
              );
            },
          },
        },
      };
      // What @wallet-standard/wallet's registerWallet does.
      const callback = ({ register }: { register(w: unknown): unknown }) => register(testWallet);
      window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
      window.addEventListener('wallet-standard:app-ready', (event) =>
        callback((event as CustomEvent<{ register(w: unknown): unknown }>).detail),
      );
    },
    { address: wallet.address, publicKeyHex: wallet.hex, name: TEST_WALLET_NAME, icon: ICON },
  );
  return { context, signed };
}

/** Opens the terminal page and connects the test wallet (connect, sign the challenge). */
export async function connectStandardWallet(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.click(`#wallets button[data-wallet="${TEST_WALLET_NAME}"]`);
  await page.waitForFunction(() => document.getElementById('wallet')?.textContent !== 'not connected');
}
