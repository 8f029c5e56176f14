import type { Static, TSchema } from 'typebox';
import type { RouteDefinition, Service } from './route-table.js';
import { adminRoutes } from './routes-admin.js';
import { economyRoutes } from './routes-economy.js';
import { hexchainRoutes } from './routes-hexchain.js';
import { hubRoutes } from './routes-hub.js';
import { poolRoutes } from './routes-pool.js';
import { statusProxyRoutes } from './routes-status-proxy.js';
import { terminalRoutes } from './routes-terminal.js';
import { validatorRoutes } from './routes-validator.js';

export type {
  HttpMethod,
  Refusal,
  RouteAuth,
  RouteDefinition,
  RouteResponses,
  RouteSchemas,
  RouteVersion,
  Service,
} from './route-table.js';
export { COMMON_REFUSALS, NONCE_REFUSAL, STORED_REFUSALS } from './route-table.js';

/**
 * Every endpoint of every service, keyed by operationId, assembled from one file per area
 * (`routes-*.ts`). The validator (and the companion services) register their Fastify routes
 * from this table, @fastify/swagger builds the OpenAPI document from it, and the client derives
 * its method types from it, so the three never drift.
 */
export const ROUTES = {
  ...validatorRoutes,
  ...economyRoutes,
  ...adminRoutes,
  ...hexchainRoutes,
  ...poolRoutes,
  ...statusProxyRoutes,
  ...terminalRoutes,
  ...hubRoutes,
} as const;

export type Routes = typeof ROUTES;
export type OperationId = keyof Routes;

/** Every route, in table order. */
export const ROUTE_LIST: readonly RouteDefinition[] = Object.values(ROUTES);

/** The routes one service registers. */
export function routesOf(service: Service): RouteDefinition[] {
  return ROUTE_LIST.filter((route) => route.service === service);
}

type SchemaPart<Id extends OperationId, Part extends string> = Routes[Id]['schema'] extends {
  readonly [P in Part]: infer S extends TSchema;
}
  ? Static<S>
  : undefined;

/** The JSON body a route accepts (undefined when it takes none). */
export type RouteBody<Id extends OperationId> = SchemaPart<Id, 'body'>;
/** The query parameters a route accepts (undefined when it takes none). */
export type RouteQuery<Id extends OperationId> = SchemaPart<Id, 'querystring'>;
/** The path parameters of a route (undefined when it has none). */
export type RouteParams<Id extends OperationId> = SchemaPart<Id, 'params'>;
/** The successful response of a route: the 200 body, or null for a 302 redirect. */
export type RouteReply<Id extends OperationId> = Routes[Id]['schema']['response'] extends {
  readonly 200: infer S extends TSchema;
}
  ? Static<S>
  : null;
