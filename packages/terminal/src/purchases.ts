import { randomBytes } from 'node:crypto';
import {
  isErrorCode,
  type PurchaseCurrency,
  type PurchaseResult,
  parseAmount,
  type TerminalTransferRequest,
  type Transfer,
  TransferRequestSchema,
} from '@tensormine/protocol';
import { ApiError } from '@tensormine/service-kit';
import { Compile } from 'typebox/compile';
import type { TerminalConfig } from './config.js';
import { type Ledger, LedgerError } from './ledger.js';
import { isUniqueViolation, type TerminalStore } from './store.js';
import { walletToPubkey } from './wallet.js';

export type Product = 'premium' | 'no_ads';

const DAY_S = 86_400;

/** The memo the front end puts on the transfer that pays for a product. */
export const PRODUCT_MEMO: Readonly<Record<Product, string>> = {
  premium: 'tensormine terminal: premium',
  no_ads: 'tensormine terminal: no ads',
};

const transferBody = Compile(TransferRequestSchema);

/**
 * Purchases paid by a transfer to the treasury. The transfer is read from the validator's
 * ledger and must be from the buyer's proven wallet, to the treasury, in the chosen currency,
 * for at least the price; a transfer buys one thing once (UNIQUE transfer_id), and the purchase
 * and the entitlement are written in one transaction.
 */
export class PurchaseService {
  constructor(
    private readonly store: TerminalStore,
    private readonly ledger: Ledger,
    private readonly config: TerminalConfig,
    private readonly now: () => number,
  ) {}

  price(product: Product, currency: PurchaseCurrency): string {
    const c = this.config;
    if (product === 'premium') return currency === 'SOL' ? c.premiumPriceSol : c.premiumPricePtm;
    return currency === 'SOL' ? c.noAdsPriceSol : c.noAdsPricePtm;
  }

  /**
   * Pays the treasury from the proven `wallet` with a POST /transfer the wallet signed in the
   * browser, sent to the validator exactly as signed (the validator checks the signature). Only
   * a payment: from this wallet, to the treasury, in SOL or PTM; anything else is refused here
   * and never reaches the validator. The same signed request sent again (after a lost answer)
   * gets the same transfer back and pays nothing more.
   */
  async payTreasury(wallet: string, request: TerminalTransferRequest): Promise<Transfer> {
    const treasury = this.ledger.treasury;
    if (!treasury)
      throw new ApiError('treasury_not_configured', 'this terminal has no treasury, so it sells nothing');
    let body: unknown;
    try {
      body = JSON.parse(request.body);
    } catch {
      throw new ApiError('validation_failed', 'body/body: not JSON text of a transfer');
    }
    if (!transferBody.Check(body)) {
      const first = [...transferBody.Errors(body)][0];
      throw new ApiError(
        'validation_failed',
        `body/body: not a transfer (${first ? `${first.instancePath || '/'}: ${first.message}` : 'invalid'})`,
      );
    }
    if (body.from !== walletToPubkey(wallet)) {
      throw new ApiError('wallet_mismatch', 'the transfer is not from the wallet this browser proved');
    }
    if (body.to !== treasury) throw new ApiError('payment_invalid', 'the transfer is not to the treasury');
    if (body.token !== 'SOL' && body.token !== 'PTM') {
      throw new ApiError('payment_invalid', `the terminal is paid in SOL or PTM, not ${body.token}`);
    }
    try {
      return await this.ledger.postTransfer(request.body, {
        'x-tm-pubkey': body.from,
        'x-tm-timestamp': request.timestamp,
        'x-tm-nonce': request.nonce,
        'x-tm-signature': request.signature,
      });
    } catch (error) {
      if (
        error instanceof LedgerError &&
        error.status !== undefined &&
        error.status < 500 &&
        isErrorCode(error.code)
      ) {
        throw new ApiError(error.code, error.message);
      }
      throw new ApiError(
        'upstream_unavailable',
        `the validator could not be reached (${error instanceof LedgerError ? error.code : 'error'}); send the same payment again`,
      );
    }
  }

  async purchase(
    product: Product,
    wallet: string,
    currency: PurchaseCurrency,
    transferId: string,
  ): Promise<PurchaseResult> {
    const treasury = this.ledger.treasury;
    if (!treasury)
      throw new ApiError('treasury_not_configured', 'this terminal has no treasury, so it sells nothing');
    if (this.store.purchaseByTransfer(transferId)) {
      throw new ApiError('payment_already_used', `transfer ${transferId} already paid for a purchase`);
    }
    let transfer: Awaited<ReturnType<Ledger['getTransfer']>>;
    try {
      transfer = await this.ledger.getTransfer(transferId);
    } catch (error) {
      throw new ApiError(
        'upstream_unavailable',
        `the ledger could not be read (${error instanceof LedgerError ? error.code : 'error'}); try again`,
      );
    }
    if (!transfer) throw new ApiError('transfer_not_found', `no transfer ${transferId} on the ledger`);
    if (transfer.from !== walletToPubkey(wallet)) {
      throw new ApiError('payment_invalid', `transfer ${transferId} was not sent from your wallet`);
    }
    if (transfer.to !== treasury) {
      throw new ApiError('payment_invalid', `transfer ${transferId} was not sent to the treasury`);
    }
    if (transfer.token !== currency) {
      throw new ApiError(
        'payment_invalid',
        `transfer ${transferId} is in ${transfer.token}, not ${currency}`,
      );
    }
    const price = this.price(product, currency);
    if (parseAmount(transfer.amount, currency) < parseAmount(price, currency)) {
      throw new ApiError(
        'payment_too_small',
        `transfer ${transferId} pays ${transfer.amount} ${currency}; ${product} costs ${price} ${currency}`,
        { price, currency },
      );
    }
    const nowS = Math.floor(this.now() / 1000);
    const days = product === 'premium' ? this.config.premiumDays : this.config.noAdsDays;
    const current = this.store.entitlement(wallet, product);
    let validUntil: number | null;
    if (days === 0 || (current && current.valid_until === null)) validUntil = null;
    else validUntil = Math.max(nowS, current?.valid_until ?? 0) + days * DAY_S;
    const row = {
      purchase_id: randomBytes(12).toString('base64url'),
      transfer_id: transferId,
      wallet,
      product,
      currency,
      amount: transfer.amount,
      valid_until: validUntil,
      created_at: nowS,
    };
    try {
      this.store.recordPurchase(row);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ApiError('payment_already_used', `transfer ${transferId} already paid for a purchase`);
      }
      throw error;
    }
    return {
      purchase_id: row.purchase_id,
      product,
      wallet,
      valid_until: validUntil,
      amount: transfer.amount,
      currency,
      transfer_id: transferId,
    };
  }
}
