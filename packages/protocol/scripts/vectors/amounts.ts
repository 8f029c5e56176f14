import {
  applyBps,
  formatDecimal,
  MAX_AMOUNT,
  MAX_DECIMAL,
  mulDiv,
  PRICE_DECIMALS,
  parseAmount,
  parsePrice,
  parseSignedAmount,
} from '../../src/amount.js';
import { ProtocolError } from '../../src/errors.js';
import { TOKEN_SYMBOLS, TOKENS, tokenDecimals } from '../../src/tokens.js';

/**
 * Amount vectors: decimal strings per token with their minor units and canonical form, strings
 * that must be rejected with their error code, signed amounts, prices, mulDiv and basis points.
 * Every bigint is a decimal string.
 */
export function generate() {
  const valid: Array<[string, string]> = [
    ['PTM', '0'],
    ['PTM', '0.0'],
    ['PTM', '1'],
    ['PTM', '12.5'],
    ['PTM', '12.500000000'],
    ['PTM', '0.000000001'],
    ['PTM', '1000000'],
    ['PTM', '18446744073.709551615'],
    ['SOL', '0.5'],
    ['SOL', '3.141592653'],
    ['USDC', '12.5'],
    ['USDC', '1.50'],
    ['USDC', '0.000001'],
    ['USDC', '18446744073709.551615'],
  ];
  const invalid: Array<[string, string]> = [
    ['PTM', ''],
    ['PTM', '.'],
    ['PTM', '.5'],
    ['PTM', '1.'],
    ['PTM', '01'],
    ['PTM', '00'],
    ['PTM', '00.5'],
    ['PTM', '+1'],
    ['PTM', '-1'],
    ['PTM', '-0'],
    ['PTM', '1e5'],
    ['PTM', '1E5'],
    ['PTM', ' 1'],
    ['PTM', '1 '],
    ['PTM', '1,5'],
    ['PTM', '1.5.5'],
    ['PTM', '0x10'],
    ['PTM', 'NaN'],
    ['PTM', 'Infinity'],
    ['PTM', '\u0661'],
    ['PTM', '0.0000000001'],
    ['PTM', '1.0000000000'],
    ['PTM', '18446744073.709551616'],
    ['PTM', '99999999999999999999999'],
    ['USDC', '1.0000000'],
    ['USDC', '0.0000001'],
    ['USDC', '18446744073709.551616'],
    ['BTC', '1'],
    ['ptm', '1'],
  ];
  const signedValid: Array<[string, string]> = [
    ['PTM', '-12.5'],
    ['PTM', '-0.000000001'],
    ['PTM', '5'],
    ['PTM', '0'],
    ['PTM', '-18446744073.709551615'],
    ['USDC', '-0.25'],
  ];
  const signedInvalid: Array<[string, string]> = [
    ['PTM', '-0'],
    ['PTM', '-0.0'],
    ['PTM', '-'],
    ['PTM', '--1'],
    ['PTM', '+5'],
    ['PTM', '- 1'],
    ['PTM', '-.5'],
    ['PTM', '-18446744073.709551616'],
    ['USDC', '-0.0000001'],
  ];
  const prices = [
    '0',
    '1',
    '1.5',
    '0.000000000000000001',
    '2500.123456789012345678',
    formatDecimal(MAX_DECIMAL, 18),
  ];
  const pricesInvalid = [
    '0.0000000000000000001',
    '340282366920938463463.374607431768211456',
    '-1',
    '1e-18',
    '',
  ];

  return {
    description:
      'Token amounts: decimal strings on the wire, integer minor units inside. minor = the string with its ' +
      'decimal point removed after padding the fraction to `decimals` digits. Every bigint is a decimal string.',
    grammar: '^(0|[1-9][0-9]*)(\\.[0-9]+)?$',
    max_amount: MAX_AMOUNT.toString(),
    price_decimals: PRICE_DECIMALS,
    max_price: MAX_DECIMAL.toString(),
    tokens: TOKEN_SYMBOLS.map((symbol) => ({ symbol, decimals: TOKENS[symbol].decimals })),
    amounts: valid.map(([token, text]) => {
      const minor = parseAmount(text, token);
      return { token, text, minor: minor.toString(), canonical: formatDecimal(minor, tokenDecimals(token)) };
    }),
    invalid_amounts: invalid.map(([token, text]) => ({
      token,
      text,
      ...rejection(() => parseAmount(text, token)),
    })),
    signed_amounts: signedValid.map(([token, text]) => {
      const minor = parseSignedAmount(text, token);
      return { token, text, minor: minor.toString(), canonical: formatDecimal(minor, tokenDecimals(token)) };
    }),
    invalid_signed_amounts: signedInvalid.map(([token, text]) => ({
      token,
      text,
      ...rejection(() => parseSignedAmount(text, token)),
    })),
    prices: prices.map((text) => {
      const value = parsePrice(text);
      return { text, value: value.toString(), canonical: formatDecimal(value, PRICE_DECIMALS) };
    }),
    invalid_prices: pricesInvalid.map((text) => ({ text, ...rejection(() => parsePrice(text)) })),
    mul_div: (
      [
        [10n, 3n, 4n],
        [-10n, 3n, 4n],
        [0n, 123n, 7n],
        [MAX_AMOUNT, MAX_AMOUNT, MAX_AMOUNT],
        [MAX_AMOUNT, 10n ** 18n, 3n],
        [12_500_000_000n, 7n, 30n],
      ] as const
    ).map(([a, b, c]) => ({
      a: a.toString(),
      b: b.toString(),
      c: c.toString(),
      result: mulDiv(a, b, c).toString(),
    })),
    apply_bps: (
      [
        [1_000n, 250],
        [999n, 1],
        [10_000n, 10_000],
        [12_345_678_901n, 333],
        [MAX_AMOUNT, 9_999],
        [5n, 25_000],
        [0n, 500],
      ] as const
    ).map(([amount, bps]) => ({ amount: amount.toString(), bps, result: applyBps(amount, bps).toString() })),
  };
}

/** The code of the ProtocolError that `run` throws, and for `invalid_amount` the reason. */
function rejection(run: () => unknown): { code: string; reason?: string } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    const reason = error.details?.reason;
    return typeof reason === 'string' ? { code: error.code, reason } : { code: error.code };
  }
  throw new Error('expected a ProtocolError, but the input was accepted');
}
