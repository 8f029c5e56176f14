import { describe } from './bytes.js';
import { ProtocolError } from './errors.js';

/**
 * The tokens the protocol knows. Every amount is an integer number of a token's minor units
 * (`1 PTM = 10^9` minor units); on the wire it is a decimal string with at most `decimals`
 * fraction digits (see amount.ts).
 */
export interface Token {
  /** The wire symbol: 2 to 10 uppercase ASCII letters or digits. */
  readonly symbol: string;
  /** Fraction digits of one whole token: one whole token is `10^decimals` minor units. */
  readonly decimals: number;
  /** What the token is used for. */
  readonly description: string;
}

/** The wire form of a token symbol, as a regular expression source usable in JSON Schema. */
export const TOKEN_SYMBOL_PATTERN = '^[A-Z0-9]{2,10}$';

const TOKEN_SYMBOL_RE = new RegExp(TOKEN_SYMBOL_PATTERN);

/**
 * The token registry. The set is fixed by the protocol: a validator lists no other tokens, and
 * decimals never change (changing them would change the meaning of every stored amount).
 */
export const TOKENS = Object.freeze({
  PTM: Object.freeze({
    symbol: 'PTM',
    decimals: 9,
    description: 'The network token: mining rewards, staking, pool stakes, fees and penalties.',
  }),
  SOL: Object.freeze({
    symbol: 'SOL',
    decimals: 9,
    description: "The chain's native coin (1 SOL = 10^9 lamports).",
  }),
  USDC: Object.freeze({
    symbol: 'USDC',
    decimals: 6,
    description: 'A stable secondary token, for swaps, premium purchases and marketplace settlement.',
  }),
} as const satisfies Record<string, Token>);

/** A symbol listed in {@link TOKENS}. */
export type TokenSymbol = keyof typeof TOKENS;

/** The listed symbols in registry order: `['PTM', 'SOL', 'USDC']`. */
export const TOKEN_SYMBOLS: readonly TokenSymbol[] = Object.freeze(Object.keys(TOKENS) as TokenSymbol[]);

/** True when `value` is a symbol listed in {@link TOKENS} (exact case: `"ptm"` is not). */
export function isTokenSymbol(value: unknown): value is TokenSymbol {
  return typeof value === 'string' && Object.hasOwn(TOKENS, value);
}

/**
 * The registry entry of `symbol`.
 * @throws ProtocolError `unknown_token` when the symbol is malformed or not listed.
 */
export function getToken(symbol: string): Token {
  if (isTokenSymbol(symbol)) return TOKENS[symbol];
  if (typeof symbol !== 'string' || !TOKEN_SYMBOL_RE.test(symbol)) {
    throw new ProtocolError(
      'unknown_token',
      `token: expected a symbol of 2 to 10 uppercase letters or digits, got ${describe(symbol)}`,
      { known: TOKEN_SYMBOLS },
    );
  }
  throw new ProtocolError(
    'unknown_token',
    `token: expected one of ${TOKEN_SYMBOLS.join(', ')}, got ${describe(symbol)}`,
    { known: TOKEN_SYMBOLS },
  );
}

/**
 * The number of fraction digits of `symbol` (PTM 9, SOL 9, USDC 6).
 * @throws ProtocolError `unknown_token` when the symbol is malformed or not listed.
 */
export function tokenDecimals(symbol: string): number {
  return getToken(symbol).decimals;
}
