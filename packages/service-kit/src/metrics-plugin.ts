import type { FastifyInstance, FastifySchema, onResponseHookHandler } from 'fastify';
import { bearerRefusal } from './bearer.js';
import {
  HttpMetrics,
  METRICS_GUARD,
  type MetricsListener,
  type MetricsSettings,
  metricsExposure,
  type ServiceMetrics,
  startMetricsListener,
} from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's Prometheus registry (createServiceApp): a service adds its own series to it. */
    metrics: ServiceMetrics;
  }
}

/** Not an endpoint of the OpenAPI document (@fastify/swagger reads `hide` where a service has one). */
const HIDDEN = { hide: true } as FastifySchema;

/** The metrics of `createServiceApp`: the service's settings, its version, and how `/metrics` is guarded. */
export interface ServiceMetricsOptions extends Partial<MetricsSettings> {
  readonly version: string;
  /**
   * `GET /metrics` on the service's port without a token of the kit's: the service guards it with
   * its own hooks (the miner's control API: open on loopback, its token elsewhere).
   */
  readonly guardedByService?: boolean;
}

/**
 * The metrics plugin of every service: `app.metrics` (the registry) always; while `/metrics` is
 * served (docs/metrics.md: `--metrics-port`, `--metrics-token`), also the process metrics and
 * one histogram observation per answer (`http_request_duration_seconds`). Off, nothing runs per
 * request.
 */
export function installMetrics(
  app: FastifyInstance,
  metrics: ServiceMetrics,
  options: ServiceMetricsOptions | undefined,
): void {
  app.decorate('metrics', metrics);
  const exposure = options?.guardedByService ? 'service-port' : metricsExposure(options ?? {});
  if (options === undefined || exposure === 'off') return;
  metrics.collectProcessMetrics();
  const http = new HttpMetrics(metrics);
  // Each route gets a hook of its own, its labels resolved here, once: per request, no route
  // lookup (request.routeOptions builds an object per call), no label key, no clock read of our
  // own (Fastify times every answer: reply.elapsedTime). A new array, never a push: Fastify
  // copies a GET route's options for its HEAD route, which gets its own hook through here.
  app.addHook('onRoute', (route) => {
    const series = http.route(route.url);
    const hook: onResponseHookHandler = (request, reply, done) => {
      series.observe(request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    const existing = route.onResponse;
    route.onResponse =
      existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
  });
  // The requests no route matched (the not-found handler runs the instance's hooks, no route's).
  const unmatched = http.route(undefined);
  // Runs on every request: callback style (no promise, no extra microtask turn); is404 is a
  // property read.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched.observe(request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  const token = options.metricsToken;
  if (exposure === 'service-port') {
    app.get('/metrics', { schema: HIDDEN }, async (request, reply) => {
      if (token !== undefined) {
        const refusal = bearerRefusal(request.headers.authorization, token, METRICS_GUARD);
        if (refusal !== undefined) throw refusal;
      }
      const text = await metrics.text();
      return reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
    });
    return;
  }
  let listener: MetricsListener | undefined;
  // On ready (listen() and the first inject()): a port that is taken fails the service's start.
  app.addHook('onReady', async () => {
    listener = await startMetricsListener(metrics, {
      host: options.metricsHost ?? '127.0.0.1',
      port: options.metricsPort ?? 0,
      token,
    });
    metrics.listenerUrl = listener.url;
  });
  app.addHook('onClose', async () => {
    await listener?.close();
    listener = undefined;
  });
}
