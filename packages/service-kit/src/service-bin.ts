import { parseArgs } from 'node:util';
import { watchNpmStopSignals } from './npm-signals.js';
import {
  ConfigError,
  type ResolveSettingsInput,
  resolveSettings,
  type SettingSpecs,
  type SettingsEnv,
  settingFlag,
  settingsUsage,
} from './settings.js';

/** What every service's `createX()` takes beside its settings (given as flags). */
export interface ServiceCreateOptions {
  /** Read the service's variables from this environment (the bin passes process.env; default none). */
  readonly env?: SettingsEnv;
  readonly configFile?: string;
  /** The clock, Unix milliseconds. */
  readonly now?: () => number;
  readonly logger?: boolean | Record<string, unknown>;
}

export interface ServiceBin<C> {
  /** The command name, e.g. "tensormine-hub". */
  readonly name: string;
  /** What `start` runs, e.g. "the hub". */
  readonly what: string;
  readonly specs: SettingSpecs<C>;
  /** The environment variable naming a config file, e.g. HUB_CONFIG. */
  readonly configEnv: string;
  /** Settings whose value `config` prints as (set) / (not set). */
  readonly secrets?: readonly (keyof C)[];
  /** How `config` prints some values (a URL without its password, what an unset value means). */
  readonly display?: { readonly [K in keyof C]?: (value: C[K]) => string };
  /** Settings whose default is not printed in the usage (computed from the machine). */
  readonly hideDefaults?: readonly (keyof C & string)[];
  /** Starts the service; resolves to the lines to print and how to stop it. */
  readonly start: (
    input: ResolveSettingsInput<C>,
  ) => Promise<{ readonly lines: readonly string[]; close(): Promise<void> }>;
}

/**
 * Runs a service's bin: `start` or `config [--json]`, every setting a flag (kebab-case), an
 * environment variable and a key of the `--config` file. `start` stops cleanly on SIGINT or
 * SIGTERM, also under npm (see npm-signals.ts). Exits with 2 on a usage or configuration
 * error, 1 when the port is taken or the service fails to start.
 */
export function runServiceBin<C>(bin: ServiceBin<C>, argv = process.argv.slice(2)): void {
  const names = Object.keys(bin.specs) as (keyof C & string)[];
  const usage = () =>
    [
      `usage: ${bin.name} <command> [options]`,
      '',
      'commands:',
      `  start     run ${bin.what}`,
      '  config    print the effective configuration and the source of each value (secrets hidden)',
      '',
      'options:',
      `  --config FILE                  a JSON file of settings (keys as below, camelCase); env ${bin.configEnv}`,
      '  --json                         (config) machine-readable output',
      ...settingsUsage(bin.specs, bin.hideDefaults ?? [], process.env),
    ].join('\n');

  const shown = <K extends keyof C & string>(name: K, value: C[K]): string => {
    const display = bin.display?.[name];
    if (display) return display(value);
    if (bin.secrets?.includes(name)) return value === undefined ? '(not set)' : '(set)';
    return value === undefined ? '(not set)' : String(value);
  };

  const main = async (): Promise<number> => {
    const options: Record<string, { type: 'string' | 'boolean' }> = {
      config: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    };
    for (const name of names) options[settingFlag(name)] = { type: 'string' };
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    } catch (error) {
      console.error(`${bin.name}: ${(error as Error).message}\n\n${usage()}`);
      return 2;
    }
    const { values, positionals } = parsed;
    const command = positionals[0];
    if (values.help === true || !command) {
      console.log(usage());
      return command || values.help ? 0 : 2;
    }
    const flags: Partial<Record<keyof C, unknown>> = {};
    for (const name of names) {
      const v = values[settingFlag(name)];
      if (v !== undefined) flags[name] = v;
    }
    const configFile = (values.config as string | undefined) ?? process.env[bin.configEnv];
    const input: ResolveSettingsInput<C> = { flags, env: process.env, ...(configFile ? { configFile } : {}) };
    if (command === 'config') {
      const { config, sources } = resolveSettings(bin.specs, input);
      const rows = names.map((name) => ({
        name,
        env: bin.specs[name].env,
        value: shown(name, config[name]),
        source: sources[name],
      }));
      if (values.json === true) console.log(JSON.stringify(rows, null, 2));
      else
        for (const r of rows)
          console.log(`${r.name.padEnd(28)} ${r.value.padEnd(48)} ${r.source} (${r.env})`);
      return 0;
    }
    if (command !== 'start') {
      console.error(`${bin.name}: unknown command ${JSON.stringify(command)}\n\n${usage()}`);
      return 2;
    }
    const running = await bin.start(input);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`\n${signal}: closing (finishing requests in flight)`);
      await running.close();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
    // Under `npm start`: npm's own SIGINT and SIGTERM stop at its shell (npm-signals.ts).
    watchNpmStopSignals((reason) => void stop(reason));
    // The lines last: whoever waits for them may stop the service at once, and the handlers
    // above must be in place by then (a SIGTERM between the two killed it with no clean close).
    for (const line of running.lines) console.log(line);
    return -1;
  };

  main().then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (error: unknown) => {
      if (error instanceof ConfigError) {
        console.error(`${bin.name}: ${error.message}`);
        process.exit(2);
      }
      const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
      if (e.code === 'EADDRINUSE') {
        console.error(
          `${bin.name}: port ${e.port} on ${e.address} is already in use; pick another with --port`,
        );
        process.exit(1);
      }
      console.error(error);
      process.exit(1);
    },
  );
}
