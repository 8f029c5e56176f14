import type { Service } from '@tensormine/protocol';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { ApiError } from './api-error.js';
import { installErrorHandling, type TranslateError } from './error-handler.js';
import { frameworkErrorOptions, longSegment, URI_TOO_LONG } from './framework-errors.js';
import { acceptJsonBodies } from './json-body.js';
import { ServiceMetrics } from './metrics.js';
import { installMetrics, type ServiceMetricsOptions } from './metrics-plugin.js';
import { addressKey, RateLimiter, type RateLimitRule } from './rate-limit.js';
import { lazySerializerFactory } from './serializer-compiler.js';
import type { LogLevel } from './settings.js';
import { validatorCompiler } from './validator-compiler.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact bytes of a JSON body (every service's body parser keeps them; json-body.ts). */
    rawBody?: Buffer;
  }
}

/**
 * A service-wide addition (a metrics plugin, say): called on the root instance once the kit's
 * set-up is in place and before the service registers any route, so that its hooks see every
 * request and its routes sit beside the service's.
 */
export type ServicePlugin = (app: FastifyInstance, service: Service) => void;

export interface ServiceAppOptions {
  /** Which service of the protocol's route table this is (given to the plugins). */
  readonly service: Service;
  readonly logLevel: LogLevel;
  /** Fastify logger options; default: the level to stdout (cookies and tokens redacted), silent under tests. */
  readonly logger?: boolean | Record<string, unknown> | undefined;
  /** One log line per request (default true); a node serving many miners turns it off. */
  readonly logRequests?: boolean;
  /** Largest request body in bytes (default 16 KiB); a larger one is 413 `body_too_large`. */
  readonly bodyLimit?: number;
  /**
   * Per client address: a token bucket (429 `rate_limited` with Retry-After), or `false` for a
   * service that says where its limits are instead.
   */
  readonly rateLimit: RateLimitRule | false;
  /** The clock of the rate limiter, Unix milliseconds. */
  readonly now: () => number;
  /**
   * Reverse proxies in front of the service whose X-Forwarded-For is believed (addresses, CIDR
   * ranges; `trustedProxies` parses the setting): `request.ip`, and so every per-address limit,
   * is then the client they forward for. Default none.
   */
  readonly trustProxy?: readonly string[];
  /** Headers of every answer, on top of the kit's security headers; a route may override them. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The service's own translation of an error before it is answered (see TranslateError). */
  readonly translateError?: TranslateError;
  /** Service-wide additions, in order (see ServicePlugin). */
  readonly plugins?: readonly ServicePlugin[];
  /**
   * Prometheus metrics (docs/metrics.md): the service's metrics settings and version. `app.metrics`
   * is there either way; `/metrics` is served only as the settings say (off by default).
   */
  readonly metrics?: ServiceMetricsOptions;
}

/** Answer headers of every service. */
const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' } as const;

/**
 * The one Fastify set-up of every service: the strict schema compiler, the one error shape (also
 * for what Fastify and Node's parser refuse before any route runs), JSON bodies only with the raw
 * bytes kept, a per-address rate limit and the security headers. Routes come after, from the
 * protocol's route table (`registerServiceRoutes`). Not listening yet.
 */
export function createServiceApp(options: ServiceAppOptions): FastifyInstance {
  const headers: Readonly<Record<string, string>> = { ...SECURITY_HEADERS, ...options.headers };
  const bodyLimit = options.bodyLimit ?? 16 * 1024;
  const app = Fastify({
    logger:
      options.logger ??
      (process.env.VITEST
        ? false
        : {
            level: options.logLevel,
            redact: ['req.headers.cookie', 'req.headers.authorization', 'req.headers["x-tm-signature"]'],
          }),
    ...(options.logRequests === false
      ? { logController: new LogController({ disableRequestLogging: true }) }
      : {}),
    bodyLimit,
    trustProxy: options.trustProxy === undefined ? false : [...options.trustProxy],
    return503OnClosing: true,
    ajv: { customOptions: { coerceTypes: false } },
    // Response serializers compiled on first use, once per schema (serializer-compiler.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
    // Malformed requests, bad paths and over-long parameters answer in the documented shape.
    ...frameworkErrorOptions(headers),
  });
  app.setValidatorCompiler(validatorCompiler);
  acceptJsonBodies(app, bodyLimit);
  installErrorHandling(app, options.translateError);
  const limiter = options.rateLimit === false ? undefined : new RateLimiter(options.rateLimit, options.now);
  const metrics = new ServiceMetrics(options.service, options.metrics?.version ?? '0.0.0');
  if (limiter !== undefined) metrics.trackRateLimiter('address', limiter);
  installMetrics(app, metrics, options.metrics);
  // Runs on every request: callback style (no promise, no extra microtask turn). Headers set
  // here are on every answer, errors and 404s included, and a handler may still replace one.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    // Per client address: an IPv6 client by its /64 network (addressKey).
    const refused = limiter?.refuse(addressKey(request.ip), 'address');
    if (refused !== undefined) return done(refused);
    // The router refuses an over-long parameter (414), but a wildcard route (static files)
    // would take it: the same answer there.
    if (longSegment(request.url) && request.routeOptions.url?.endsWith('*')) {
      return done(new ApiError('uri_too_long', URI_TOO_LONG));
    }
    done();
  });
  for (const plugin of options.plugins ?? []) plugin(app, options.service);
  return app;
}
