import type { FastifyInstance, FastifySchema } from 'fastify';
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
  // Runs on every request: callback style (no promise, no extra microtask turn).
  app.addHook('onResponse', (request, reply, done) => {
    http.observe(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
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
