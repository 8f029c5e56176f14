import type {
  BalancesResponse,
  PurchaseCurrency,
  PurchaseResult,
  TerminalOffer,
  TerminalSession,
  Transfer,
  WalletChallenge,
  XAuthClaimResult,
} from '@tensormine/protocol';
import { ApiError, api, describeError, serverNow } from './api.js';
import {
  builtinWallet,
  isSealedKey,
  keyFileText,
  MIN_PASSPHRASE,
  newSecret,
  parseSecret,
  type SealedKey,
  seal,
  unseal,
  WrongPassphraseError,
} from './builtin-wallet.js';
import { toHex, toWallet, utf8 } from './bytes.js';
import type { PageWallet } from './page-wallet.js';
import { newNonce, signedRequestMessage } from './signed-request.js';
import { connectStandard, type SigningWallet, watchWallets } from './standard-wallets.js';

/**
 * The terminal's reference front end: connect a wallet (a browser wallet through the Wallet
 * Standard, or the built-in one) and prove it, sign in with the social account, claim the
 * welcome tokens, and buy premium or no-ads: the wallet signs the transfer of the price to the
 * treasury, the terminal passes it to the validator and checks it on the ledger.
 */

type Product = 'premium' | 'no_ads';

const STORE_KEY = 'tensormine.terminal.builtin-wallet';
const LAST_KEY = 'tensormine.terminal.last-wallet';
const PRODUCT_NAMES: Record<Product, string> = { premium: 'premium', no_ads: 'no ads' };

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
};

let session: TerminalSession = { account: null, wallet: null, claim_session: null, entitlements: [] };
let offer: TerminalOffer | undefined;
/** The wallet the page can sign with now (its address is the session's wallet once proven). */
let current: PageWallet | undefined;
let standard: readonly SigningWallet[] = [];
let busy = false;

const show = (id: string, text: string, tone: 'ok' | 'error' | 'info') => {
  const el = $(id);
  el.textContent = text;
  el.className = `result ${tone}`;
};

const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> & { dataset?: Record<string, string> } = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag);
  const { dataset, ...rest } = props;
  Object.assign(node, rest);
  for (const [k, v] of Object.entries(dataset ?? {})) node.dataset[k] = v;
  node.append(...children);
  return node;
};

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

function renderWallets(): void {
  const list = $('wallets');
  list.replaceChildren();
  if (standard.length === 0) {
    list.append(
      el(
        'p',
        { className: 'muted', id: 'no-wallets' },
        'No browser wallet found (Phantom, Solflare, Backpack or another Wallet Standard wallet). Use the built-in wallet below.',
      ),
    );
  }
  for (const wallet of standard) {
    const button = el(
      'button',
      { type: 'button', className: 'wallet', dataset: { wallet: wallet.name } },
      el('img', { src: wallet.icon, alt: '', width: 20, height: 20 }),
      `Connect ${wallet.name}`,
    );
    button.addEventListener('click', () => void connect(() => connectStandard(wallet)));
    list.append(button);
  }
}

function storedKey(): SealedKey | undefined {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(STORE_KEY) ?? 'null');
    return isSealedKey(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function renderBuiltin(): void {
  const sealed = storedKey();
  $('builtin-saved').hidden = !sealed;
  $('builtin-new').hidden = Boolean(sealed);
  if (sealed) $('builtin-address').textContent = toWallet(hexBytes(sealed.public_key));
  $<HTMLButtonElement>('builtin-create').textContent = $<HTMLTextAreaElement>('builtin-import').value.trim()
    ? 'Import and connect'
    : 'Create and connect';
  if (!window.isSecureContext || !crypto.subtle) {
    $('builtin').dataset.unavailable = 'true';
    show(
      'builtin-result',
      'The built-in wallet needs a secure page (https, or http on this computer).',
      'error',
    );
  }
}

const hexBytes = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (h) => Number.parseInt(h, 16));

function productOffer(product: Product) {
  return offer?.products.find((p) => p.product === product);
}

