import { availableParallelism } from 'node:os';
import { DEVICE_TYPES, type DeviceType } from '@tensormine/protocol';
import {
  boolSetting as boolean,
  ConfigError,
  intSetting as integer,
  oneOfSetting as oneOf,
  type ResolveSettingsInput,
  resolveSettings as resolveServiceSettings,
  type SettingSource,
  type SettingSpec,
} from '@tensormine/service-kit/settings';
import { defaultDataDir, defaultJournal, defaultKeyFile } from './paths.js';

/**
 * Every setting of the miner, in one table: its flag, its environment variable (MINER_*), its
 * key in the config file (the setting's name), its default and its parser. Values resolve
 * with the precedence
 *   flags > environment > config file > defaults
 * by the one settings resolver of @tensormine/service-kit, which records where each value came
 * from (`miner config` prints both). Commands take the flags of the settings they use;
 * `miner config` takes them all.
 */
export interface MinerSettings {
  /** Validators in failover order, the primary first. */
  readonly urls: readonly string[];
  readonly protocol: 'auto' | '4.0' | '4.1';
  /** The key file (ed25519, mode 0600). */
  readonly key: string;
  /** The device type `register` registers (and v4.0 challenges are sized for). */
  readonly deviceType: DeviceType;
  readonly threads: number;
  /** The CPU kernels: native (SHA-NI, AVX2), WebAssembly SIMD, JavaScript, or auto (the fastest that runs). */
  readonly kernel: 'auto' | 'native' | 'wasm' | 'js';
  /** The CPU duty cycle, 0 < x <= 1. */
  readonly intensity: number;
  /** Mine on the CPU. */
  readonly cpu: boolean;
  /** Serial boards: `auto` (hotplug by USB chip) and/or port paths. */
  readonly devices: readonly string[];
  /** Start a validator in process and mine against it. */
  readonly local: boolean;
  /** Mine in the validator's pool: send shares, be paid by PPLNS. */
  readonly pool: boolean;
  /** With --pool: join with this stake (PTM) when the key is not a member yet. */
  readonly stake: string | undefined;
  /** The journals and the --local validator's data live here. */
  readonly dataDir: string;
  readonly journal: string;
  /** The local control API's port (0: any free port); off when unset. */
  readonly apiPort: number | undefined;
  readonly apiToken: string | undefined;
  /** Serve the live lattice dashboard (a status proxy in this process) on 127.0.0.1. */
  readonly dashboard: boolean;
  /** The terminal UI when stdout is a terminal (false: plain log lines). */
  readonly tui: boolean;
  /** Also append the log lines (plain, timestamped) to this file; off when unset. */
  readonly logFile: string | undefined;
}

export type SettingName = keyof MinerSettings;
export type { SettingSource };

/** A setting of the miner: the service kit's, with its commander flag and help texts. */
export interface Setting<T> extends SettingSpec<T, MinerSettings> {
  /** The commander flag, e.g. `--url <url>`, `--no-cpu`. */
  readonly flag: string;
  /** The default as the help shows it. */
  readonly defaultText: string;
  /** The flag may be given several times (a list). */
  readonly repeatable?: boolean;
  /** Never printed (`miner config` shows "(set)"). */
  readonly secret?: boolean;
}

function fail(where: string, expected: string, got: unknown): never {
  throw new ConfigError(`${where}: expected ${expected}, got ${JSON.stringify(got)}`);
}

function path(value: unknown, where: string): string {
  if (typeof value === 'string' && value.trim().length > 0) return value;
  return fail(where, 'a path', value);
}

/** A list: an array (file, repeated flags) or a comma-separated string (environment, one flag). */
function list(value: unknown, where: string): string[] {
  const items = Array.isArray(value)
    ? value.flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]))
    : typeof value === 'string'
      ? value.split(',')
      : fail(where, 'a list (an array, or values separated by commas)', value);
  return items
    .map((item) => (typeof item === 'string' ? item.trim() : item))
    .filter((i) => i !== '') as string[];
}

