import { formatAmount, parseAmount, type TerminalOffer } from '@tensormine/protocol';
import type { TerminalConfig, WelcomeToken } from './config.js';
import type { Ledger } from './ledger.js';
import { PRODUCT_MEMO, type PurchaseService } from './purchases.js';
import { pubkeyToWallet } from './wallet.js';

/** Whether the treasury can pay one welcome claim now, and what it lacks. */
export type WelcomeStatus = TerminalOffer['welcome'];

/** How long a reading of the treasury's balances answers GET /api/offer. */
const BALANCES_TTL_MS = 5000;

/**
 * What the terminal gives and sells, as the front end shows it: the welcome package and whether
 * the treasury holds all of it (checked at start and, at most every 5 s, when the page asks),
 * the prices and the treasury to pay.
 */
export class Offer {
  #read: { at: number; status: Promise<WelcomeStatus> } | undefined;

  constructor(
    private readonly config: TerminalConfig,
    private readonly welcome: readonly WelcomeToken[],
    private readonly ledger: Ledger,
    private readonly purchases: PurchaseService,
    private readonly now: () => number,
  ) {}

  /** The welcome package and whether the treasury can pay it (balances read at most every 5 s). */
  welcomeStatus(): Promise<WelcomeStatus> {
    const at = this.now();
    if (!this.#read || at - this.#read.at >= BALANCES_TTL_MS) {
      this.#read = { at, status: this.#check() };
    }
    return this.#read.status;
  }

  async view(): Promise<TerminalOffer> {
    const treasury = this.ledger.treasury;
    const c = this.config;
    return {
      treasury: treasury ? { wallet: pubkeyToWallet(treasury), pubkey: treasury } : null,
      welcome: await this.welcomeStatus(),
      products: (['premium', 'no_ads'] as const).map((product) => {
        const days = product === 'premium' ? c.premiumDays : c.noAdsDays;
        return {
          product,
          days: days === 0 ? null : days,
          prices: (['SOL', 'PTM'] as const).map((currency) => ({
            currency,
            amount: this.purchases.price(product, currency),
          })),
          memo: PRODUCT_MEMO[product],
        };
      }),
    };
  }

  async #check(): Promise<WelcomeStatus> {
    const tokens = this.welcome.map((w) => ({ token: w.token, amount: w.amount }));
    const treasury = this.ledger.treasury;
    if (!treasury) return { tokens, status: 'treasury_not_configured', missing: [] };
    let balances: Awaited<ReturnType<Ledger['balances']>>;
    try {
      balances = await this.ledger.balances(treasury);
    } catch {
      return { tokens, status: 'validator_unavailable', missing: [] };
    }
    const missing = this.welcome.flatMap((w) => {
      const available = balances.balances.find((b) => b.token === w.token)?.available ?? '0';
      return parseAmount(available, w.token) < w.minor
        ? [
            {
              token: w.token,
              needed: w.amount,
              available: formatAmount(parseAmount(available, w.token), w.token),
            },
          ]
        : [];
    });
    return { tokens, status: missing.length > 0 ? 'treasury_short' : 'ready', missing };
  }
}

/** The lines the terminal prints at start about its welcome package. */
export function describeWelcome(status: WelcomeStatus, treasuryWallet: string | undefined): string[] {
  const pack = status.tokens.map((t) => `${t.amount} ${t.token}`).join(' and ');
  switch (status.status) {
    case 'ready':
      return [`  welcome package ${pack}: the treasury holds it`];
    case 'treasury_not_configured':
      return [];
    case 'validator_unavailable':
      return [
        `  warning: the treasury's balances could not be read (the validator does not answer): claims of ${pack} fail until it does`,
      ];
    case 'treasury_short':
      return [
        `  warning: the treasury ${treasuryWallet} cannot pay the welcome package (${pack}): it holds ${status.missing
          .map((m) => `${m.available} ${m.token} (needs ${m.needed})`)
          .join(', ')}; claims answer treasury_empty until it is funded (docs/terminal.md, "Try it locally")`,
      ];
  }
}
