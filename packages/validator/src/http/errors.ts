import { STATUS_CODES } from 'node:http';
import {
  ERROR_CODES,
  type ErrorCode,
  type ErrorResponse,
  isErrorCode,
  ProtocolError,
  type SchemaIssueInput,
  schemaIssue,
  type Verdict,
} from '@tensormine/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StorageError } from '../store/errors.js';
import { methodNotAllowed, trackRoutes } from './framework-errors.js';

const BRAND = Symbol.for('@tensormine/validator/ApiError');

/** An error the validator answers with: a stable code from the protocol's table, a message, details. */
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

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value;
  }
}

/** Turns a failed verdict of the protocol package into the error to answer with. */
export function verdictError(verdict: Extract<Verdict, { ok: false }>): ApiError {
  return new ApiError(verdict.code, verdict.message, verdict.details as Record<string, unknown> | undefined);
}

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

/** Fastify's own error codes for malformed requests, mapped to ours. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_VALIDATION: 'validation_failed',
};

/**
 * One error shape for everything: our ApiErrors, schema validation failures, Fastify's
 * transport errors, protocol input errors. Bad input is always a 4xx; only a bug is a 500.
 */
export function installErrorHandling(app: FastifyInstance, onError?: (code: ErrorCode) => void): void {
  const allowedMethods = trackRoutes(app);
  app.setErrorHandler(
    (error: FastifyError | ApiError | Error, request: FastifyRequest, reply: FastifyReply) => {
      const answered = fromStorage(error);
      const body = toErrorBody(answered, request);
      if (body.statusCode >= 500) request.log.error({ err: error }, 'internal error');
      onError?.(body.code);
      if (answered instanceof ApiError && answered.headers) void reply.headers(answered.headers);
      return reply.code(body.statusCode).send(body);
    },
  );
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      onError?.('method_not_allowed');
      return methodNotAllowed(request, reply, allowed);
    }
    const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path;
    const body = errorBody('not_found', `no route ${request.method} ${shown}`);
    onError?.('not_found');
    return reply.code(404).send(body);
  });
}

/**
 * A database that is busy (a transaction lost every re-run) or unreachable is not a bug: nothing
 * was written, and the request is answered 503 `service_unavailable`, to be sent again after
 * Retry-After.
 */
function fromStorage(error: FastifyError | ApiError | Error): FastifyError | ApiError | Error {
  if (!(error instanceof StorageError)) return error;
  if (error.code !== 'storage_busy' && error.code !== 'storage_unavailable') return error;
  return new ApiError('service_unavailable', `${error.message}; send the request again`, undefined, {
    'retry-after': '1',
  });
}

function toErrorBody(error: FastifyError | ApiError | Error, request: FastifyRequest): ErrorResponse {
  if (error instanceof ApiError) return errorBody(error.code, error.message, error.details);
  const fe = error as FastifyError & { validation?: SchemaIssueInput[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const errors = fe.validation.slice(0, 20).map((v) => schemaIssue(fe.validationContext ?? 'body', v));
    const first = errors[0];
    return errorBody(
      'validation_failed',
      first ? `${first.path}: ${first.message}` : 'the request does not match the schema',
      { errors },
    );
  }
  if (error instanceof ProtocolError) {
    return errorBody(
      isErrorCode(error.code) ? error.code : 'validation_failed',
      error.message,
      error.details as Record<string, unknown>,
    );
  }
  if (error instanceof SyntaxError)
    return errorBody('invalid_json', `the body is not valid JSON: ${error.message}`);
  const mapped = typeof fe.code === 'string' ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return errorBody(mapped, fe.message);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return errorBody('validation_failed', fe.message);
  }
  request.log.debug({ code: fe.code }, 'unmapped error');
  return errorBody('internal_error', 'an unexpected error occurred; it has been logged');
}
