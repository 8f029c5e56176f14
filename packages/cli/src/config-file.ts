import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CliError } from './errors.js';
import { defaultConfigFile } from './paths.js';
import { CONFIG_ENV, type MinerSettings, SETTING_NAMES, type SettingName } from './settings.js';

/**
 * The config file: a JSON object whose keys are setting names (miner.json), e.g.
 *   { "urls": ["http://a:8420", "http://b:8420"], "threads": 4 }
 * It lives at $XDG_CONFIG_HOME/tensormine/miner.json unless --config or MINER_CONFIG names
 * another. A missing default file is an empty one; a missing file named explicitly is an
 * error (a typo would otherwise go unnoticed), except when saving into it.
 */
export interface ConfigFile {
  readonly path: string;
  /** Named by --config or MINER_CONFIG (not the default location). */
  readonly explicit: boolean;
  readonly exists: boolean;
  readonly values: Readonly<Record<string, unknown>>;
}

export function configFilePath(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): { path: string; explicit: boolean } {
  if (flag !== undefined) return { path: flag, explicit: true };
  const fromEnv = env[CONFIG_ENV];
  if (fromEnv) return { path: fromEnv, explicit: true };
  return { path: defaultConfigFile(env), explicit: false };
}

/**
 * Reads the config file.
 * @throws CliError `config` when it cannot be read, is not a JSON object, or has unknown keys.
 */
export function readConfigFile(
  location: { path: string; explicit: boolean },
  options: { allowMissing?: boolean } = {},
): ConfigFile {
  const { path, explicit } = location;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && (!explicit || options.allowMissing)) {
      return { path, explicit, exists: false, values: {} };
    }
    throw new CliError(
      'config',
      code === 'ENOENT'
        ? `config file ${path} does not exist`
        : `config file ${path} cannot be read (${code ?? 'error'})`,
      code === 'ENOENT' ? ['create it with "miner mine --save ..." or leave out --config'] : [],
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError('config', `config file ${path} is not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CliError('config', `config file ${path}: expected a JSON object of settings`);
  }
  const unknown = Object.keys(parsed).filter((k) => !(SETTING_NAMES as string[]).includes(k));
  if (unknown.length > 0) {
    throw new CliError(
      'config',
      `config file ${path}: unknown setting${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')} (known: ${SETTING_NAMES.join(', ')})`,
    );
  }
  return { path, explicit, exists: true, values: parsed as Record<string, unknown> };
}

/**
 * Writes `values` into the config file, keeping the settings it already holds: a temporary
 * file with mode 0600 (it may hold the API token), fsynced, then renamed over it.
 */
export async function saveConfigFile(
  file: ConfigFile,
  values: Partial<Record<SettingName, unknown>>,
): Promise<void> {
  const merged = { ...file.values, ...values };
  const temporary = `${file.path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(dirname(file.path), { recursive: true, mode: 0o700 });
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(merged, null, 2)}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file.path);
    await chmod(file.path, 0o600);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw new CliError(
      'failure',
      `cannot write config file ${file.path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

/** The settings as they are stored in the file (lists as arrays). */
export function fileValue(value: MinerSettings[SettingName]): unknown {
  return Array.isArray(value) ? [...value] : value;
}
