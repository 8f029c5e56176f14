import { readFileSync } from 'node:fs';
import { ConfigError } from '@tensormine/service-kit/settings';
import { type Command, Option } from 'commander';
import { type ConfigFile, configFilePath, readConfigFile } from './config-file.js';
import { CliError } from './errors.js';
import type { CliIo } from './io.js';
import type { SessionOptions } from './session.js';
import {
  CONFIG_ENV,
  type ResolvedSettings,
  resolveSettings,
  SETTINGS,
  type SettingName,
} from './settings.js';

/**
 * What the command modules share: the io, the version, and the settings options (the table
 * of settings.ts turned into commander options, and back into resolved settings).
 */
export interface RunOptions {
  /** Tests: options for the mining session (engine intervals, retry delays). */
  readonly session?: Partial<Pick<SessionOptions, 'engine' | 'retryDelayMs'>>;
  /** Tests: called with the mining session once it is open. */
  readonly onSession?: (session: import('./session.js').MiningSession) => void;
  /** Tests: the TUI's refresh interval, ms. */
  readonly tuiRefreshMs?: number;
  /** How often plain mode prints the hashrate line, ms (default 60 000). */
  readonly reportIntervalMs?: number;
}

export interface CommandContext {
  readonly io: CliIo;
  readonly version: string;
  readonly options: RunOptions;
  /** Records the exit code of the command that ran. */
  setExit(code: number): void;
}

export interface LoadedSettings extends ResolvedSettings {
  readonly file: ConfigFile;
  /** The settings given as flags, parsed (what `--save` writes). */
  readonly flags: Partial<Record<SettingName, unknown>>;
}

const optionNames = new WeakMap<Command, Map<SettingName, string>>();

/** Adds the options of these settings (and --config) to a command. */
export function addSettings(command: Command, names: readonly SettingName[]): Command {
  const map = new Map<SettingName, string>();
  for (const name of names) {
    const s = SETTINGS[name];
    const option = new Option(s.flag, `${s.description} (env ${s.env}; default ${s.defaultText})`);
    if (s.repeatable)
      option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    command.addOption(option);
    map.set(name, option.attributeName());
  }
  command.option(
    '--config <file>',
    `the config file (env ${CONFIG_ENV}; default $XDG_CONFIG_HOME/tensormine/miner.json)`,
  );
  optionNames.set(command, map);
  return command;
}

/**
 * The settings of a command: its flags (only those given on the command line), the
 * environment, the config file, the defaults.
 * @throws CliError `config` for a malformed value or config file.
 */
export function loadSettings(
  command: Command,
  io: CliIo,
  options: { allowMissingConfig?: boolean } = {},
): LoadedSettings {
  const values = command.opts() as Record<string, unknown>;
  const flags: Partial<Record<SettingName, unknown>> = {};
  for (const [name, attribute] of optionNames.get(command) ?? []) {
    if (command.getOptionValueSource(attribute) === 'cli') flags[name] = values[attribute];
  }
  const file = readConfigFile(configFilePath(values.config as string | undefined, io.env), {
    ...(options.allowMissingConfig ? { allowMissing: true } : {}),
  });
  let resolved: ResolvedSettings;
  try {
    resolved = resolveSettings({ flags, env: io.env, file: { path: file.path, values: file.values } });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError('config', error.message, [], { cause: error });
    throw error;
  }
  const parsedFlags: Partial<Record<SettingName, unknown>> = {};
  for (const name of Object.keys(flags) as SettingName[]) parsedFlags[name] = resolved.settings[name];
  return { ...resolved, file, flags: parsedFlags };
}

/** The CLI's version (package.json). */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** A plain table: columns padded to their widest cell. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** Writes a JSON document (2-space indent). */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
}
