import {
  type ErrorCode,
  type ErrorResponse,
  isErrorCode,
  ProtocolError,
  type SchemaIssueInput,
  schemaIssue,
} from '@tensormine/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from './api-error.js';
import { methodNotAllowed, trackRoutes } from './framework-errors.js';

/**
 * A service's own translation of an error before it is answered (the validator turns a busy or
 * unreachable database into 503 `service_unavailable`): return an ApiError to answer with, or
 * the error unchanged. The kit knows nothing of what it translates.
 */
export type TranslateError = (error: Error) => Error;

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
 * One error shape for everything: ApiErrors, schema validation failures, Fastify's transport
 * errors, protocol input errors, unknown paths (404) and wrong methods (405 with `Allow`). Bad
 * input is always a 4xx; only a bug is a 500, logged, and its message is not sent.
 */
export function installErrorHandling(app: FastifyInstance, translate?: TranslateError): void {
  const allowedMethods = trackRoutes(app);
  app.setErrorHandler(
    (error: FastifyError | ApiError | Error, request: FastifyRequest, reply: FastifyReply) => {
      const answered = translate ? translate(error) : error;
      const body = toErrorBody(answered, request);
      if (body.statusCode >= 500) request.log.error({ err: error }, 'internal error');
      if (answered instanceof ApiError && answered.headers) void reply.headers(answered.headers);
      return reply.code(body.statusCode).send(body);
    },
  );
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = allowedMethods(path);
    if (allowed.length > 0) return methodNotAllowed(request, reply, allowed);
    const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path;
    return reply.code(404).send(errorBody('not_found', `no route ${request.method} ${shown}`));
  });
}

function toErrorBody(error: FastifyError | ApiError | Error, request: FastifyRequest): ErrorResponse {
  if (error instanceof ApiError) return errorBody(error.code, error.message, error.details);
  const fe = error as FastifyError & { validation?: SchemaIssueInput[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    // An enum refusal lists the values the field accepts (schemaIssue).
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
