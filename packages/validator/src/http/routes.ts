import {
  assertBodyPubkey,
  type OperationId,
  ROUTES,
  type RouteBody,
  type RouteDefinition,
  type RouteParams,
  type RouteQuery,
  type RouteReply,
  routesOf,
  verifySignedRequest,
} from '@tensormine/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ValidatorContext } from '../context.js';
import { checkAdminToken } from './admin-auth.js';
import { verdictError } from './errors.js';
import type { RateLimiter } from './rate-limit.js';

/** What a handler receives: the validated request parts and, for signed routes, the signer. */
export interface HandlerRequest<Id extends OperationId> {
  readonly body: RouteBody<Id>;
  readonly query: RouteQuery<Id>;
  readonly params: RouteParams<Id>;
  /** The verified public key (hex) of a signed route's signer. */
  readonly signer: string | undefined;
  readonly ip: string;
  readonly raw: FastifyRequest;
  readonly reply: FastifyReply;
}

export type Handler<Id extends OperationId> = (
  request: HandlerRequest<Id>,
  ctx: ValidatorContext,
) => Promise<RouteReply<Id>>;

export type Handlers = { readonly [Id in OperationId]?: Handler<Id> };

export interface RegisterOptions {
  readonly adminToken: string;
  readonly keyLimiter: RateLimiter;
  /** Routes of these protocol versions are not registered. */
  readonly disabledVersions?: readonly RouteDefinition['version'][];
}

/** The public key a request acts for, to rate-limit per key. */
function actingKey(route: RouteDefinition, body: unknown, signer: string | undefined): string | undefined {
  if (signer) return signer;
  const b = body as { proof?: { miner_pubkey?: unknown }; block?: { miner_pubkey?: unknown } } | undefined;
  const key = b?.proof?.miner_pubkey ?? b?.block?.miner_pubkey;
  return route.method === 'POST' && typeof key === 'string' ? key : undefined;
}

/**
 * Registers every validator route of the protocol's ROUTES table that has a handler, with its
 * schemas (validation, serialization, OpenAPI), its authentication and the rate limits.
 */
export function registerRoutes(
  app: FastifyInstance,
  ctx: ValidatorContext,
  handlers: Handlers,
  options: RegisterOptions,
): OperationId[] {
  const registered: OperationId[] = [];
  for (const route of routesOf('validator')) {
    const id = route.operationId as OperationId;
    const handler = handlers[id] as Handler<OperationId> | undefined;
    if (!handler || options.disabledVersions?.includes(route.version)) continue;
    registered.push(id);
    app.route({
      method: route.method,
      url: route.url,
      schema: {
        ...route.schema,
        operationId: route.operationId,
        summary: route.summary,
        tags: [...route.tags],
        ...(route.deprecated ? { deprecated: true } : {}),
        ...(route.produces ? { produces: [...route.produces] } : {}),
        ...(route.auth === 'admin' ? { security: [{ adminToken: [] }] } : {}),
        ...(route.auth === 'signed' ? { security: [{ signedRequest: [] }] } : {}),
      },
      handler: async (request, reply) => {
        let signer: string | undefined;
        if (route.auth === 'admin') checkAdminToken(request, options.adminToken);
        if (route.auth === 'signed') {
          const verdict = verifySignedRequest({
            method: request.method,
            path: request.url,
            body: request.rawBody ?? new Uint8Array(0),
            headers: request.headers,
            now: ctx.now(),
            replayCache: ctx.replayCache,
          });
          if (!verdict.ok) throw verdictError(verdict);
          signer = verdict.publicKey;
          const bodyKey = (request.body as { pubkey?: unknown } | undefined)?.pubkey;
          if (bodyKey !== undefined) {
            const match = assertBodyPubkey(signer, bodyKey);
            if (!match.ok) throw verdictError(match);
          }
        }
        const key = actingKey(route, request.body, signer);
        if (key) options.keyLimiter.take(key, 'public key');
        return handler(
          {
            body: request.body as never,
            query: request.query as never,
            params: request.params as never,
            signer,
            ip: request.ip,
            raw: request,
            reply,
          },
          ctx,
        );
      },
    });
  }
  return registered;
}

export { ROUTES };
