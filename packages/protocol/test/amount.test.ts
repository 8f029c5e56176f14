import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyBps,
  formatAmount,
  formatDecimal,
  formatPrice,
  formatSignedAmount,
  MAX_AMOUNT,
  MAX_DECIMAL,
  mulDiv,
  parseAmount,
  parseDecimal,
  parsePrice,
  parseSignedAmount,
} from '../src/amount.js';
import { ProtocolError } from '../src/errors.js';
import {
  getToken,
  isTokenSymbol,
  TOKEN_SYMBOL_PATTERN,
  TOKEN_SYMBOLS,
  TOKENS,
  tokenDecimals,
} from '../src/tokens.js';

/** The error `run` throws, reduced to what callers rely on. */
function thrown(run: () => unknown): { name: string; code?: string; message: string; reason?: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof ProtocolError) {
      const reason = error.details?.reason;
      return reason === undefined
        ? { name: error.name, code: error.code, message: error.message }
        : { name: error.name, code: error.code, message: error.message, reason };
    }
    if (error instanceof Error) return { name: error.name, message: error.message };
    throw error;
  }
  throw new Error('expected an error, but none was thrown');
}

function invalidAmount(message: string, reason: string) {
  return { name: 'ProtocolError', code: 'invalid_amount', message, reason };
}

/** The grammar, written independently of the implementation. */
const GRAMMAR = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

describe('token registry', () => {
  it('lists PTM and SOL with 9 decimals and USDC with 6', () => {
    expect(TOKEN_SYMBOLS).toEqual(['PTM', 'SOL', 'USDC']);
    expect(TOKEN_SYMBOLS.map((s) => [s, tokenDecimals(s)])).toEqual([
      ['PTM', 9],
      ['SOL', 9],
      ['USDC', 6],
    ]);
  });

  it('names every token by its key, with a symbol of 2 to 10 uppercase letters or digits', () => {
    for (const symbol of TOKEN_SYMBOLS) {
      expect(TOKENS[symbol].symbol).toBe(symbol);
      expect(symbol).toMatch(new RegExp(TOKEN_SYMBOL_PATTERN));
    }
  });

  it('cannot be modified at run time', () => {
    expect(Object.isFrozen(TOKENS)).toBe(true);
    for (const symbol of TOKEN_SYMBOLS) expect(Object.isFrozen(TOKENS[symbol])).toBe(true);
  });

  it('recognises listed symbols only, in exact case', () => {
    expect(isTokenSymbol('PTM')).toBe(true);
    expect(isTokenSymbol('USDC')).toBe(true);
    expect(isTokenSymbol('ptm')).toBe(false);
    expect(isTokenSymbol('BTC')).toBe(false);
    expect(isTokenSymbol('toString')).toBe(false);
    expect(isTokenSymbol(9)).toBe(false);
  });

  it('rejects an unlisted symbol, naming the listed ones', () => {
    expect(thrown(() => tokenDecimals('BTC'))).toEqual({
      name: 'ProtocolError',
      code: 'unknown_token',
      message: 'token: expected one of PTM, SOL, USDC, got "BTC"',
    });
  });

  it('rejects a malformed symbol, saying what a symbol looks like', () => {
    for (const bad of ['ptm', 'P', 'ABCDEFGHIJK', 'P-M', '', 'constructor']) {
      expect(thrown(() => getToken(bad))).toEqual({
        name: 'ProtocolError',
        code: 'unknown_token',
        message: `token: expected a symbol of 2 to 10 uppercase letters or digits, got ${JSON.stringify(bad)}`,
      });
    }
  });
});

