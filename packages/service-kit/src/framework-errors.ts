import type { Socket } from 'node:net';
import type { ErrorCode } from '@tensormine/protocol';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify';
import { errorBody } from './api-error.js';
import { nodeHttp } from './node-http.js';

/** node:http's reason phrases (node-http.ts: not an ESM import of node:http). */
const { STATUS_CODES } = nodeHttp;

/**
 * The errors answered before any route runs, in the one documented shape
 * (`{ statusCode, code, error, message }`, docs/errors.md), never Fastify's or Node's own:
 *   - malformed HTTP from Node's parser (an unknown method, a raw non-ASCII byte in the path):
 *     400 `bad_request`; headers over the limit: 431 `headers_too_large`; a request that
 *     did not arrive in time: 408 `request_timeout`;
 *   - a path that is not valid percent-encoded UTF-8: 400 `bad_request`; a path parameter
 *     longer than MAX_PARAM_LENGTH: 414 `uri_too_long`. Neither echoes the path back;
 *   - a route that exists for other methods: 405 `method_not_allowed` with `Allow`
 *     (`methodNotAllowed`, answered by the not-found handler of error-handler.ts).
 */

/** The longest path parameter the router accepts (the longest real one is a 64-hex key). */
export const MAX_PARAM_LENGTH = 200;

/** The message of 414 `uri_too_long` (the path is not echoed). */
export const URI_TOO_LONG = `a path segment is longer than ${MAX_PARAM_LENGTH} characters; no route takes one that long`;

/**
 * Fastify options for the framework's own errors (spread into `Fastify({...})`); `headers` are
 * the service's headers of every answer (security headers), which no hook adds to these.
 */
export function frameworkErrorOptions(
  headers: Readonly<Record<string, string>> = {},
): Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler' | 'routerOptions'> {
  return {
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
      const body =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? errorBody('uri_too_long', URI_TOO_LONG)
          : error.code === 'FST_ERR_BAD_URL'
            ? errorBody('bad_request', 'the path is not valid percent-encoded UTF-8')
            : errorBody('bad_request', 'the request could not be routed');
      void reply.headers(headers).code(body.statusCode).send(body);
    },
    clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket) {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const [code, message]: [ErrorCode, string] =
        error.code === 'HPE_HEADER_OVERFLOW'
          ? ['headers_too_large', 'the request headers are larger than this server accepts']
          : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? ['request_timeout', 'the request did not arrive in time']
            : error.code === 'HPE_INVALID_METHOD'
              ? ['bad_request', 'the request is not valid HTTP/1.1: unknown method']
              : error.code === 'HPE_INVALID_URL'
                ? [
                    'bad_request',
                    'the request is not valid HTTP/1.1: the path has a byte that is not allowed',
                  ]
                : ['bad_request', `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`];
      const answer = errorBody(code, message);
      const body = JSON.stringify(answer);
      const status = answer.statusCode;
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
  };
}

/**
 * Whether a request's path has a segment longer than MAX_PARAM_LENGTH. The router refuses such
 * a parameter, but a wildcard route (static files) would take it: this check gives those the
 * same 414 (cheap: only a URL longer than the limit is looked at).
 */
export function longSegment(url: string): boolean {
  if (url.length <= MAX_PARAM_LENGTH) return false;
  const end = url.indexOf('?');
  let start = 0;
  for (const path = end < 0 ? url : url.slice(0, end); start < path.length; ) {
    const next = path.indexOf('/', start);
    const stop = next < 0 ? path.length : next;
    if (stop - start > MAX_PARAM_LENGTH) return true;
    start = stop + 1;
  }
  return false;
}

interface RouteShape {
  readonly pattern: RegExp;
  readonly methods: Set<string>;
}

/**
 * Remembers every route as it is registered, and returns the methods a path is served for
 * (empty when no route matches the path at all).
 */
export function trackRoutes(app: FastifyInstance): (path: string) => string[] {
  const routes = new Map<string, RouteShape>();
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    if (url === undefined) return;
    let shape = routes.get(url);
    if (!shape) {
      const source = url
        .split('/')
        .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      shape = { pattern: new RegExp(`^${source}/?$`), methods: new Set() };
      routes.set(url, shape);
    }
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) shape.methods.add(m);
  });
  return (path) => {
    const methods = new Set<string>();
    for (const shape of routes.values()) {
      if (shape.pattern.test(path)) for (const m of shape.methods) methods.add(m);
    }
    return [...methods].sort();
  };
}

/** The 405 answer for a path served for `allowed` methods only. */
export function methodNotAllowed(
  request: FastifyRequest,
  reply: FastifyReply,
  allowed: readonly string[],
): FastifyReply {
  const body = errorBody(
    'method_not_allowed',
    `${request.method} is not allowed here; this path takes ${allowed.join(', ')}`,
    { allow: [...allowed] },
  );
  return reply.code(405).header('allow', allowed.join(', ')).send(body);
}