function price(product: Product, currency: PurchaseCurrency): string | undefined {
  return productOffer(product)?.prices.find((p) => p.currency === currency)?.amount;
}

function renderOffer(): void {
  if (!offer) return;
  const { welcome, treasury } = offer;
  const pack = welcome.tokens.map((t) => `${t.amount} ${t.token}`).join(' and ');
  $('welcome-pack').textContent = `Each new account and wallet gets ${pack}, once.`;
  const notice = $('notice');
  const problem =
    welcome.status === 'treasury_short'
      ? `Welcome tokens are unavailable for now: the treasury lacks ${welcome.missing
          .map((m) => `${m.token} (it holds ${m.available}, a claim sends ${m.needed})`)
          .join(' and ')}.`
      : welcome.status === 'treasury_not_configured'
        ? 'This terminal has no treasury: welcome tokens and purchases are off.'
        : welcome.status === 'validator_unavailable'
          ? 'The ledger does not answer right now: claims and purchases may fail.'
          : '';
  notice.textContent = problem;
  notice.hidden = problem === '';
  notice.dataset.status = welcome.status;

  const rows = (['premium', 'no_ads'] as const).map((product) => {
    const p = productOffer(product);
    const lasts = p?.days === null ? 'does not expire' : `${p?.days} days`;
    return el(
      'tr',
      { dataset: { product } },
      el('th', { scope: 'row' }, product === 'premium' ? 'Premium' : 'No ads'),
      el('td', {}, `${price(product, 'SOL') ?? '?'} SOL`),
      el('td', {}, `${price(product, 'PTM') ?? '?'} PTM`),
      el('td', {}, lasts),
    );
  });
  $('prices-body').replaceChildren(...rows);
  $('treasury').textContent = treasury?.wallet ?? 'none';
  $('treasury-hex').textContent = treasury?.pubkey ?? '';
  renderManual();
}

/** The exact transfer to make by hand (with the miner CLI, from the proven wallet's key). */
function renderManual(): void {
  const currency = $<HTMLSelectElement>('currency').value as PurchaseCurrency;
  const treasury = offer?.treasury?.pubkey;
  const lines = (['premium', 'no_ads'] as const).map((product) =>
    treasury
      ? `npx miner transfer ${treasury} ${price(product, currency)} ${currency} --memo "${productOffer(product)?.memo ?? ''}"   # ${PRODUCT_NAMES[product]}`
      : '',
  );
  $('manual-command').textContent = lines.join('\n');
}

function render(): void {
  $('wallet').textContent = session.wallet ?? 'not connected';
  const via = current && current.address === session.wallet ? current.name : '';
  $('wallet-via').textContent = via ? `(${via})` : session.wallet ? '(locked: connect it again to sign)' : '';
  $('account').textContent = session.account
    ? `${session.account.username ? `@${session.account.username}` : session.account.id} (${session.account.provider})`
    : 'not signed in';
  $('who').textContent = [session.account?.username, session.wallet && `${session.wallet.slice(0, 6)}…`]
    .filter(Boolean)
    .join(' · ');
  const canPay = Boolean(session.wallet && offer?.treasury);
  $<HTMLButtonElement>('signin').disabled = !session.wallet || busy;
  $<HTMLButtonElement>('claim').disabled =
    !(session.wallet && session.account && session.claim_session) ||
    busy ||
    offer?.welcome.status === 'treasury_short';
  for (const id of ['buy-premium', 'buy-no-ads', 'use-premium', 'use-no-ads'])
    $<HTMLButtonElement>(id).disabled = !canPay || busy;
  $('entitlements').textContent = session.entitlements.length
    ? session.entitlements
        .map(
          (e) =>
            `${PRODUCT_NAMES[e.product]}${e.valid_until ? ` until ${new Date(e.valid_until * 1000).toISOString().slice(0, 10)}` : ''}`,
        )
        .join(', ')
    : 'none';
  renderBuiltin();
  document.body.dataset.ready = 'true';
}

