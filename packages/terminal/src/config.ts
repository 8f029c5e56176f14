import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseAmount } from '@tensormine/protocol';
import {
  boolSetting as bool,
  ConfigError,
  intSetting as int,
  type LogLevel,
  oneOfSetting,
  type ResolvedSettings,
  type ResolveSettingsInput,
  resolveSettings,
  type SettingSpecs,
  serviceBaseSettings,
  textSetting as text,
  urlSetting as url,
} from '@tensormine/service-kit';

/**
 * Terminal backend configuration. The seed's variable names are used where the seed has one
 * (X_CLIENT_ID, X_CLIENT_SECRET, X_CALLBACK_URL, REWARD_WALLET_PRIVATE_KEY, SOLANA_RPC_URL,
 * VITE_API_BASE_URL); the others are TERMINAL_*. Precedence flags > environment > config file >
 * defaults. docs/terminal.md says what each one means here.
 *
 * The treasury key (REWARD_WALLET_PRIVATE_KEY, or the file REWARD_WALLET_PRIVATE_KEY_FILE) and
 * the OAuth client secret are secrets: `tensormine-terminal config` shows "(set)", never them.
 */
export interface TerminalConfig {
  readonly host: string;
  readonly port: number;
  /** Where the database and the generated session key live; ':memory:' keeps nothing. */
  readonly dataDir: string;
  /** The public base URL of this backend as the browser reaches it (VITE_API_BASE_URL). */
  readonly publicUrl: string;
  /** Where the browser goes after sign-in: the front end's base URL (default publicUrl). */
  readonly frontendUrl: string | undefined;
  /** The validator the ledger, staking, swap and vault data come from (SOLANA_RPC_URL). */
  readonly validatorUrl: string;
  /** The OAuth client of the social provider. */
  readonly oauthClientId: string | undefined;
  readonly oauthClientSecret: string | undefined;
  /** The redirect URI registered at the provider (X_CALLBACK_URL); default publicUrl + /api/x-auth/callback. */
  readonly oauthCallbackUrl: string | undefined;
  readonly oauthProvider: string;
  readonly oauthIssuer: string;
  readonly oauthAuthorizationUrl: string;
  readonly oauthTokenUrl: string;
  readonly oauthUserinfoUrl: string;
  readonly oauthScopes: string;
  /** How the client authenticates at the token endpoint. */
  readonly oauthClientAuth: 'basic' | 'post' | 'none';
  /** Allow http:// OAuth endpoints (tests and local providers only). */
  readonly oauthAllowHttp: boolean;
  /** The treasury's ed25519 secret key (64 hex digits) from the environment. */
  readonly rewardWalletPrivateKey: string | undefined;
  /** Or a file holding it (mode 0600). */
  readonly rewardWalletPrivateKeyFile: string | undefined;
  /** The welcome tokens: "PTM:100,SOL:0.05" (two kinds). */
  readonly welcomeTokens: string;
  readonly premiumPriceSol: string;
  readonly premiumPricePtm: string;
  readonly noAdsPriceSol: string;
  readonly noAdsPricePtm: string;
  /** Length of one premium purchase, days. */
  readonly premiumDays: number;
  /** Length of a no-ads purchase, days; 0: it does not expire. */
  readonly noAdsDays: number;
  /** Lifetime of the session cookie, seconds. */
  readonly sessionTtlS: number;
  /** A file holding the 32-byte session key (hex); generated in dataDir when unset. */
  readonly sessionKeyFile: string | undefined;
  readonly rateLimitPerSecond: number;
  readonly rateLimitBurst: number;
  readonly logLevel: LogLevel;
}

export type TerminalSettingName = keyof TerminalConfig;

function price(token: 'SOL' | 'PTM') {
  return (value: unknown, where: string): string => {
    const s = text(value, where);
    try {
      if (parseAmount(s, token) === 0n) throw new Error('zero');
    } catch {
      throw new ConfigError(
        `${where}: expected a ${token} amount above 0 (e.g. "0.5"), got ${JSON.stringify(s)}`,
      );
    }
    return s;
  };
}

/** The secret key: 64 hex digits. The message never contains the value. */
function secretKey(value: unknown, where: string): string {
  if (typeof value === 'string' && /^[0-9a-fA-F]{64}$/.test(value.trim())) return value.trim().toLowerCase();
  throw new ConfigError(`${where}: expected 64 hex digits (an ed25519 secret key); the value is not shown`);
}