function urls(value: unknown, where: string): string[] {
  const items = list(value, where);
  if (items.length === 0) fail(where, 'at least one validator URL', value);
  const seen = new Set<string>();
  return items.map((item) => {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      return fail(where, 'http:// or https:// URLs', item);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(where, 'http:// or https:// URLs', item);
    const normalized = url.href.replace(/\/+$/, '');
    if (seen.has(normalized)) fail(where, 'each URL once', item);
    seen.add(normalized);
    return normalized;
  });
}

function devices(value: unknown, where: string): string[] {
  const items = list(value, where);
  for (const item of items) if (typeof item !== 'string') fail(where, '"auto" or serial port paths', item);
  return items;
}

function intensity(value: unknown, where: string): number {
  let n: unknown = value;
  if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(value);
    n = m ? Number(m[1]) / (m[2] ? 100 : 1) : Number.NaN;
  }
  if (typeof n !== 'number' || !(n > 0 && n <= 1)) fail(where, 'a number in (0, 1] or a percentage', value);
  return n;
}

function token(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length < 16) {
    throw new ConfigError(
      `${where}: expected a token of at least 16 characters, got ${typeof value === 'string' ? `${value.length} characters` : typeof value}`,
    );
  }
  return value;
}

export const SETTINGS: { readonly [K in SettingName]: Setting<MinerSettings[K]> } = {
  urls: {
    flag: '--url <url>',
    env: 'MINER_URL',
    description:
      'a validator URL; repeat for failover, in order (the environment takes a comma-separated list)',
    default: () => ['http://127.0.0.1:8420'],
    defaultText: 'http://127.0.0.1:8420',
    parse: urls,
    repeatable: true,
  },
  protocol: {
    flag: '--protocol <version>',
    env: 'MINER_PROTOCOL',
    description: 'protocol: auto (detected per validator), 4.0 (tensor proofs) or 4.1 (hexchain blocks)',
    default: () => 'auto',
    defaultText: 'auto',
    parse: oneOf(['auto', '4.0', '4.1'] as const),
  },
  key: {
    flag: '--key <file>',
    env: 'MINER_KEY',
    description: 'the key file (ed25519, mode 0600)',
    default: (env) => defaultKeyFile(env),
    defaultText: '$XDG_CONFIG_HOME/tensormine/miner.key',
    parse: path,
  },
  deviceType: {
    flag: '--device-type <type>',
    env: 'MINER_DEVICE_TYPE',
    description: `the device type to register: ${DEVICE_TYPES.join(', ')}`,
    default: () => 'native',
    defaultText: 'native',
    parse: oneOf(DEVICE_TYPES),
  },
  threads: {
    flag: '--threads <n>',
    env: 'MINER_THREADS',
    description: 'CPU worker threads',
    default: () => availableParallelism(),
    defaultText: 'one per core',
    parse: integer(1, 1024),
  },
  kernel: {
    flag: '--kernel <auto|native|wasm|js>',
    env: 'MINER_KERNEL',
    description:
      'CPU kernels: native (C on SHA-NI and AVX2, built on first use), wasm (WebAssembly SIMD), js, or auto (native, else wasm)',
    default: () => 'auto',
    defaultText: 'auto',
    parse: oneOf(['auto', 'native', 'wasm', 'js'] as const),
  },
  intensity: {
    flag: '--intensity <x>',
    env: 'MINER_INTENSITY',
    description: 'CPU duty cycle: a number in (0, 1] or a percentage (50%)',
    default: () => 1,
    defaultText: '1',
    parse: intensity,
  },
  cpu: {
    flag: '--no-cpu',
    env: 'MINER_CPU',
    description: 'do not mine on the CPU (serial boards only)',
    default: () => true,
    defaultText: 'on',
    parse: boolean,
  },
  devices: {
    flag: '--device <auto|path>',
    env: 'MINER_DEVICE',
    description: 'serial mining boards: auto (found by USB chip, hotplug) or a port path; repeatable',
    default: () => [],
    defaultText: 'none',
    parse: devices,
    repeatable: true,
  },
  local: {
    flag: '--local',
    env: 'MINER_LOCAL',
    description: 'start a validator in process (data in DATA_DIR/local-validator) and mine against it',
    default: () => false,
    defaultText: 'off',
    parse: boolean,
  },
  pool: {
    flag: '--pool',
    env: 'MINER_POOL',
    description: "mine in the validator's pool: send shares, be paid by PPLNS (docs/cli.md, pooled mining)",
    default: () => false,
    defaultText: 'off (solo)',
    parse: boolean,
  },
  stake: {
    flag: '--stake <ptm>',
    env: 'MINER_STAKE',
    description:
      'with --pool: join the pool with this stake in PTM when the key is not a member (e.g. 0 or 2.5)',
    default: () => undefined,
    defaultText: 'none (do not join)',
    parse: (value, where) => {
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return String(value);
      if (typeof value === 'string' && /^(0|[1-9][0-9]*)(\.[0-9]{1,9})?$/.test(value.trim()))
        return value.trim();
      return fail(where, 'a PTM amount such as 0, 10 or 2.5', value);
    },
  },
  dataDir: {
    flag: '--data-dir <dir>',
    env: 'MINER_DATA_DIR',
    description: 'data directory: the journals and the --local validator',
    default: (env) => defaultDataDir(env),
    defaultText: '$XDG_DATA_HOME/tensormine/miner',
    parse: path,
  },
  journal: {
    flag: '--journal <file>',
    env: 'MINER_JOURNAL',
    description: 'the journal of results not yet accepted (JSON lines)',
    default: (_env, s) => defaultJournal(s.dataDir!, s.local!),
    defaultText: 'DATA_DIR/journal.jsonl (journal-local.jsonl with --local)',
    parse: path,
  },
  apiPort: {
    flag: '--api-port <port>',
    env: 'MINER_API_PORT',
    description: 'start the local control API on 127.0.0.1 at this port (0: any free port)',
    default: () => undefined,
    defaultText: 'off',
    parse: integer(0, 65535),
  },
  apiToken: {
    flag: '--api-token <token>',
    env: 'MINER_API_TOKEN',
    description: 'the control API bearer token, at least 16 characters (prefer the environment variable)',
    default: () => undefined,
    defaultText: 'none',
    parse: token,
    secret: true,
  },
  dashboard: {
    flag: '--dashboard',
    env: 'MINER_DASHBOARD',
    description:
      'serve the live lattice dashboard (a status proxy in this process, 127.0.0.1, a free port) and print its URL',
    default: () => false,
    defaultText: 'off',
    parse: boolean,
  },
  tui: {
    flag: '--no-tui',
    env: 'MINER_TUI',
    description: 'plain log lines even when stdout is a terminal',
    default: () => true,
    defaultText: 'on when stdout is a terminal',
    parse: boolean,
  },
  logFile: {
    flag: '--log-file <file>',
    env: 'MINER_LOG_FILE',
    description:
      'also append every log line (timestamped, plain text) to this file, whatever the screen shows',
    default: () => undefined,
    defaultText: 'off',
    parse: path,
  },
};

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** The environment variable that names the config file (the flag is --config). */
export const CONFIG_ENV = 'MINER_CONFIG';

