import Type, { type Static } from 'typebox';
import {
  AmountSchema,
  FractionSchema,
  IdSchema,
  nullable,
  PublicKeyHexSchema,
  SafeUintSchema,
  SignatureHexSchema,
  SignedRequestHeadersSchema,
  TokenSymbolSchema,
  UnixSecondsSchema,
  withDescription,
} from './common.js';
import { LockPeriodDaysSchema } from './economy.js';

/**
 * Terminal backend schemas ({terminal_url}). The terminal works with wallets as the front end
 * shows them: a wallet address is the base58 form of the wallet's ed25519 public key (the same
 * key the validator names in hex). Payments and welcome tokens are transfers on the validator's
 * ledger, named by their transfer_id.
 */

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';

export const WalletAddressSchema = Type.String({
  pattern: `^${BASE58}{32,44}$`,
  minLength: 32,
  maxLength: 44,
  description: 'A chain wallet address: a 32-byte public key in base58 (32 to 44 characters).',
});
export type WalletAddress = Static<typeof WalletAddressSchema>;

const SessionSchema = Type.String({
  pattern: '^[A-Za-z0-9_-]{16,128}$',
  minLength: 16,
  maxLength: 128,
  description:
    'The claim session of the signed-in browser (GET /api/session, claim_session; base64url, 16 to 128 characters). It must match the session cookie: a page of another site cannot read it, so it cannot make the browser claim (CSRF).',
});

const TransferIdSchema = withDescription(IdSchema, 'A transfer on the validator ledger (its transfer_id).');

// ---------------------------------------------------------------------------------------------
// Social-account OAuth and welcome tokens
// ---------------------------------------------------------------------------------------------