function secret(value: unknown, where: string): string {
  if (typeof value === 'string' && value.length > 0 && value.length <= 4096) return value;
  throw new ConfigError(`${where}: expected a non-empty string; the value is not shown`);
}

export function defaultTerminalDataDir(): string {
  const base = process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share');
  return join(base, 'tensormine', 'terminal');
}

export const TERMINAL_SETTINGS: SettingSpecs<TerminalConfig> = {
  ...serviceBaseSettings('TERMINAL', { port: 8440, perSecond: 20, burst: 100 }),
  dataDir: {
    env: 'TERMINAL_DATA_DIR',
    description: 'data directory (database, session key); :memory: keeps nothing',
    default: defaultTerminalDataDir,
    parse: text,
  },
  publicUrl: {
    env: 'VITE_API_BASE_URL',
    description: 'public base URL of this backend, as the browser reaches it',
    default: () => 'http://127.0.0.1:8440',
    parse: url,
  },
  frontendUrl: {
    env: 'TERMINAL_FRONTEND_URL',
    description: 'base URL of the front end the browser returns to after sign-in (default: the public URL)',
    default: () => undefined,
    parse: url,
  },
  validatorUrl: {
    env: 'SOLANA_RPC_URL',
    description: 'the validator (ledger, staking, swap and vault data)',
    default: () => 'http://127.0.0.1:8420',
    parse: url,
  },
  oauthClientId: {
    env: 'X_CLIENT_ID',
    description: 'OAuth client id',
    default: () => undefined,
    parse: text,
  },
  oauthClientSecret: {
    env: 'X_CLIENT_SECRET',
    description: 'OAuth client secret (never shown)',
    default: () => undefined,
    parse: secret,
  },
  oauthCallbackUrl: {
    env: 'X_CALLBACK_URL',
    description: 'redirect URI registered at the provider (default: public URL + /api/x-auth/callback)',
    default: () => undefined,
    parse: url,
  },
  oauthProvider: {
    env: 'TERMINAL_OAUTH_PROVIDER',
    description: 'name of the provider, recorded with each account',
    default: () => 'x',
    parse: (v, w) => {
      const s = text(v, w);
      if (!/^[a-z0-9-]{1,32}$/.test(s))
        throw new ConfigError(`${w}: expected a lowercase slug, got ${JSON.stringify(s)}`);
      return s;
    },
  },
  oauthIssuer: {
    env: 'TERMINAL_OAUTH_ISSUER',
    description: 'issuer identifier of the provider',
    default: () => 'https://x.com',
    parse: url,
  },
  oauthAuthorizationUrl: {
    env: 'TERMINAL_OAUTH_AUTHORIZATION_URL',
    description: 'authorization endpoint',
    default: () => 'https://x.com/i/oauth2/authorize',
    parse: url,
  },
  oauthTokenUrl: {
    env: 'TERMINAL_OAUTH_TOKEN_URL',
    description: 'token endpoint',
    default: () => 'https://api.x.com/2/oauth2/token',
    parse: url,
  },
  oauthUserinfoUrl: {
    env: 'TERMINAL_OAUTH_USERINFO_URL',
    description: 'the endpoint naming the signed-in account',
    default: () => 'https://api.x.com/2/users/me',
    parse: url,
  },
  oauthScopes: {
    env: 'TERMINAL_OAUTH_SCOPES',
    description: 'scopes asked for',
    default: () => 'users.read tweet.read',
    parse: text,
  },
  oauthClientAuth: {
    env: 'TERMINAL_OAUTH_CLIENT_AUTH',
    description: 'token endpoint client authentication: basic, post or none (public client)',
    default: () => 'basic',
    parse: oneOfSetting(['basic', 'post', 'none'] as const),
  },
  oauthAllowHttp: {
    env: 'TERMINAL_OAUTH_ALLOW_HTTP',
    description: 'allow http:// OAuth endpoints (local providers and tests only)',
    default: () => false,
    parse: bool,
  },
  rewardWalletPrivateKey: {
    env: 'REWARD_WALLET_PRIVATE_KEY',
    description: "the treasury's ed25519 secret key, 64 hex digits (never shown)",
    default: () => undefined,
    parse: secretKey,
  },
  rewardWalletPrivateKeyFile: {
    env: 'REWARD_WALLET_PRIVATE_KEY_FILE',
    description: 'a key file (mode 0600) holding the treasury key instead',
    default: () => undefined,
    parse: text,
  },
  welcomeTokens: {
    env: 'TERMINAL_WELCOME_TOKENS',
    description: 'the welcome tokens, "TOKEN:amount,TOKEN:amount"',
    default: () => 'PTM:100,SOL:0.05',
    parse: (v, w) => {
      const s = text(v, w);
      parseWelcomeTokens(s, w);
      return s;
    },
  },
  premiumPriceSol: {
    env: 'TERMINAL_PREMIUM_PRICE_SOL',
    description: 'price of one premium period in SOL',
    default: () => '0.1',
    parse: price('SOL'),
  },
  premiumPricePtm: {
    env: 'TERMINAL_PREMIUM_PRICE_PTM',
    description: 'price of one premium period in PTM',
    default: () => '200',
    parse: price('PTM'),
  },
  noAdsPriceSol: {
    env: 'TERMINAL_NO_ADS_PRICE_SOL',
    description: 'price of no-ads in SOL',
    default: () => '0.05',
    parse: price('SOL'),
  },
  noAdsPricePtm: {
    env: 'TERMINAL_NO_ADS_PRICE_PTM',
    description: 'price of no-ads in PTM',
    default: () => '100',
    parse: price('PTM'),
  },
  premiumDays: {
    env: 'TERMINAL_PREMIUM_DAYS',
    description: 'length of one premium purchase, days',
    default: () => 30,
    parse: int(1, 3660),
  },
  noAdsDays: {
    env: 'TERMINAL_NO_ADS_DAYS',
    description: 'length of a no-ads purchase, days (0: it does not expire)',
    default: () => 0,
    parse: int(0, 3660),
  },
  sessionTtlS: {
    env: 'TERMINAL_SESSION_TTL_S',
    description: 'lifetime of the session cookie, seconds',
    default: () => 86_400,
    parse: int(300, 30 * 86_400),
  },
  sessionKeyFile: {
    env: 'TERMINAL_SESSION_KEY_FILE',
    description: 'file holding the 32-byte session key in hex (default: generated in the data directory)',
    default: () => undefined,
    parse: text,
  },
};

