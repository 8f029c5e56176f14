import Type, { type Static } from 'typebox';
import {
  AmountSchema,
  FractionSchema,
  IdSchema,
  nullable,
  SafeUintSchema,
  TokenSymbolSchema,
  UnixSecondsSchema,
  withDescription,
} from './common.js';
import { LockPeriodDaysSchema } from './economy.js';

/**
 * Terminal backend schemas ({terminal_url}). The terminal works with chain wallets, so wallet
 * addresses and transaction signatures are base58 (the chain's own encoding), not hex.
 */

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';

export const WalletAddressSchema = Type.String({
  pattern: `^${BASE58}{32,44}$`,
  minLength: 32,
  maxLength: 44,
  description: 'A chain wallet address: a 32-byte public key in base58 (32 to 44 characters).',
});
export type WalletAddress = Static<typeof WalletAddressSchema>;

export const ChainTxSignatureSchema = Type.String({
  pattern: `^${BASE58}{64,88}$`,
  minLength: 64,
  maxLength: 88,
  description: 'A chain transaction signature: 64 bytes in base58 (64 to 88 characters).',
});
export type ChainTxSignature = Static<typeof ChainTxSignatureSchema>;

const SessionSchema = Type.String({
  pattern: '^[A-Za-z0-9_-]{16,128}$',
  minLength: 16,
  maxLength: 128,
  description:
    'The claim session handed to the front end by /api/x-auth/callback (base64url, 16 to 128 characters).',
});

// ---------------------------------------------------------------------------------------------
// Social-account OAuth and welcome tokens
// ---------------------------------------------------------------------------------------------

export const XAuthAuthorizeQuerySchema = Type.Object(
  {
    wallet: withDescription(WalletAddressSchema, 'The wallet that will receive the welcome tokens.'),
    redirect: Type.Optional(
      Type.String({
        pattern: '^/[^\\s]*$',
        maxLength: 2048,
        description:
          'A path on the terminal front end to return to after the flow (must start with "/"; absolute URLs are refused to prevent open redirects). Default "/".',
      }),
    ),
  },
  { title: 'XAuthAuthorizeQuery', description: 'GET /api/x-auth/authorize query.' },
);
export type XAuthAuthorizeQuery = Static<typeof XAuthAuthorizeQuerySchema>;

export const XAuthCallbackQuerySchema = Type.Object(
  {
    code: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'The authorization code from the provider.',
      }),
    ),
    state: Type.String({
      minLength: 1,
      maxLength: 512,
      description:
        'The state issued by /api/x-auth/authorize; binds the callback to that request (CSRF check).',
    }),
    error: Type.Optional(
      Type.String({
        maxLength: 256,
        description: 'Set by the provider instead of code when the user refused.',
      }),
    ),
    error_description: Type.Optional(
      Type.String({ maxLength: 1024, description: "The provider's explanation of error." }),
    ),
  },
  { title: 'XAuthCallbackQuery', description: 'GET /api/x-auth/callback query, sent by the OAuth provider.' },
);
export type XAuthCallbackQuery = Static<typeof XAuthCallbackQuerySchema>;

export const RedirectResponseSchema = Type.Null({
  description: 'A 302 redirect with no body; the Location header holds the target.',
  headers: {
    location: Type.String({ maxLength: 4096, description: 'Where the browser goes next.' }),
  },
});

export const XAuthClaimRequestSchema = Type.Object(
  {
    wallet: withDescription(
      WalletAddressSchema,
      'The wallet to send the welcome tokens to; must be the one given at authorize.',
    ),
    session: SessionSchema,
  },
  { title: 'XAuthClaimRequest', description: 'POST /api/x-auth/claim body.' },
);
export type XAuthClaimRequest = Static<typeof XAuthClaimRequestSchema>;

export const WelcomeTransferSchema = Type.Object(
  {
    token: withDescription(TokenSymbolSchema, 'The token sent.'),
    amount: withDescription(AmountSchema, 'The amount sent, in whole units of token.'),
    signature: withDescription(ChainTxSignatureSchema, 'The chain transaction that sent it.'),
  },
  { title: 'WelcomeTransfer', description: 'One welcome transfer from the treasury wallet.' },
);
export type WelcomeTransfer = Static<typeof WelcomeTransferSchema>;