async function refreshBalances(): Promise<void> {
  if (!session.wallet) {
    $('balances').textContent = '';
    return;
  }
  try {
    const { balances } = await api<BalancesResponse>('GET', `/api/wallet/balances/${session.wallet}`);
    const held = balances.filter((b) => b.available !== '0').map((b) => `${b.available} ${b.token}`);
    $('balances').textContent = `Balance: ${held.length ? held.join(' · ') : 'nothing yet'}`;
  } catch {
    $('balances').textContent = '';
  }
}

async function refresh(): Promise<void> {
  [session, offer] = await Promise.all([
    api<TerminalSession>('GET', '/api/session'),
    api<TerminalOffer>('GET', '/api/offer'),
  ]);
  renderOffer();
  render();
  await refreshBalances();
}

// ---------------------------------------------------------------------------------------------
// The wallet: connect, prove
// ---------------------------------------------------------------------------------------------

/** Connects a wallet and proves it to the terminal (a signed one-time challenge). */
async function connect(open: () => Promise<PageWallet>, resultId = 'wallet-result'): Promise<boolean> {
  busy = true;
  render();
  try {
    const wallet = await open();
    show(resultId, `Sign the message in ${wallet.name} to prove the wallet (it moves no funds)…`, 'info');
    const challenge = await api<WalletChallenge>('POST', '/api/wallet/challenge', { wallet: wallet.address });
    const signature = await wallet.signMessage(utf8(challenge.message));
    session = await api<TerminalSession>('POST', '/api/wallet/verify', {
      wallet: wallet.address,
      signature: toHex(signature),
    });
    current = wallet;
    localStorage.setItem(
      LAST_KEY,
      JSON.stringify(
        wallet.kind === 'standard' ? { kind: 'standard', name: wallet.name } : { kind: 'builtin' },
      ),
    );
    show(resultId, `Connected ${wallet.name}: ${wallet.address}`, 'ok');
    await refreshBalances();
    return true;
  } catch (error) {
    show(resultId, `Wallet not connected: ${describeError(error)}`, 'error');
    return false;
  } finally {
    busy = false;
    render();
  }
}

/** Back from the sign-in (a new page): the same browser wallet again, without asking. */
async function reconnectSilently(): Promise<void> {
  if (!session.wallet || current) return;
  let last: { kind?: string; name?: string } = {};
  try {
    last = JSON.parse(localStorage.getItem(LAST_KEY) ?? '{}') as typeof last;
  } catch {
    return;
  }
  const wallet = last.kind === 'standard' ? standard.find((w) => w.name === last.name) : undefined;
  if (!wallet) return;
  try {
    const connected = await connectStandard(wallet, true);
    if (connected.address === session.wallet) {
      current = connected;
      render();
    }
  } catch {
    // it asks again when it signs
  }
}

async function withPassphrase(id: string, minLength = 1): Promise<string> {
  const passphrase = $<HTMLInputElement>(id).value;
  if (passphrase.length < minLength) throw new Error(`the passphrase needs at least ${minLength} characters`);
  return passphrase;
}

async function createBuiltin(): Promise<void> {
  const imported = $<HTMLTextAreaElement>('builtin-import').value;
  await connect(async () => {
    const passphrase = await withPassphrase('builtin-new-passphrase', MIN_PASSPHRASE);
    if (passphrase !== $<HTMLInputElement>('builtin-new-passphrase2').value)
      throw new Error('the two passphrases differ');
    const secret = imported.trim() ? await parseSecret(imported) : newSecret();
    try {
      show('builtin-result', 'Encrypting the key with your passphrase…', 'info');
      const sealed = await seal(secret, passphrase);
      localStorage.setItem(STORE_KEY, JSON.stringify(sealed));
      for (const id of ['builtin-new-passphrase', 'builtin-new-passphrase2', 'builtin-import'])
        $<HTMLInputElement>(id).value = '';
      show(
        'builtin-result',
        'Saved in this browser, encrypted. Export the key file to keep a copy: without it, a cleared browser loses the wallet.',
        'ok',
      );
      return await builtinWallet(secret);
    } finally {
      secret.fill(0);
    }
  }, 'builtin-result');
}