export const XAuthAuthorizeQuerySchema = Type.Object(
  {
    wallet: withDescription(
      WalletAddressSchema,
      'The wallet that will receive the welcome tokens; the browser must have proven it first (POST /api/wallet/verify).',
    ),
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
    transfer_id: TransferIdSchema,
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
    transfer_id: withDescription(
      IdSchema,
      'The transfer paying the price to the treasury (POST /transfer on the validator, from the wallet): checked on the ledger (sender, recipient, token, amount) and usable for one purchase only.',
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
    amount: withDescription(
      AmountSchema,
      'The amount of the paying transfer, in currency (at least the price).',
    ),
    currency: PurchaseCurrencySchema,
    transfer_id: withDescription(IdSchema, 'The paying transfer.'),
  },
  { title: 'PurchaseResult', description: 'Purchase response.' },
);
export type PurchaseResult = Static<typeof PurchaseResultSchema>;

const ProductSchema = Type.Enum(['premium', 'no_ads'], {
  type: 'string',
  description: 'premium (a period of premium) or no_ads (ads hidden).',
});

export const TerminalOfferSchema = Type.Object(
  {
    treasury: nullable(
      Type.Object(
        {
          wallet: withDescription(WalletAddressSchema, "The treasury's wallet address (base58)."),
          pubkey: withDescription(PublicKeyHexSchema, 'The same key in hex, as the validator names it.'),
        },
        { description: 'Where purchases are paid to and welcome tokens come from.' },
      ),
      'The treasury, or null when this terminal has no treasury key (claims and purchases are off).',
    ),
    welcome: Type.Object(
      {
        tokens: Type.Array(
          Type.Object(
            {
              token: withDescription(TokenSymbolSchema, 'The token.'),
              amount: withDescription(AmountSchema, 'The amount sent to each new wallet.'),
            },
            { description: 'One welcome transfer.' },
          ),
          { maxItems: 4, description: 'The welcome package: one transfer per token.' },
        ),
        status: Type.Enum(['ready', 'treasury_short', 'treasury_not_configured', 'validator_unavailable'], {
          type: 'string',
          description:
            'ready: the treasury holds the whole package; treasury_short: it lacks some token (missing says which; a claim is refused with treasury_empty); treasury_not_configured: no treasury key; validator_unavailable: its balances could not be read.',
        }),
        missing: Type.Array(
          Type.Object(
            {
              token: withDescription(TokenSymbolSchema, 'The token the treasury lacks.'),
              needed: withDescription(AmountSchema, 'What one claim sends of it.'),
              available: withDescription(AmountSchema, 'What the treasury holds of it now.'),
            },
            { description: 'A token of the package the treasury cannot pay.' },
          ),
          {
            maxItems: 4,
            description: 'The tokens the treasury lacks for one claim (empty unless treasury_short).',
          },
        ),
      },
      { description: 'The welcome tokens and whether a claim can be paid now.' },
    ),
    products: Type.Array(
      Type.Object(
        {
          product: ProductSchema,
          days: nullable(
            SafeUintSchema,
            'How long one purchase lasts, in days; null when it does not expire.',
          ),
          prices: Type.Array(
            Type.Object(
              {
                currency: PurchaseCurrencySchema,
                amount: withDescription(AmountSchema, 'The price, to send to the treasury.'),
              },
              { description: 'A price in one currency.' },
            ),
            { maxItems: 2, description: 'The price in SOL and in PTM.' },
          ),
          memo: Type.String({
            maxLength: 64,
            description: 'The memo the front end puts on the paying transfer (any memo is accepted).',
          }),
        },
        { description: 'A product for sale.' },
      ),
      { maxItems: 4, description: 'The products: premium and no_ads.' },
    ),
  },
  {
    title: 'TerminalOffer',
    description:
      'GET /api/offer: what this terminal gives and sells: the welcome package (and whether the treasury can pay it now), the prices and the treasury to pay.',
  },
);
export type TerminalOffer = Static<typeof TerminalOfferSchema>;

export const TerminalTransferRequestSchema = Type.Object(
  {
    body: Type.String({
      minLength: 2,
      maxLength: 1024,
      description:
        'The exact JSON text of the POST /transfer body the wallet signed ({from, to, token, amount, memo?}): from the proven wallet, to the treasury, in SOL or PTM.',
    }),
    timestamp: SignedRequestHeadersSchema.properties['x-tm-timestamp'],
    nonce: SignedRequestHeadersSchema.properties['x-tm-nonce'],
    signature: withDescription(
      SignatureHexSchema,
      "The wallet's ed25519 signature of the signed-request message of POST /transfer with this body, time and nonce (docs/protocol.md, Signed requests).",
    ),
  },
  {
    title: 'TerminalTransferRequest',
    description:
      'POST /api/crypto/transfer body: a transfer to the treasury signed in the browser, which the terminal passes to the validator exactly as signed.',
  },
);
export type TerminalTransferRequest = Static<typeof TerminalTransferRequestSchema>;

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

// ---------------------------------------------------------------------------------------------
// Wallet proof and the browser session
// ---------------------------------------------------------------------------------------------

export const WalletChallengeRequestSchema = Type.Object(
  { wallet: withDescription(WalletAddressSchema, 'The wallet to prove.') },
  { title: 'WalletChallengeRequest', description: 'POST /api/wallet/challenge body.' },
);
export type WalletChallengeRequest = Static<typeof WalletChallengeRequestSchema>;

export const WalletChallengeSchema = Type.Object(
  {
    wallet: withDescription(WalletAddressSchema, 'The wallet to prove.'),
    message: Type.String({
      maxLength: 1024,
      description:
        "The text to sign with the wallet's key (ed25519 over its UTF-8 bytes): names the terminal, the wallet, a one-time nonce and the expiry.",
    }),
    expires_at: withDescription(UnixSecondsSchema, 'When the challenge stops being accepted.'),
  },
  {
    title: 'WalletChallenge',
    description: 'POST /api/wallet/challenge response; the challenge is kept in the session cookie.',
  },
);
export type WalletChallenge = Static<typeof WalletChallengeSchema>;

export const WalletVerifyRequestSchema = Type.Object(
  {
    wallet: withDescription(WalletAddressSchema, 'The wallet of the challenge.'),
    signature: withDescription(SignatureHexSchema, 'The ed25519 signature of the challenge message.'),
  },
  { title: 'WalletVerifyRequest', description: 'POST /api/wallet/verify body.' },
);
export type WalletVerifyRequest = Static<typeof WalletVerifyRequestSchema>;

export const EntitlementSchema = Type.Object(
  {
    product: Type.Enum(['premium', 'no_ads'], { type: 'string', description: 'The product.' }),
    valid_until: nullable(UnixSecondsSchema, 'When it ends, Unix seconds; null when it does not expire.'),
  },
  { title: 'Entitlement', description: 'A product a wallet holds now.' },
);
export type Entitlement = Static<typeof EntitlementSchema>;

export const TerminalSessionSchema = Type.Object(
  {
    account: nullable(
      Type.Object(
        {
          provider: Type.String({ maxLength: 32, description: 'The OAuth provider, e.g. "x".' }),
          id: Type.String({ maxLength: 128, description: "The account's stable id at the provider." }),
          username: nullable(Type.String({ maxLength: 128 }), 'The handle, when the provider gives one.'),
        },
        { description: 'The signed-in social account.' },
      ),
      'The social account signed in through /api/x-auth/authorize, or null.',
    ),
    wallet: nullable(
      WalletAddressSchema,
      'The wallet this browser proved (POST /api/wallet/verify), or null.',
    ),
    claim_session: nullable(
      SessionSchema,
      'The token POST /api/x-auth/claim needs, once an account is signed in; else null.',
    ),
    entitlements: Type.Array(EntitlementSchema, {
      maxItems: 4,
      description: 'The products the proven wallet holds now (empty without a wallet).',
    }),
  },
  { title: 'TerminalSession', description: 'GET /api/session: what this browser has proven.' },
);
export type TerminalSession = Static<typeof TerminalSessionSchema>;

export const WalletParamsSchema = Type.Object(
  { wallet: WalletAddressSchema },
  { title: 'WalletParams', description: 'Path parameters naming a wallet.' },
);
export type WalletParams = Static<typeof WalletParamsSchema>;