export const XAuthClaimResultSchema = Type.Object(
  {
    claimed: Type.Boolean({
      description:
        'True when the transfers were sent by this request; false when this social account or wallet had already claimed (transfers then lists the original ones). Claiming is idempotent.',
    }),
    wallet: withDescription(WalletAddressSchema, 'The receiving wallet.'),
    transfers: Type.Array(WelcomeTransferSchema, {
      maxItems: 4,
      description: 'The welcome transfers, one per token (two kinds of token).',
    }),
  },
  { title: 'XAuthClaimResult', description: 'POST /api/x-auth/claim response.' },
);
export type XAuthClaimResult = Static<typeof XAuthClaimResultSchema>;

// ---------------------------------------------------------------------------------------------
// Purchases
// ---------------------------------------------------------------------------------------------

export const PurchaseCurrencySchema = Type.Enum(['SOL', 'PTM'], {
  type: 'string',
  description: "SOL (the chain's native coin) or PTM (the secondary token).",
});
export type PurchaseCurrency = Static<typeof PurchaseCurrencySchema>;

export const PurchaseRequestSchema = Type.Object(
  {
    wallet: withDescription(WalletAddressSchema, 'The paying wallet; the product is attached to it.'),
    currency: PurchaseCurrencySchema,
    tx_signature: withDescription(
      ChainTxSignatureSchema,
      'The confirmed chain transaction paying the price to the treasury; verified on chain and usable once.',
    ),
  },
  {
    title: 'PurchaseRequest',
    description: 'POST /api/crypto/premium-purchase and POST /api/crypto/no-ads-purchase body.',
  },
);
export type PurchaseRequest = Static<typeof PurchaseRequestSchema>;

export const PurchaseResultSchema = Type.Object(
  {
    purchase_id: withDescription(IdSchema, 'The recorded purchase.'),
    product: Type.Enum(['premium', 'no_ads'], {
      type: 'string',
      description: 'premium (one month of premium) or no_ads (ads hidden).',
    }),
    wallet: withDescription(WalletAddressSchema, 'The wallet the product is attached to.'),
    valid_until: nullable(
      UnixSecondsSchema,
      'When the product ends (premium: one month after purchase, or after the current premium period); null when it does not expire.',
    ),
    amount: withDescription(AmountSchema, 'The price paid, in currency.'),
    currency: PurchaseCurrencySchema,
    tx_signature: withDescription(ChainTxSignatureSchema, 'The paying transaction.'),
  },
  { title: 'PurchaseResult', description: 'Purchase response.' },
);
export type PurchaseResult = Static<typeof PurchaseResultSchema>;

// ---------------------------------------------------------------------------------------------
// Read-only data for the front end (/api/staking/*, /api/swap/*, /api/vault/*)
// ---------------------------------------------------------------------------------------------

export const StakingOptionsSchema = Type.Object(
  {
    token: withDescription(TokenSymbolSchema, 'The staked token (PTM).'),
    options: Type.Array(
      Type.Object(
        {
          lock_period_days: LockPeriodDaysSchema,
          label: Type.String({
            maxLength: 32,
            description: 'Display label, e.g. "Flexible", "7 days", "30 days".',
          }),
          yield_rate: withDescription(FractionSchema, 'Annual yield rate for this lock (APR as a fraction).'),
          early_unstake_penalty: withDescription(
            FractionSchema,
            'Fraction of the principal kept when unstaking before expiry.',
          ),
        },
        { description: 'One lock choice.' },
      ),
      { maxItems: 8, description: 'The lock choices offered: flexible, 7 days, 30 days.' },
    ),
  },
  { title: 'StakingOptions', description: 'GET /api/staking/options.' },
);
export type StakingOptions = Static<typeof StakingOptionsSchema>;

export const VaultOptionsSchema = Type.Object(
  {
    tokens: Type.Array(TokenSymbolSchema, { maxItems: 16, description: 'Tokens a vault can hold.' }),
    min_lock_s: withDescription(SafeUintSchema, 'Shortest lock, in seconds.'),
    max_lock_s: withDescription(SafeUintSchema, 'Longest lock, in seconds.'),
  },
  { title: 'VaultOptions', description: 'GET /api/vault/options.' },
);
export type VaultOptions = Static<typeof VaultOptionsSchema>;
