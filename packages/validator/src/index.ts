/**
 * @tensormine/validator: the reference validator of the proof-of-tensor mining network, in
 * process (tests, applications) or as a local node (`tensormine-validator start`).
 */
export { type CreateValidatorOptions, createValidator, SOFTWARE_VERSION, type Validator } from './app.js';
export {
  ConfigError,
  type ConfigSource,
  defaultDataDir,
  type PoolStrategy,
  type ResolvedConfig,
  RUNTIME_SETTINGS,
  resolveConfig,
  SETTING_NAMES,
  SETTINGS,
  type SettingName,
  settingFlag,
  type ValidatorConfig,
} from './config.js';
export type { RuntimeConfig, ValidatorContext } from './context.js';
// The HTTP plumbing the companion services (hub, terminal backend) share with the validator:
// one error shape, one strict schema compiler, one rate limiter.
export { ApiError, errorBody, installErrorHandling } from './http/errors.js';
export { addressKey, RateLimiter, trustedProxies } from './http/rate-limit.js';
export { validatorCompiler } from './http/validator-compiler.js';
export {
  createServiceApp,
  registerServiceRoutes,
  runServiceBin,
  type ServiceAppOptions,
  type ServiceBin,
  type ServiceCreateOptions,
  type ServiceHandler,
} from './service-kit.js';
export { REWARD_PER_MIMAC_MINOR, REWARD_TOKEN, rewardFor } from './services/mining.js';
export {
  bigSetting,
  boolSetting,
  intSetting,
  LOG_LEVELS,
  type LogLevel,
  oneOfSetting,
  type ResolvedSettings,
  type ResolveSettingsInput,
  readJsonFile,
  resolveSettings,
  type ServiceBaseConfig,
  type SettingSource,
  type SettingSpec,
  type SettingSpecs,
  serviceBaseSettings,
  settingsUsage,
  textSetting,
  urlSetting,
} from './settings.js';
export { describeStorage, type OpenStorageSettings, openStorage } from './store/open.js';
export {
  openPostgresStorage,
  PostgresStorage,
  type PostgresStorageOptions,
  redactDatabaseUrl,
} from './store/postgres.js';
export { openSqliteStorage, SqliteStorage } from './store/sqlite.js';
export * from './store/types.js';