async function openSaved(): Promise<Uint8Array> {
  const sealed = storedKey();
  if (!sealed) throw new Error('no built-in wallet in this browser');
  const passphrase = await withPassphrase('builtin-passphrase');
  show('builtin-result', 'Unlocking…', 'info');
  try {
    return await unseal(sealed, passphrase);
  } catch (error) {
    throw error instanceof WrongPassphraseError ? new Error('wrong passphrase') : error;
  }
}

async function unlockBuiltin(): Promise<boolean> {
  return connect(async () => {
    const secret = await openSaved();
    try {
      $<HTMLInputElement>('builtin-passphrase').value = '';
      return await builtinWallet(secret);
    } finally {
      secret.fill(0);
    }
  }, 'builtin-result');
}

async function exportBuiltin(): Promise<void> {
  try {
    const secret = await openSaved();
    let text: string;
    try {
      text = await keyFileText(secret);
    } finally {
      secret.fill(0);
    }
    const address = $('builtin-address').textContent ?? 'wallet';
    const link = el('a', {
      href: URL.createObjectURL(new Blob([text], { type: 'application/json' })),
      download: `tensormine-${address.slice(0, 8)}.key`,
    });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    show(
      'builtin-result',
      'Key file saved. Keep it private; for the miner: chmod 600 the file, then miner keys import FILE (or --key FILE).',
      'ok',
    );
  } catch (error) {
    show('builtin-result', `Not exported: ${describeError(error)}`, 'error');
  }
}

function forgetBuiltin(): void {
  if (
    !window.confirm('Remove the built-in wallet from this browser? Without an exported key file it is lost.')
  )
    return;
  localStorage.removeItem(STORE_KEY);
  if (current?.kind === 'builtin') current = undefined;
  show('builtin-result', 'Removed from this browser.', 'ok');
  render();
}

// ---------------------------------------------------------------------------------------------
// Claim and purchases
// ---------------------------------------------------------------------------------------------

async function claim(): Promise<void> {
  busy = true;
  render();
  try {
    const result = await api<XAuthClaimResult>('POST', '/api/x-auth/claim', {
      wallet: session.wallet,
      session: session.claim_session,
    });
    const sent = result.transfers.map((t) => `${t.amount} ${t.token}`).join(' and ');
    show(
      'claim-result',
      result.claimed ? `Sent ${sent} to your wallet.` : `Already claimed: ${sent} were sent earlier.`,
      'ok',
    );
    await refreshBalances();
  } catch (error) {
    show('claim-result', describeError(error), 'error');
  } finally {
    busy = false;
    render();
  }
}

/** The wallet to sign with: the proven one, connected in this page. */
function signingWallet(): PageWallet {
  if (current && current.address === session.wallet) return current;
  throw new Error(
    'connect the wallet you proved again to sign the payment (unlock the built-in wallet, or connect your browser wallet)',
  );
}

/** Signs the transfer of the price to the treasury and has the terminal pass it to the validator. */
async function pay(product: Product, currency: PurchaseCurrency): Promise<Transfer> {
  const wallet = signingWallet();
  const treasury = offer?.treasury;
  const amount = price(product, currency);
  if (!treasury || !amount) throw new Error('this terminal sells nothing now (no treasury)');
  const body = JSON.stringify({
    from: toHex(wallet.publicKey),
    to: treasury.pubkey,
    token: currency,
    amount,
    memo: productOffer(product)?.memo ?? '',
  });
  const nonce = newNonce();
  const timestamp = serverNow();
  const message = await signedRequestMessage({
    method: 'POST',
    path: '/transfer',
    body,
    publicKey: wallet.publicKey,
    timestamp,
    nonce: nonce.bytes,
  });
  show('buy-result', `Sign the payment of ${amount} ${currency} to the treasury in ${wallet.name}…`, 'info');
  const signature = toHex(await wallet.signMessage(message));
  const request = { body, timestamp: String(timestamp), nonce: nonce.hex, signature };
  // A lost answer: the same signed request again returns the same transfer, never a second one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await api<Transfer>('POST', '/api/crypto/transfer', request);
    } catch (error) {
      const retry =
        attempt < 3 &&
        (!(error instanceof ApiError) || error.status >= 500 || error.code === 'upstream_unavailable');
      if (!retry) throw error;
    }
  }
}

