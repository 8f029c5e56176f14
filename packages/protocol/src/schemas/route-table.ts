import Type, { type TSchema } from 'typebox';
import { ErrorResponseSchema } from './error.js';

/**
 * The shape of one entry of the route table (`routes.ts`). `schema` is a Fastify route schema:
 * pass it as is (`{ schema: route.schema }`), together with operationId, summary, tags and
 * deprecated for OpenAPI.
 */

export type Service = 'validator' | 'status' | 'terminal' | 'hub' | 'miner';
export type HttpMethod = 'GET' | 'POST';
/**
 * none: public; signed: x-tm-* signed-request headers by the acting key; admin: the service's own
 * bearer token (a validator's admin token, the miner's control token).
 */
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
}

/** Identity function that checks every entry and that each key equals its operationId. */
export function defineRoutes<
  const T extends { readonly [K in keyof T]: RouteDefinition & { readonly operationId: K } },
>(routes: T): T {
  return routes;
}

/** Every 4xx and 5xx response has the one ErrorResponse shape. */
export const ERRORS = { '4xx': ErrorResponseSchema, '5xx': ErrorResponseSchema } as const;

export const TextSchema = Type.String({ maxLength: 1_000_000, description: 'A text document (not JSON).' });