/** The flag of a setting without its argument, e.g. `--url`, `--no-cpu`. */
export function flagName(name: SettingName): string {
  return SETTINGS[name].flag.split(' ')[0]!;
}

export interface ResolvedSettings {
  readonly settings: MinerSettings;
  readonly sources: Readonly<Record<SettingName, SettingSource>>;
}

/**
 * Resolves every setting: flags > environment > config file (already read, see config-file.ts)
 * > defaults.
 * @throws ConfigError naming the flag, variable or file key of a malformed value.
 */
export function resolveSettings(input: ResolveSettingsInput<MinerSettings> = {}): ResolvedSettings {
  const { config, sources } = resolveServiceSettings(SETTINGS, input);
  return { settings: config, sources };
}

/** A setting's value as `miner config` prints it (secrets as "(set)"). */
export function displayValue(name: SettingName, value: unknown): string {
  if (SETTINGS[name].secret) return value === undefined ? '(not set)' : '(set)';
  if (value === undefined) return '(not set)';
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.join(', ');
  return String(value);
}

/** A setting's value for the JSON output and the config file (secrets left out of the output). */
export function jsonValue(name: SettingName, value: unknown): unknown {
  if (SETTINGS[name].secret) return value === undefined ? null : '(set)';
  return value ?? null;
}
