/**
 * @tensormine/cli: the `miner` command line and terminal UI. `run(argv, io)` is the whole CLI
 * as a function (the bin calls it with the process's streams); the pieces it is made of are
 * exported for embedding and tests: the settings table, the mining session, the WorkSource on
 * the SDK client. See docs/cli.md.
 */
export { type ConfigFile, configFilePath, readConfigFile, saveConfigFile } from './config-file.js';
export { CliError, type CliErrorCode, EXIT, type ExitCode, failureReason } from './errors.js';
export { type CliInput, type CliIo, type CliOutput, processIo } from './io.js';
export { JSON_EVENTS, type JsonEvent, JsonEventSchema } from './json-events.js';
export { defaultConfigFile, defaultDataDir, defaultKeyFile } from './paths.js';
export type { RunOptions } from './program.js';
export {
  type ConnectionInfo,
  connectionReport,
  type DeviceRow,
  hashrateReport,
  resultsReport,
  type Snapshot,
} from './reports.js';
export { run } from './run.js';
export {
  type LineTone,
  MiningSession,
  type SessionLine,
  type SessionOptions,
  type SessionView,
} from './session.js';
export {
  CONFIG_ENV,
  type MinerSettings,
  type ResolvedSettings,
  resolveSettings,
  SETTING_NAMES,
  SETTINGS,
  type SettingName,
  type SettingSource,
} from './settings.js';
export { ClientWorkSource, type ClientWorkSourceOptions } from './work-source.js';
