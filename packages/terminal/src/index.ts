/**
 * @tensormine/terminal: the web terminal's backend — social-account OAuth (PKCE, state),
 * wallet proof by signature, one welcome claim per account and per wallet paid by treasury
 * transfers on the validator ledger, purchases verified on the ledger, and the validator's
 * staking, swap and vault data; in process (`createTerminal()`) or as a service
 * (`tensormine-terminal start`).
 */
export {
  BUILTIN_PUBLIC_DIR,
  type CreateTerminalOptions,
  createTerminal,
  TERMINAL_VERSION,
  type Terminal,
} from './app.js';
export { ClaimService } from './claims.js';
export {
  parseWelcomeTokens,
  resolveTerminalConfig,
  SECRET_SETTINGS,
  TERMINAL_SETTING_NAMES,
  TERMINAL_SETTINGS,
  type TerminalConfig,
  type TerminalSettingName,
  type WelcomeToken,
} from './config.js';
export { Ledger, LedgerError, loadTreasuryKey, type PreparedTransfer } from './ledger.js';
export { accountOf, type OAuthAccount, OAuthClient, OAuthFlowError } from './oauth.js';
export { describeWelcome, Offer, type WelcomeStatus } from './offer.js';
export { PRODUCT_MEMO, type Product, PurchaseService } from './purchases.js';
export { TerminalStore } from './store.js';
export { checkChallenge, newChallenge, pubkeyToWallet, walletToPubkey } from './wallet.js';
