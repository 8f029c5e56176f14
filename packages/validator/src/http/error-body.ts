import { STATUS_CODES } from 'node:http';
import { ERROR_CODES, type ErrorCode, type ErrorResponse } from '@tensormine/protocol';

/** The one error shape (docs/errors.md): `{ statusCode, code, error, message, details? }`. */
export function errorBody(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
): ErrorResponse {
  const statusCode = ERROR_CODES[code].status;
  const body: ErrorResponse = { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message };
  if (details !== undefined) body.details = details;
  return body;
}