describe('parseAmount', () => {
  it('converts decimal strings to minor units of the token', () => {
    expect(parseAmount('12.5', 'PTM')).toBe(12_500_000_000n);
    expect(parseAmount('12.5', 'USDC')).toBe(12_500_000n);
    expect(parseAmount('0', 'SOL')).toBe(0n);
    expect(parseAmount('0.0', 'SOL')).toBe(0n);
    expect(parseAmount('0.000000001', 'PTM')).toBe(1n);
    expect(parseAmount('0.000001', 'USDC')).toBe(1n);
    expect(parseAmount('1.50', 'USDC')).toBe(1_500_000n);
    expect(parseAmount('7', 6)).toBe(7_000_000n);
  });

  it('accepts the maximum 2^64 - 1 minor units and rejects one more', () => {
    expect(parseAmount('18446744073.709551615', 'PTM')).toBe(MAX_AMOUNT);
    expect(parseAmount('18446744073709.551615', 'USDC')).toBe(MAX_AMOUNT);
    expect(thrown(() => parseAmount('18446744073.709551616', 'PTM'))).toEqual(
      invalidAmount(
        'amount: expected at most 18446744073.709551615, got "18446744073.709551616"',
        'too_large',
      ),
    );
    expect(thrown(() => parseAmount('18446744073709.551616', 'USDC'))).toEqual(
      invalidAmount(
        'amount: expected at most 18446744073709.551615, got "18446744073709.551616"',
        'too_large',
      ),
    );
  });

  it('rejects strings outside the grammar, showing the expected shape', () => {
    const bad = [
      '1e5',
      '',
      '.',
      '.5',
      '1.',
      '01',
      '00',
      '00.5',
      '+1',
      ' 1',
      '1 ',
      '1,5',
      '1.5.5',
      '0x10',
      'NaN',
      'Infinity',
      '\u0661',
      '１',
    ];
    for (const text of bad) {
      expect(thrown(() => parseAmount(text, 'PTM'))).toEqual(
        invalidAmount(
          `amount: expected a decimal string such as "12.5" with at most 9 decimal places, got ${JSON.stringify(text)}`,
          'syntax',
        ),
      );
    }
  });

  it('rejects a value that is not a string, describing it', () => {
    expect(thrown(() => parseAmount(12.5 as unknown as string, 'PTM'))).toEqual(
      invalidAmount(
        'amount: expected a decimal string such as "12.5" with at most 9 decimal places, got 12.5',
        'syntax',
      ),
    );
    expect(thrown(() => parseAmount(null as unknown as string, 'USDC'))).toEqual(
      invalidAmount(
        'amount: expected a decimal string such as "12.5" with at most 6 decimal places, got null',
        'syntax',
      ),
    );
  });

  it('rejects a negative amount', () => {
    expect(thrown(() => parseAmount('-1', 'PTM'))).toEqual(
      invalidAmount('amount: expected a non-negative value, got "-1"', 'negative'),
    );
  });

  it('rejects more fraction digits than the token has, trailing zeros included', () => {
    expect(thrown(() => parseAmount('1.0000000', 'USDC'))).toEqual(
      invalidAmount('amount: expected at most 6 decimal places, got 7 in "1.0000000"', 'too_many_decimals'),
    );
    expect(thrown(() => parseAmount('0.0000000001', 'PTM'))).toEqual(
      invalidAmount(
        'amount: expected at most 9 decimal places, got 10 in "0.0000000001"',
        'too_many_decimals',
      ),
    );
  });

  it('names the field given by the caller', () => {
    expect(thrown(() => parseAmount('abc', 'USDC', 'min_received'))).toEqual(
      invalidAmount(
        'min_received: expected a decimal string such as "12.5" with at most 6 decimal places, got "abc"',
        'syntax',
      ),
    );
  });

  it('rejects a huge number of digits as too large, without echoing it', () => {
    const huge = '9'.repeat(1_000_000);
    expect(thrown(() => parseAmount(huge, 'PTM'))).toEqual(
      invalidAmount(
        'amount: expected at most 18446744073.709551615, got a string of 1000000 characters',
        'too_large',
      ),
    );
  });

  it('rejects an unknown token before looking at the amount', () => {
    expect(thrown(() => parseAmount('1', 'BTC'))).toEqual({
      name: 'ProtocolError',
      code: 'unknown_token',
      message: 'token: expected one of PTM, SOL, USDC, got "BTC"',
    });
  });

  it('returns a value for exactly the strings of the grammar within the precision and range', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^-?[0-9]{1,22}(\.[0-9]{0,12})?$/)), (text) => {
        const m = GRAMMAR.exec(text);
        const acceptable =
          m !== null &&
          (m[2] ?? '.').length - 1 <= 9 &&
          BigInt(`${m[1]}${(m[2] ?? '').slice(1).padEnd(9, '0')}`) <= MAX_AMOUNT;
        let value: bigint | undefined;
        try {
          value = parseAmount(text, 'PTM');
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          expect((error as ProtocolError).code).toBe('invalid_amount');
        }
        expect(value !== undefined).toBe(acceptable);
      }),
    );
  });
});

