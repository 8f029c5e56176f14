#!/usr/bin/env node
/**
 * tensormine-terminal: runs the web terminal's backend.
 *
 *   tensormine-terminal start [--port 8440] [--validator-url URL] [--public-url URL] ...
 *   tensormine-terminal config [--json]     the effective configuration and where each value came from
 *
 * Every setting is a flag (kebab-case), an environment variable (the seed's names: X_CLIENT_ID,
 * REWARD_WALLET_PRIVATE_KEY, SOLANA_RPC_URL, VITE_API_BASE_URL, ...; TERMINAL_* for the others)
 * and a key of the JSON config file; precedence: flags > environment > config file > defaults.
 * Secrets (the treasury key, the OAuth client secret) are never printed.
 */
import { parseArgs } from 'node:util';
import { ConfigError, settingFlag, settingsUsage } from '@tensormine/validator';
import { createTerminal } from './app.js';
import {
  resolveTerminalConfig,
  SECRET_SETTINGS,
  TERMINAL_SETTING_NAMES,
  TERMINAL_SETTINGS,
  type TerminalSettingName,
} from './config.js';

function usage(): string {
  return [
    'usage: tensormine-terminal <command> [options]',
    '',
    'commands:',
    '  start     run the terminal backend',
    '  config    print the effective configuration and the source of each value (secrets hidden)',
    '',
    'options:',
    '  --config FILE                  a JSON file of settings (keys as below, camelCase); env TERMINAL_CONFIG',
    '  --json                         (config) machine-readable output',
    ...settingsUsage(TERMINAL_SETTINGS, ['dataDir']),
  ].join('\n');
}

function parse(argv: string[]) {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    config: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean' },
  };
  for (const name of TERMINAL_SETTING_NAMES) options[settingFlag(name)] = { type: 'string' };
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const flags: Partial<Record<TerminalSettingName, unknown>> = {};
  for (const name of TERMINAL_SETTING_NAMES) {
    const v = values[settingFlag(name)];
    if (v !== undefined) flags[name] = v;
  }
  const configFile = (values.config as string | undefined) ?? process.env.TERMINAL_CONFIG;
  return {
    command: positionals[0],
    flags,
    configFile,
    json: values.json === true,
    help: values.help === true,
  };
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(process.argv.slice(2));
  } catch (error) {
    console.error(`tensormine-terminal: ${(error as Error).message}\n\n${usage()}`);
    return 2;
  }
  if (args.help || !args.command) {
    console.log(usage());
    return args.command || args.help ? 0 : 2;
  }
  const source = { env: process.env, ...(args.configFile ? { configFile: args.configFile } : {}) };
  if (args.command === 'config') {
    const { config, sources } = resolveTerminalConfig({ flags: args.flags, ...source });
    const rows = TERMINAL_SETTING_NAMES.map((name) => {
      const v = config[name];
      const value = SECRET_SETTINGS.includes(name)
        ? v === undefined
          ? '(not set)'
          : '(set)'
        : String(v ?? '(not set)');
      return { name, env: TERMINAL_SETTINGS[name].env, value, source: sources[name] };
    });
    if (args.json) console.log(JSON.stringify(rows, null, 2));
    else
      for (const r of rows) console.log(`${r.name.padEnd(28)} ${r.value.padEnd(48)} ${r.source} (${r.env})`);
    return 0;
  }
  if (args.command !== 'start') {
    console.error(`tensormine-terminal: unknown command ${JSON.stringify(args.command)}\n\n${usage()}`);
    return 2;
  }
  const terminal = await createTerminal({ ...args.flags, ...source });
  const url = await terminal.listen();
  const { config } = terminal;
  console.log(`tensormine terminal backend listening on ${url}`);
  console.log(`  validator ${config.validatorUrl}; public URL ${config.publicUrl}`);
  console.log(`  data: ${config.dataDir === ':memory:' ? 'in memory (nothing is kept)' : config.dataDir}`);
  console.log(
    terminal.treasury
      ? `  treasury ${terminal.treasury} (key loaded; never shown)`
      : '  no treasury key: claims and purchases are off (REWARD_WALLET_PRIVATE_KEY or REWARD_WALLET_PRIVATE_KEY_FILE)',
  );
  if (!config.oauthClientId) console.log('  no OAuth client (X_CLIENT_ID): sign-in is off');
  void terminal.resumePendingClaims();
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: closing`);
    await terminal.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  return -1;
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof ConfigError) {
      console.error(`tensormine-terminal: ${error.message}`);
      process.exit(2);
    }
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      console.error('tensormine-terminal: the port is already in use; pick another with --port');
      process.exit(1);
    }
    console.error(error);
    process.exit(1);
  },
);
