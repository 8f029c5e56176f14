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
export { REWARD_PER_MIMAC_MINOR, REWARD_TOKEN, rewardFor } from './services/mining.js';
export { startupLines } from './startup.js';
export { describeStorage, type OpenStorageSettings, openStorage } from './store/open.js';
export {
  openPostgresStorage,
  PostgresStorage,
  type PostgresStorageOptions,
  redactDatabaseUrl,
} from './store/postgres.js';
export { openSqliteStorage, SqliteStorage } from './store/sqlite.js';
export * from './store/types.js';
