import { ERROR_CODES, type ErrorCode, type ErrorResponse, type Verdict } from '@tensormine/protocol';
import { nodeHttp } from './node-http.js';

/** node:http's reason phrases (node-http.ts: not an ESM import of node:http). */
const { STATUS_CODES } = nodeHttp;

const BRAND = Symbol.for('@tensormine/service-kit/ApiError');

/**
 * An error a service answers with: a stable code from the protocol's one error table (which
 * fixes its HTTP status), a message, optional details and response headers (`Retry-After`).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.statusCode = ERROR_CODES[code].status;
    Object.defineProperty(this, BRAND, { value: true });
  }

  // Two copies of this module (a bundled one and a linked one) still know each other's errors.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value;
  }
}

/** Turns a failed verdict of the protocol package into the error to answer with. */
export function verdictError(verdict: Extract<Verdict, { ok: false }>): ApiError {
  return new ApiError(verdict.code, verdict.message, verdict.details as Record<string, unknown> | undefined);
}

/** The documented error body (`{ statusCode, code, error, message [, details] }`, docs/errors.md). */
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
