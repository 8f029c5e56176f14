import { readFileSync } from 'node:fs';

/**
 * The one settings resolver of every program (the validator, the hub, the terminal backend, the
 * miner's CLI): each setting has an environment variable, a default, a parser and a meaning, and
 * values resolve with the precedence
 *   flags > environment > config file > defaults
 * recording where each value came from. One resolver and one set of parsers for all of them.
 */

/** The environment settings are read from (process.env, or a test's own). */
export type SettingsEnv = Readonly<Record<string, string | undefined>>;

export interface SettingSpec<T, C = unknown> {
  readonly env: string;
  readonly description: string;
  /**
   * The default; it may read the environment and the settings above it in the table (resolved
   * in table order).
   */
  readonly default: (env: SettingsEnv, resolved: Partial<C>) => T;
  /** Parses a string (env, flag) or a JSON value (file); throws ConfigError with a clear message. */
  readonly parse: (value: unknown, where: string) => T;
  /**
   * The command-line flag when a program spells it its own way (`--url <url>`, `--no-cpu`);
   * errors then name it. Default: `--kebab-case-name`, and errors name the setting.
   */
  readonly flag?: string;
  /** The default as a usage text shows it, when it is not a plain value (`one per core`). */
  readonly defaultText?: string;
}

export type SettingSpecs<C> = { readonly [K in keyof C]: SettingSpec<C[K], C> };
export type SettingSource = 'flag' | 'env' | 'file' | 'default';

/** A setting or a config file that cannot be used: the message names where it came from. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function intSetting(min: number, max: number) {
  return (value: unknown, where: string): number => {
    const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(
        `${where}: expected an integer in [${min}, ${max}], got ${JSON.stringify(value)}`,
      );
    }
    return n;
  };
}

export function bigSetting(min: bigint, max: bigint) {
  return (value: unknown, where: string): bigint => {
    let n: bigint | undefined;
    if (typeof value === 'bigint') n = value;
    else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
    else if (typeof value === 'string' && /^\d+$/.test(value.trim())) n = BigInt(value.trim());
    if (n === undefined || n < min || n > max) {
      throw new ConfigError(
        `${where}: expected an integer in [${min}, ${max}], got ${JSON.stringify(String(value))}`,
      );
    }
    return n;
  };
}

export function boolSetting(value: unknown, where: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(1|true|yes|on)$/i.test(value.trim())) return true;
  if (typeof value === 'string' && /^(0|false|no|off)$/i.test(value.trim())) return false;
  throw new ConfigError(`${where}: expected true or false, got ${JSON.stringify(value)}`);
}

export function oneOfSetting<T extends string>(values: readonly T[]) {
  return (value: unknown, where: string): T => {
    if (typeof value === 'string' && (values as readonly string[]).includes(value)) return value as T;
    throw new ConfigError(`${where}: expected one of ${values.join(', ')}, got ${JSON.stringify(value)}`);
  };
}

export function textSetting(value: unknown, where: string): string {
  if (typeof value === 'string' && value.length > 0 && value.length <= 4096) return value;
  throw new ConfigError(`${where}: expected a non-empty string, got ${JSON.stringify(value)}`);
}

/** An absolute http(s) URL, without trailing slashes. */
export function urlSetting(value: unknown, where: string): string {
  const s = textSetting(value, where);
  let url: URL | undefined;
  try {
    url = new URL(s);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ConfigError(`${where}: expected an absolute http or https URL, got ${JSON.stringify(s)}`);
  }
  return s.replace(/\/+$/, '');
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The kebab-case flag of a setting: `gamesFile` is `--games-file`. */
export function settingFlag(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Reads a JSON file; errors name the file and the problem, never its content. */
export function readJsonFile(path: string, what = 'file'): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `${what} ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${what} ${path}: not valid JSON (${(error as Error).message})`);
  }
}

export interface ResolveSettingsInput<C> {
  /** Values given as flags or programmatic options (already typed or strings). */
  readonly flags?: Partial<Record<keyof C, unknown>>;
  /** The environment (default: none; pass process.env to read it). */
  readonly env?: SettingsEnv;
  /** A JSON config file to read; its keys are the setting names. */
  readonly configFile?: string;
  /** A config file already read (a program that reads its own, e.g. one that may be missing). */
  readonly file?: { readonly path: string; readonly values: Readonly<Record<string, unknown>> };
}

export interface ResolvedSettings<C> {
  readonly config: C;
  readonly sources: Readonly<Record<keyof C, SettingSource>>;
}

