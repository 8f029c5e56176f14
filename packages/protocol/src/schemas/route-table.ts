import Type, { type TSchema } from 'typebox';
import type { ErrorCode } from '../error-codes.js';
import { ErrorResponseSchema } from './error.js';

/**
 * The shape of one entry of the route table (`routes.ts`). `schema` is a Fastify route schema:
 * pass it as is (`{ schema: route.schema }`), together with operationId, summary, tags and
 * deprecated for OpenAPI.
 */

export type Service = 'validator' | 'status' | 'terminal' | 'hub';
export type HttpMethod = 'GET' | 'POST';
/** none: public; signed: x-tm-* signed-request headers by the acting key; admin: bearer token. */
export type RouteAuth = 'none' | 'signed' | 'admin';
/** Protocol generation of the route: v4.0 root paths, v4.1 hexchain paths, or both. */
export type RouteVersion = '4.0' | '4.1' | 'any';

export interface RouteResponses {
  readonly 200?: TSchema;
  readonly 302?: TSchema;
  readonly '4xx': TSchema;
  readonly '5xx': TSchema;
}

export interface RouteSchemas {
  readonly body?: TSchema;
  readonly querystring?: TSchema;
  readonly params?: TSchema;
  readonly response: RouteResponses;
}

export interface RouteDefinition {
  readonly service: Service;
  readonly method: HttpMethod;
  /** Fastify-style path, e.g. '/miners/:pubkey'. */
  readonly url: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly auth: RouteAuth;
  readonly version: RouteVersion;
  /** Served but superseded (the seed's versioning section). */
  readonly deprecated?: boolean;
  /** Content types of the 200 response when it is not JSON. */
  readonly produces?: readonly string[];
  readonly schema: RouteSchemas;
  /**
   * The refusals of this route's own checks, in the order they are made (the first that
   * applies is the answer), after the common ones of COMMON_REFUSALS; listed in docs/api.md.
   */
  readonly refusals?: readonly Refusal[];
}

/** One refusal a route can answer, and when. */
export interface Refusal {
  readonly code: ErrorCode;
  readonly when: string;
}

/**
 * The refusals every route can answer, by stage, in the order of the stages and, within one,
 * of the checks (docs/api.md "Refusals"): first `request` (every route), then `signed` (signed
 * routes), then the route's own `refusals`; `any` can happen at any stage.
 */
export const COMMON_REFUSALS = {
  request: [
    {
      code: 'bad_request',
      when: 'not valid HTTP (an unknown method, a raw non-ASCII byte or bad percent-encoding)',
    },
    { code: 'uri_too_long', when: 'a path segment too long' },
    { code: 'headers_too_large', when: 'headers too large' },
    { code: 'request_timeout', when: 'the request did not arrive in time' },
    { code: 'rate_limited', when: "past the client address's rate limit" },
    { code: 'unsupported_media_type', when: 'a body that is not application/json' },
    { code: 'body_too_large', when: 'a body above the limit' },
    { code: 'invalid_json', when: 'a body that is not JSON' },
    { code: 'validation_failed', when: 'params, query or body do not match the schema' },
  ],
  signed: [
    { code: 'signature_required', when: 'a signed-request header is missing' },
    { code: 'validation_failed', when: 'a signed-request header is malformed or repeated' },
    { code: 'request_expired', when: 'x-tm-timestamp outside the 60 s window' },
    { code: 'signature_invalid', when: 'the signature does not verify' },
    { code: 'pubkey_mismatch', when: "the body's pubkey is not the signing key" },
    { code: 'rate_limited', when: "past the signing key's rate limit" },
  ],
  any: [
    {
      code: 'service_unavailable',
      when: 'starting, stopping, or the database busy or unreachable (Retry-After)',
    },
    { code: 'internal_error', when: 'a bug' },
  ],
} as const satisfies Record<string, readonly Refusal[]>;

/** The refusals of an exactly-once economy operation's transaction, before its own checks. */
export const STORED_REFUSALS = [
  {
    code: 'idempotency_conflict',
    when: 'the nonce was used by another executed request of this key (7 days)',
  },
  { code: 'request_replayed', when: 'the nonce was used by another signed request within the window' },
] as const satisfies readonly Refusal[];

/** The refusal of a signed route whose nonce the router records before the handler runs. */
export const NONCE_REFUSAL = [
  { code: 'request_replayed', when: 'the nonce was already used within the window' },
] as const satisfies readonly Refusal[];

/** Identity function that checks every entry and that each key equals its operationId. */
export function defineRoutes<
  const T extends { readonly [K in keyof T]: RouteDefinition & { readonly operationId: K } },
>(routes: T): T {
  return routes;
}

/** Every 4xx and 5xx response has the one ErrorResponse shape. */
export const ERRORS = { '4xx': ErrorResponseSchema, '5xx': ErrorResponseSchema } as const;

export const TextSchema = Type.String({ maxLength: 1_000_000, description: 'A text document (not JSON).' });
