import { describe, expect, it } from 'vitest';
import {
  applyBps,
  formatAmount,
  formatPrice,
  formatSignedAmount,
  MAX_AMOUNT,
  MAX_DECIMAL,
  mulDiv,
  PRICE_DECIMALS,
  parseAmount,
  parsePrice,
  parseSignedAmount,
} from '../src/amount.js';
import { ProtocolError } from '../src/errors.js';
import { tokenDecimals } from '../src/tokens.js';
import vectors from '../vectors/amounts.vectors.json' with { type: 'json' };

function rejection(run: () => unknown): { code: string; reason?: string } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    const reason = error.details?.reason;
    return typeof reason === 'string' ? { code: error.code, reason } : { code: error.code };
  }
  return { code: 'accepted' };
}

describe('amount vectors', () => {
  it('states the limits and the token decimals', () => {
    expect(BigInt(vectors.max_amount)).toBe(MAX_AMOUNT);
    expect(BigInt(vectors.max_price)).toBe(MAX_DECIMAL);
    expect(vectors.price_decimals).toBe(PRICE_DECIMALS);
    for (const t of vectors.tokens) expect(tokenDecimals(t.symbol)).toBe(t.decimals);
  });

  it('parses every valid amount to its minor units and formats it canonically', () => {
    expect(vectors.amounts.length).toBeGreaterThan(10);
    for (const v of vectors.amounts) {
      const minor = parseAmount(v.text, v.token);
      expect({
        token: v.token,
        text: v.text,
        minor: minor.toString(),
        canonical: formatAmount(minor, v.token),
      }).toEqual(v);
    }
  });

  it('rejects every invalid amount with its code and reason', () => {
    for (const v of vectors.invalid_amounts) {
      expect({ token: v.token, text: v.text, ...rejection(() => parseAmount(v.text, v.token)) }).toEqual(v);
    }
  });

  it('parses and rejects signed amounts', () => {
    for (const v of vectors.signed_amounts) {
      const minor = parseSignedAmount(v.text, v.token);
      expect({
        token: v.token,
        text: v.text,
        minor: minor.toString(),
        canonical: formatSignedAmount(minor, v.token),
      }).toEqual(v);
    }
    for (const v of vectors.invalid_signed_amounts) {
      expect({
        token: v.token,
        text: v.text,
        ...rejection(() => parseSignedAmount(v.text, v.token)),
      }).toEqual(v);
    }
  });

  it('parses and rejects prices', () => {
    for (const v of vectors.prices) {
      const value = parsePrice(v.text);
      expect({ text: v.text, value: value.toString(), canonical: formatPrice(value) }).toEqual(v);
    }
    for (const v of vectors.invalid_prices) {
      expect({ text: v.text, ...rejection(() => parsePrice(v.text)) }).toEqual(v);
    }
  });

  it('reproduces mulDiv and basis points', () => {
    for (const v of vectors.mul_div) {
      expect(mulDiv(BigInt(v.a), BigInt(v.b), BigInt(v.c)).toString()).toBe(v.result);
    }
    for (const v of vectors.apply_bps) {
      expect(applyBps(BigInt(v.amount), v.bps).toString()).toBe(v.result);
    }
  });
});