/** Resolves every setting of `specs`, in table order (flags > environment > config file > defaults). */
export function resolveSettings<C>(
  specs: SettingSpecs<C>,
  input: ResolveSettingsInput<C> = {},
): ResolvedSettings<C> {
  const names = Object.keys(specs) as (keyof C & string)[];
  const file =
    input.file ??
    (input.configFile
      ? { path: input.configFile, values: readConfigObject(input.configFile, names) }
      : undefined);
  const env = input.env ?? {};
  const config: Record<string, unknown> = {};
  const sources: Record<string, SettingSource> = {};
  for (const name of names) {
    const setting = specs[name] as SettingSpec<unknown, C>;
    const flag = input.flags?.[name];
    const fromEnv = env[setting.env];
    const fromFile = file?.values[name];
    if (flag !== undefined) {
      config[name] = setting.parse(flag, `option ${setting.flag?.split(' ')[0] ?? name}`);
      sources[name] = 'flag';
    } else if (fromEnv !== undefined && fromEnv !== '') {
      config[name] = setting.parse(fromEnv, `environment ${setting.env}`);
      sources[name] = 'env';
    } else if (file !== undefined && fromFile !== undefined) {
      config[name] = setting.parse(fromFile, `config file ${file.path} key ${name}`);
      sources[name] = 'file';
    } else {
      config[name] = setting.default(env, config as Partial<C>);
      sources[name] = 'default';
    }
  }
  return { config: config as C, sources: sources as Record<keyof C, SettingSource> };
}

function readConfigObject(path: string, names: readonly string[]): Record<string, unknown> {
  const parsed = readJsonFile(path, 'config file');
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path}: expected a JSON object of settings`);
  }
  const unknown = Object.keys(parsed).filter((k) => !names.includes(k));
  if (unknown.length > 0) {
    throw new ConfigError(
      `config file ${path}: unknown settings ${unknown.join(', ')} (known: ${names.join(', ')})`,
    );
  }
  return parsed as Record<string, unknown>;
}

/**
 * `usage` rows of a service's bin: flag, meaning, environment variable and default (`hide`:
 * settings whose default depends on the machine and is not shown).
 */
export function settingsUsage<C>(
  specs: SettingSpecs<C>,
  hide: readonly string[] = [],
  env: SettingsEnv = {},
): string[] {
  const resolved: Record<string, unknown> = {};
  return (Object.keys(specs) as (keyof C & string)[]).map((name) => {
    const s = specs[name] as SettingSpec<unknown, C>;
    const value = s.default(env, resolved as Partial<C>);
    resolved[name] = value;
    const shown = hide.includes(name)
      ? undefined
      : (s.defaultText ?? (value === undefined ? undefined : String(value)));
    return `  --${settingFlag(name).padEnd(28)} ${s.description}\n  ${''.padEnd(30)} env ${s.env}${shown === undefined ? '' : `, default ${shown}`}`;
  });
}

/** The settings every companion service has: where it listens, its per-address limit, its log level. */
export interface ServiceBaseConfig {
  readonly host: string;
  readonly port: number;
  readonly rateLimitPerSecond: number;
  readonly rateLimitBurst: number;
  readonly logLevel: LogLevel;
}

/** The base settings of a service, under `PREFIX_*` variables, with its defaults. */
export function serviceBaseSettings(
  prefix: string,
  defaults: { readonly port: number; readonly perSecond: number; readonly burst: number },
): SettingSpecs<ServiceBaseConfig> {
  return {
    host: {
      env: `${prefix}_HOST`,
      description: 'address to listen on',
      default: () => '127.0.0.1',
      parse: textSetting,
    },
    port: {
      env: `${prefix}_PORT`,
      description: 'TCP port (0 picks a free one)',
      default: () => defaults.port,
      parse: intSetting(0, 65535),
    },
    rateLimitPerSecond: {
      env: `${prefix}_RATE_LIMIT_PER_SECOND`,
      description: 'sustained requests per second per client address',
      default: () => defaults.perSecond,
      parse: intSetting(1, 1_000_000),
    },
    rateLimitBurst: {
      env: `${prefix}_RATE_LIMIT_BURST`,
      description: 'request burst per client address',
      default: () => defaults.burst,
      parse: intSetting(1, 1_000_000),
    },
    logLevel: {
      env: `${prefix}_LOG_LEVEL`,
      description: `log level (${LOG_LEVELS.join(', ')})`,
      default: () => 'info',
      parse: oneOfSetting(LOG_LEVELS),
    },
  };
}
