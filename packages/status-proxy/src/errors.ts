import { STATUS_CODES } from 'node:http';
import { ERROR_CODES, type ErrorCode, type ErrorResponse } from '@tensormine/protocol';

/** The one error body of every service (docs/errors.md), built from the protocol's table. */
export function errorBody(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
): ErrorResponse {
  const statusCode = ERROR_CODES[code].status;
  return {
    statusCode,
    code,
    error: STATUS_CODES[statusCode] ?? 'Error',
    message,
    ...(details === undefined ? {} : { details }),
  };
}