export const TERMINAL_SETTING_NAMES = Object.keys(TERMINAL_SETTINGS) as TerminalSettingName[];
/** Settings whose value is never printed. */
export const SECRET_SETTINGS: readonly TerminalSettingName[] = [
  'oauthClientSecret',
  'rewardWalletPrivateKey',
];

export function resolveTerminalConfig(
  input: ResolveSettingsInput<TerminalConfig> = {},
): ResolvedSettings<TerminalConfig> {
  return resolveSettings(TERMINAL_SETTINGS, input);
}

export interface WelcomeToken {
  readonly token: 'PTM' | 'SOL' | 'USDC';
  /** The amount as configured (decimal string). */
  readonly amount: string;
  readonly minor: bigint;
}

/** "PTM:100,SOL:0.05" → the welcome transfers, one per token (two or more kinds, no repeats). */
export function parseWelcomeTokens(value: string, where = 'welcomeTokens'): WelcomeToken[] {
  const parts = value.split(',').map((p) => p.trim());
  const out: WelcomeToken[] = [];
  for (const part of parts) {
    const m = /^(PTM|SOL|USDC):(\S+)$/.exec(part);
    if (!m) throw new ConfigError(`${where}: expected "TOKEN:amount" items, got ${JSON.stringify(part)}`);
    const token = m[1] as WelcomeToken['token'];
    let minor: bigint;
    try {
      minor = parseAmount(m[2] as string, token);
    } catch {
      throw new ConfigError(`${where}: ${JSON.stringify(m[2])} is not a ${token} amount`);
    }
    if (minor === 0n) throw new ConfigError(`${where}: the ${token} amount must be above 0`);
    if (out.some((w) => w.token === token)) throw new ConfigError(`${where}: ${token} is listed twice`);
    out.push({ token, amount: m[2] as string, minor });
  }
  if (out.length < 1 || out.length > 4) throw new ConfigError(`${where}: expected 1 to 4 tokens`);
  return out;
}