describe('formatAmount', () => {
  it('writes the canonical form: no trailing zeros, no trailing dot, "0" for zero', () => {
    expect(formatAmount(12_500_000_000n, 'PTM')).toBe('12.5');
    expect(formatAmount(12_500_000n, 'USDC')).toBe('12.5');
    expect(formatAmount(1n, 'PTM')).toBe('0.000000001');
    expect(formatAmount(1_000_000_000n, 'SOL')).toBe('1');
    expect(formatAmount(0n, 'USDC')).toBe('0');
    expect(formatAmount(MAX_AMOUNT, 'PTM')).toBe('18446744073.709551615');
    expect(formatAmount(120n, 0)).toBe('120');
  });

  it('rejects values outside [0, 2^64 - 1]', () => {
    expect(thrown(() => formatAmount(-1n, 'PTM'))).toEqual({
      name: 'ProtocolError',
      code: 'invalid_amount',
      message: 'amount: expected a bigint in [0, 2^64 - 1] minor units, got -1',
    });
    expect(thrown(() => formatAmount(MAX_AMOUNT + 1n, 'PTM'))).toEqual({
      name: 'ProtocolError',
      code: 'invalid_amount',
      message: 'amount: expected a bigint in [0, 2^64 - 1] minor units, got 18446744073709551616',
    });
    expect(thrown(() => formatAmount(5 as unknown as bigint, 'PTM'))).toEqual({
      name: 'ProtocolError',
      code: 'invalid_amount',
      message: 'amount: expected a bigint in [0, 2^64 - 1] minor units, got 5',
    });
  });

  it('round-trips every amount of every token: parse(format(x)) = x', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: MAX_AMOUNT }),
        fc.constantFrom(...TOKEN_SYMBOLS),
        (minor, token) => {
          const text = formatAmount(minor, token);
          expect(text).toMatch(GRAMMAR);
          expect(text).not.toMatch(/\.[0-9]*0$/);
          expect(parseAmount(text, token)).toBe(minor);
        },
      ),
    );
  });

  it('round-trips every number of decimals from 0 to 18', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: MAX_AMOUNT }),
        fc.integer({ min: 0, max: 18 }),
        (minor, decimals) => {
          expect(parseAmount(formatAmount(minor, decimals), decimals)).toBe(minor);
        },
      ),
    );
  });

  it('gives the canonical form of any accepted string: format(parse(s)) strips trailing zeros', () => {
    const accepted = fc
      .tuple(fc.bigInt({ min: 0n, max: 18_446_744_072n }), fc.stringMatching(/^[0-9]{0,9}$/))
      .map(([whole, fraction]) => (fraction === '' ? `${whole}` : `${whole}.${fraction}`));
    fc.assert(
      fc.property(accepted, (text) => {
        const canonical = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
        expect(formatAmount(parseAmount(text, 'PTM'), 'PTM')).toBe(canonical);
      }),
    );
  });
});

