#!/usr/bin/env node
/**
 * tensormine-validator: runs a local validator node.
 *
 *   tensormine-validator start [--port 8420] [--data-dir DIR] [--config FILE] [--difficulty 6] ...
 *   tensormine-validator config [--json]     the effective configuration and where each value came from
 *
 * Every setting is a flag (kebab-case), an environment variable (TENSORMINE_*) and a key of
 * the JSON config file; precedence: flags > environment > config file > defaults.
 */
import { parseArgs } from 'node:util';
import { createValidator } from './app.js';
import {
  ConfigError,
  resolveConfig,
  SETTING_NAMES,
  SETTINGS,
  type SettingName,
  settingFlag,
} from './config.js';
import { stopWithLauncher } from './launcher.js';
import { describeStorage } from './store/open.js';
import { redactDatabaseUrl } from './store/postgres.js';

function usage(): string {
  const rows = SETTING_NAMES.map((name) => {
    const s = SETTINGS[name];
    const def = s.default();
    const shown = name === 'adminToken' ? '(generated)' : def === undefined ? '' : String(def);
    return `  --${settingFlag(name).padEnd(28)} ${s.description}\n  ${''.padEnd(30)} env ${s.env}${shown ? `, default ${shown}` : ''}`;
  });
  return [
    'usage: tensormine-validator <command> [options]',
    '',
    'commands:',
    '  start     run the validator node',
    '  config    print the effective configuration and the source of each value',
    '',
    'options:',
    '  --config FILE                  a JSON file of settings (keys as below, camelCase); env TENSORMINE_CONFIG',
    '  --json                         (config) machine-readable output',
    ...rows,
  ].join('\n');
}

function parse(argv: string[]) {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    config: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean' },
  };
  for (const name of SETTING_NAMES) options[settingFlag(name)] = { type: 'string' };
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const flags: Partial<Record<SettingName, unknown>> = {};
  for (const name of SETTING_NAMES) {
    const v = values[settingFlag(name)];
    if (v !== undefined) flags[name] = v;
  }
  const configFile = (values.config as string | undefined) ?? process.env.TENSORMINE_CONFIG;
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
    console.error(`tensormine-validator: ${(error as Error).message}\n\n${usage()}`);
    return 2;
  }
  if (args.help || !args.command) {
    console.log(usage());
    return args.command || args.help ? 0 : 2;
  }
  if (args.command === 'config') {
    const { config, sources } = resolveConfig({
      flags: args.flags,
      env: process.env,
      ...(args.configFile ? { configFile: args.configFile } : {}),
    });
    const rows = SETTING_NAMES.map((name) => ({
      name,
      value:
        name === 'adminToken'
          ? config.adminToken
            ? '(set)'
            : '(generated at start)'
          : name === 'databaseUrl'
            ? config.databaseUrl === undefined
              ? '(unset: node:sqlite in dataDir)'
              : redactDatabaseUrl(config.databaseUrl)
            : String(config[name]),
      source: sources[name],
    }));
    if (args.json) console.log(JSON.stringify(rows, null, 2));
    else for (const r of rows) console.log(`${r.name.padEnd(24)} ${r.value.padEnd(48)} ${r.source}`);
    return 0;
  }
  if (args.command !== 'start') {
    console.error(`tensormine-validator: unknown command ${JSON.stringify(args.command)}\n\n${usage()}`);
    return 2;
  }
  const validator = await createValidator({
    ...args.flags,
    env: process.env,
    ...(args.configFile ? { configFile: args.configFile } : {}),
  });
  const url = await validator.listen();
  const { config } = validator;
  console.log(`tensormine validator ${validator.context.nodeId} listening on ${url}`);
  console.log(`  data: ${describeStorage(validator.context.storage.location)}`);
  if (validator.adminTokenFile) console.log(`  admin token: in ${validator.adminTokenFile} (mode 0600)`);
  else if (config.adminToken) console.log('  admin token: from the configuration');
  else console.log('  admin token: generated for this process only (in-memory data directory)');
  console.log(
    `  v4.0 difficulty ${validator.context.runtime.difficulty}, hexchain ${config.hexchain ? 'on' : 'off'}; OpenAPI at ${url}/openapi.json`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: closing (finishing requests in flight)`);
    await validator.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // Under `npm start`: npm's own SIGINT and SIGTERM stop at its shell (launcher.ts).
  stopWithLauncher((reason) => void stop(reason));
  return -1;
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof ConfigError) {
      console.error(`tensormine-validator: ${error.message}`);
      process.exit(2);
    }
    const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
    if (e.code === 'EADDRINUSE') {
      console.error(
        `tensormine-validator: port ${e.port} on ${e.address} is already in use; pick another with --port`,
      );
      process.exit(1);
    }
    console.error(error);
    process.exit(1);
  },
);
