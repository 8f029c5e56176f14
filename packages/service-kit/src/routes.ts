import {
  type OperationId,
  type RouteBody,
  type RouteDefinition,
  type RouteParams,
  type RouteQuery,
  type RouteReply,
  type Routes,
  routesOf,
  type Service,
} from '@tensormine/protocol';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preHandlerAsyncHookHandler,
  RouteHandlerMethod,
} from 'fastify';

/** The operationIds of one service's routes in the protocol's route table. */
export type ServiceOperationId<S extends Service> = {
  [Id in OperationId]: Routes[Id]['service'] extends S ? Id : never;
}[OperationId];

/** A request as its route's schemas validated it: body, path and query typed from the route table. */
export type RouteRequest<Id extends OperationId> = FastifyRequest<{
  Body: RouteBody<Id>;
  Params: RouteParams<Id>;
  Querystring: RouteQuery<Id>;
}>;

/** A value as the serializer only reads it: its arrays and objects may be readonly. */
export type Serialized<T> = T extends readonly (infer U)[]
  ? readonly Serialized<U>[]
  : T extends object
    ? { readonly [K in keyof T]: Serialized<T[K]> }
    : T;

/**
 * A handler of a service's route: resolves to the route's reply (serialized by its response
 * schema), or to `reply` once it sent something else itself (a redirect, an HTML error page).
 */
export type RouteHandler<Id extends OperationId> = (
  request: RouteRequest<Id>,
  reply: FastifyReply,
) => Promise<Serialized<RouteReply<Id>> | FastifyReply>;

/** A handler for every route of service `S`: the compiler says when one is missing. */
export type ServiceRouteHandlers<S extends Service> = {
  readonly [Id in ServiceOperationId<S>]: RouteHandler<Id>;
};

/** Route-level hooks a service adds to some of its routes (the validator's admin check, its replays). */
export interface RouteHooks {
  readonly onRequest?: onRequestAsyncHookHandler;
  readonly preHandler?: preHandlerAsyncHookHandler;
}

/**
 * Registers one route of the protocol's route table: its schemas (validation, serialization and
 * OpenAPI), operationId, summary, tags, deprecation, content types and security scheme.
 */
export function registerRoute(
  app: FastifyInstance,
  route: RouteDefinition,
  handler: RouteHandlerMethod,
  hooks: RouteHooks = {},
): void {
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
    ...(hooks.onRequest ? { onRequest: hooks.onRequest } : {}),
    ...(hooks.preHandler ? { preHandler: hooks.preHandler } : {}),
    handler,
  });
}

/**
 * Registers every route of `service` in the protocol's route table with its typed handler.
 * Returns the operationIds registered, in table order.
 */
export function registerServiceRoutes<S extends Service>(
  app: FastifyInstance,
  service: S,
  handlers: ServiceRouteHandlers<S>,
): OperationId[] {
  const byId = handlers as unknown as Readonly<Record<string, RouteHandlerMethod | undefined>>;
  return routesOf(service).map((route) => {
    const handler = byId[route.operationId];
    // The type says every route has one; a handler map built around the compiler is still a bug.
    if (!handler) throw new Error(`${service}: no handler for ${route.operationId}`);
    registerRoute(app, route, handler);
    return route.operationId as OperationId;
  });
}