describe('signed amounts', () => {
  it('parses and formats ledger deltas with a leading minus', () => {
    expect(parseSignedAmount('-12.5', 'PTM')).toBe(-12_500_000_000n);
    expect(parseSignedAmount('-0.25', 'USDC')).toBe(-250_000n);
    expect(parseSignedAmount('3', 'USDC')).toBe(3_000_000n);
    expect(parseSignedAmount('0', 'USDC')).toBe(0n);
    expect(parseSignedAmount('-18446744073.709551615', 'PTM')).toBe(-MAX_AMOUNT);
    expect(formatSignedAmount(-250_000n, 'USDC')).toBe('-0.25');
    expect(formatSignedAmount(-MAX_AMOUNT, 'PTM')).toBe('-18446744073.709551615');
    expect(formatSignedAmount(0n, 'PTM')).toBe('0');
  });

  it('rejects a minus sign on zero', () => {
    for (const text of ['-0', '-0.0', '-0.000000000']) {
      expect(thrown(() => parseSignedAmount(text, 'PTM'))).toEqual(
        invalidAmount(`amount: expected no sign on zero, got ${JSON.stringify(text)}`, 'negative_zero'),
      );
    }
  });

  it('rejects malformed signs, showing a signed example', () => {
    for (const text of ['-', '--1', '+5', '- 1', '-.5', '1-']) {
      expect(thrown(() => parseSignedAmount(text, 'PTM'))).toEqual(
        invalidAmount(
          `amount: expected a decimal string such as "-12.5" with at most 9 decimal places, got ${JSON.stringify(text)}`,
          'syntax',
        ),
      );
    }
  });

  it('bounds the absolute value by 2^64 - 1 minor units', () => {
    expect(thrown(() => parseSignedAmount('-18446744073.709551616', 'PTM'))).toEqual(
      invalidAmount(
        'amount: expected an absolute value of at most 18446744073.709551615, got "-18446744073.709551616"',
        'too_large',
      ),
    );
    expect(thrown(() => formatSignedAmount(-MAX_AMOUNT - 1n, 'PTM'))).toEqual({
      name: 'ProtocolError',
      code: 'invalid_amount',
      message: 'amount: expected a bigint in [-(2^64 - 1), 2^64 - 1] minor units, got -18446744073709551616',
    });
  });

  it('round-trips every signed amount', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -MAX_AMOUNT, max: MAX_AMOUNT }),
        fc.constantFrom(...TOKEN_SYMBOLS),
        (minor, token) => {
          expect(parseSignedAmount(formatSignedAmount(minor, token), token)).toBe(minor);
        },
      ),
    );
  });
});

describe('decimals and prices', () => {
  it('parses prices with 18 decimals up to 2^128 - 1 units', () => {
    expect(parsePrice('1.5')).toBe(1_500_000_000_000_000_000n);
    expect(parsePrice('0.000000000000000001')).toBe(1n);
    expect(parsePrice('340282366920938463463.374607431768211455')).toBe(MAX_DECIMAL);
    expect(formatPrice(2_500_123_456_789_012_345_678n)).toBe('2500.123456789012345678');
    expect(thrown(() => parsePrice('0.0000000000000000001'))).toEqual(
      invalidAmount(
        'price: expected at most 18 decimal places, got 19 in "0.0000000000000000001"',
        'too_many_decimals',
      ),
    );
    expect(thrown(() => parsePrice('340282366920938463463.374607431768211456'))).toEqual(
      invalidAmount(
        'price: expected at most 340282366920938463463.374607431768211455, got "340282366920938463463.374607431768211456"',
        'too_large',
      ),
    );
    expect(thrown(() => formatPrice(-1n))).toEqual({
      name: 'ProtocolError',
      code: 'invalid_amount',
      message: 'price: expected a bigint in [0, 2^128 - 1] units of 10^-18, got -1',
    });
  });

  it('words the precision for 0 and 1 decimals', () => {
    expect(thrown(() => parseDecimal('x', 0))).toEqual(
      invalidAmount(
        'value: expected a decimal string such as "12" with no decimal places, got "x"',
        'syntax',
      ),
    );
    expect(thrown(() => parseDecimal('1.5', 0))).toEqual(
      invalidAmount('value: expected no decimal places, got 1 in "1.5"', 'too_many_decimals'),
    );
    expect(thrown(() => parseDecimal('x', 1, { signed: true, what: 'delta' }))).toEqual(
      invalidAmount(
        'delta: expected a decimal string such as "-12.5" with at most 1 decimal place, got "x"',
        'syntax',
      ),
    );
  });

  it('applies a caller-given maximum', () => {
    expect(parseDecimal('10', 2, { max: 1000n })).toBe(1000n);
    expect(thrown(() => parseDecimal('10.01', 2, { max: 1000n }))).toEqual(
      invalidAmount('value: expected at most 10, got "10.01"', 'too_large'),
    );
  });

  it('rejects a number of decimals outside [0, 36]', () => {
    for (const decimals of [-1, 37, 1.5, Number.NaN]) {
      expect(thrown(() => parseDecimal('1', decimals))).toEqual({
        name: 'ProtocolError',
        code: 'invalid_integer',
        message: `decimals: expected an integer in [0, 36], got ${decimals}`,
      });
    }
  });

  it('formats negative values and zero decimals', () => {
    expect(formatDecimal(-5n, 3)).toBe('-0.005');
    expect(formatDecimal(-1_230n, 3)).toBe('-1.23');
    expect(formatDecimal(42n, 0)).toBe('42');
    expect(formatDecimal(MAX_DECIMAL * 10n, 0)).toBe((MAX_DECIMAL * 10n).toString());
  });
});

