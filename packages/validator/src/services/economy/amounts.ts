import { parseAmount } from '@tensormine/protocol';
import { ApiError } from '../../http/errors.js';

/** Parses an amount that must be more than 0 (`invalid_amount`, `amount_too_small`). */
export function positiveAmount(text: string, token: string, field = 'amount'): bigint {
  const value = parseAmount(text, token, field);
  if (value === 0n) throw new ApiError('amount_too_small', `${field}: expected more than 0, got ${text}`);
  return value;
}
