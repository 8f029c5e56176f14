import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the miner keeps things, XDG style, from the environment it is given:
 *   config  $XDG_CONFIG_HOME/tensormine (default ~/.config/tensormine): miner.json, miner.key
 *   data    $XDG_DATA_HOME/tensormine/miner (default ~/.local/share/tensormine/miner):
 *           the journals and the --local validator's database
 */
type Env = Readonly<Record<string, string | undefined>>;

function home(env: Env): string {
  return env.HOME || homedir();
}

export function configDir(env: Env): string {
  return join(env.XDG_CONFIG_HOME || join(home(env), '.config'), 'tensormine');
}

export function defaultConfigFile(env: Env): string {
  return join(configDir(env), 'miner.json');
}

export function defaultKeyFile(env: Env): string {
  return join(configDir(env), 'miner.key');
}

export function defaultDataDir(env: Env): string {
  return join(env.XDG_DATA_HOME || join(home(env), '.local', 'share'), 'tensormine', 'miner');
}

/** The --local validator's data directory. */
export function localValidatorDir(dataDir: string): string {
  return join(dataDir, 'local-validator');
}

/** The default journal: one for remote validators, one for the --local validator. */
export function defaultJournal(dataDir: string, local: boolean): string {
  return join(dataDir, local ? 'journal-local.jsonl' : 'journal.jsonl');
}

/** A path or argument quoted for a POSIX shell when it needs it (for commands the user copies). */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