describe('mulDiv', () => {
  it('computes floor(a * b / c) exactly', () => {
    expect(mulDiv(10n, 3n, 4n)).toBe(7n);
    expect(mulDiv(-10n, 3n, 4n)).toBe(-8n);
    expect(mulDiv(-12n, 3n, 4n)).toBe(-9n);
    expect(mulDiv(MAX_AMOUNT, MAX_AMOUNT, MAX_AMOUNT)).toBe(MAX_AMOUNT);
    expect(mulDiv(0n, 5n, 3n)).toBe(0n);
  });

  it('satisfies r * c <= a * b < (r + 1) * c for all inputs', () => {
    fc.assert(
      fc.property(fc.bigInt(), fc.bigInt(), fc.bigInt({ min: 1n }), (a, b, c) => {
        const r = mulDiv(a, b, c);
        expect(r * c <= a * b).toBe(true);
        expect(a * b < (r + 1n) * c).toBe(true);
      }),
    );
  });

  it('rejects a divisor that is not positive', () => {
    expect(thrown(() => mulDiv(1n, 1n, 0n))).toEqual({
      name: 'RangeError',
      message: 'mulDiv: expected a positive divisor, got 0',
    });
    expect(thrown(() => mulDiv(1n, 1n, -3n))).toEqual({
      name: 'RangeError',
      message: 'mulDiv: expected a positive divisor, got -3',
    });
  });
});

describe('applyBps', () => {
  it('takes floor(amount * bps / 10 000)', () => {
    expect(applyBps(1_000n, 250)).toBe(25n);
    expect(applyBps(999n, 1)).toBe(0n);
    expect(applyBps(10_000n, 10_000)).toBe(10_000n);
    expect(applyBps(5n, 25_000)).toBe(12n);
    expect(applyBps(12_345_678_901n, 333n)).toBe(411_111_107n);
  });

  it('never exceeds the amount for rates up to 100 %', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: MAX_AMOUNT }),
        fc.integer({ min: 0, max: 10_000 }),
        (amount, bps) => {
          const part = applyBps(amount, bps);
          expect(part >= 0n && part <= amount).toBe(true);
          expect(part).toBe(mulDiv(amount, BigInt(bps), 10_000n));
        },
      ),
    );
  });

  it('rejects a rate that is not a non-negative integer', () => {
    for (const [bps, shown] of [
      [-1, '-1'],
      [1.5, '1.5'],
      [-2n, '-2'],
    ] as const) {
      expect(thrown(() => applyBps(1n, bps))).toEqual({
        name: 'RangeError',
        message: `bps: expected a non-negative integer, got ${shown}`,
      });
    }
  });
});
