/**
 * @tensormine/service-kit: what every tensormine HTTP service is built from (the validator, the
 * hub, the terminal backend, the status proxy): one Fastify set-up with the one error shape,
 * typed route registration from the protocol's route table, the settings resolver, the rate
 * limiter, Prometheus metrics and the bin runner. Three parts load without Fastify: the settings
 * resolver (`@tensormine/service-kit/settings`, also exported here), the npm-signal watcher
 * (`@tensormine/service-kit/npm-signals`) and the metrics registry with its own listener
 * (`@tensormine/service-kit/metrics`, also exported here).
 */
export { ApiError, errorBody, verdictError } from './api-error.js';
export { createServiceApp, type ServiceAppOptions, type ServicePlugin } from './app.js';
export { type BearerGuard, bearerRefusal } from './bearer.js';
export type { TranslateError } from './error-handler.js';
export { MAX_PARAM_LENGTH } from './framework-errors.js';
export {
  describeMetrics,
  HttpMetrics,
  type Labels,
  METRICS_GUARD,
  type MetricsExposure,
  type MetricsListener,
  metricsExposure,
  type Reading,
  type RouteSeries,
  ServiceMetrics,
  startMetricsListener,
} from './metrics.js';
export type { ServiceMetricsOptions } from './metrics-plugin.js';
export { nodeHttp } from './node-http.js';
export { addressKey, RateLimiter, type RateLimitRule, trustedProxies } from './rate-limit.js';
export {
  type RouteHandler,
  type RouteHooks,
  type RouteRequest,
  registerRoute,
  registerServiceRoutes,
  type ServiceOperationId,
  type ServiceRouteHandlers,
} from './routes.js';
export { runServiceBin, type ServiceBin, type ServiceCreateOptions } from './service-bin.js';
export {
  bigSetting,
  boolSetting,
  ConfigError,
  intSetting,
  LOG_LEVELS,
  type LogLevel,
  type MetricsSettings,
  metricsSettings,
  oneOfSetting,
  type ResolvedSettings,
  type ResolveSettingsInput,
  readJsonFile,
  resolveSettings,
  type ServiceBaseConfig,
  type SettingSource,
  type SettingSpec,
  type SettingSpecs,
  type SettingsEnv,
  serviceBaseSettings,
  settingFlag,
  settingsUsage,
  textSetting,
  tokenSetting,
  urlSetting,
} from './settings.js';