async function purchase(product: Product, transferId: string, currency: PurchaseCurrency): Promise<void> {
  const path = product === 'premium' ? '/api/crypto/premium-purchase' : '/api/crypto/no-ads-purchase';
  const result = await api<PurchaseResult>('POST', path, {
    wallet: session.wallet,
    currency,
    transfer_id: transferId,
  });
  show(
    'buy-result',
    `Bought ${PRODUCT_NAMES[result.product]} for ${result.amount} ${result.currency} (transfer ${result.transfer_id}).`,
    'ok',
  );
}

async function buy(product: Product): Promise<void> {
  const currency = $<HTMLSelectElement>('currency').value as PurchaseCurrency;
  busy = true;
  render();
  let transfer: Transfer | undefined;
  try {
    transfer = await pay(product, currency);
    await purchase(product, transfer.transfer_id, currency);
    await refresh();
  } catch (error) {
    const paid = transfer
      ? ` The payment went through (transfer ${transfer.transfer_id}): use it below.`
      : '';
    if (transfer) $<HTMLInputElement>('transfer').value = transfer.transfer_id;
    show('buy-result', `${describeError(error)}${paid}`, 'error');
  } finally {
    busy = false;
    render();
  }
}

async function useTransfer(product: Product): Promise<void> {
  busy = true;
  render();
  try {
    await purchase(
      product,
      $<HTMLInputElement>('transfer').value.trim(),
      $<HTMLSelectElement>('currency').value as PurchaseCurrency,
    );
    await refresh();
  } catch (error) {
    show('buy-result', describeError(error), 'error');
  } finally {
    busy = false;
    render();
  }
}

// ---------------------------------------------------------------------------------------------

$('signin').addEventListener('click', () => {
  if (!session.wallet) return;
  const query = new URLSearchParams({ wallet: session.wallet, redirect: '/' });
  window.location.assign(`/api/x-auth/authorize?${query}`);
});
$('claim').addEventListener('click', () => void claim());
$('buy-premium').addEventListener('click', () => void buy('premium'));
$('buy-no-ads').addEventListener('click', () => void buy('no_ads'));
$('use-premium').addEventListener('click', () => void useTransfer('premium'));
$('use-no-ads').addEventListener('click', () => void useTransfer('no_ads'));
$('currency').addEventListener('change', renderManual);
$('builtin-create').addEventListener('click', () => void createBuiltin());
$('builtin-unlock').addEventListener('click', () => void unlockBuiltin());
$('builtin-export').addEventListener('click', () => void exportBuiltin());
$('builtin-forget').addEventListener('click', forgetBuiltin);
$('builtin-import').addEventListener('input', renderBuiltin);
$<HTMLInputElement>('builtin-import-file').addEventListener('change', async (event) => {
  const file = (event.target as HTMLInputElement).files?.[0];
  if (file) $<HTMLTextAreaElement>('builtin-import').value = await file.text();
  (event.target as HTMLInputElement).value = '';
  renderBuiltin();
});

standard = watchWallets((wallets) => {
  standard = wallets;
  renderWallets();
  void reconnectSilently();
});
renderWallets();
refresh()
  .then(reconnectSilently)
  .catch((error) => {
    show('wallet-result', `The terminal does not answer: ${describeError(error)}`, 'error');
    render();
  });
