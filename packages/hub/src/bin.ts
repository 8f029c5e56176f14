#!/usr/bin/env node
/**
 * tensormine-hub: runs the game hub.
 *
 *   tensormine-hub start [--port 8430] [--games-file FILE] [--ads-file FILE] [--public-url URL] ...
 *   tensormine-hub config [--json]     the effective configuration and where each value came from
 *
 * Every setting is a flag (kebab-case), an environment variable (HUB_*) and a key of the JSON
 * config file; precedence: flags > environment > config file > defaults.
 */
import { parseArgs } from 'node:util';
import { ConfigError, settingFlag, settingsUsage } from '@tensormine/validator';
import { createHub } from './app.js';
import { HUB_SETTING_NAMES, HUB_SETTINGS, type HubSettingName, resolveHubConfig } from './config.js';

function usage(): string {
  return [
    'usage: tensormine-hub <command> [options]',
    '',
    'commands:',
    '  start     run the hub',
    '  config    print the effective configuration and the source of each value',
    '',
    'options:',
    '  --config FILE                  a JSON file of settings (keys as below, camelCase); env HUB_CONFIG',
    '  --json                         (config) machine-readable output',
    ...settingsUsage(HUB_SETTINGS),
  ].join('\n');
}

function parse(argv: string[]) {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    config: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean' },
  };
  for (const name of HUB_SETTING_NAMES) options[settingFlag(name)] = { type: 'string' };
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const flags: Partial<Record<HubSettingName, unknown>> = {};
  for (const name of HUB_SETTING_NAMES) {
    const v = values[settingFlag(name)];
    if (v !== undefined) flags[name] = v;
  }
  const configFile = (values.config as string | undefined) ?? process.env.HUB_CONFIG;
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
    console.error(`tensormine-hub: ${(error as Error).message}\n\n${usage()}`);
    return 2;
  }
  if (args.help || !args.command) {
    console.log(usage());
    return args.command || args.help ? 0 : 2;
  }
  const source = { env: process.env, ...(args.configFile ? { configFile: args.configFile } : {}) };
  if (args.command === 'config') {
    const { config, sources } = resolveHubConfig({ flags: args.flags, ...source });
    const rows = HUB_SETTING_NAMES.map((name) => ({
      name,
      value: String(config[name]),
      source: sources[name],
    }));
    if (args.json) console.log(JSON.stringify(rows, null, 2));
    else for (const r of rows) console.log(`${r.name.padEnd(20)} ${r.value.padEnd(56)} ${r.source}`);
    return 0;
  }
  if (args.command !== 'start') {
    console.error(`tensormine-hub: unknown command ${JSON.stringify(args.command)}\n\n${usage()}`);
    return 2;
  }
  const hub = await createHub({ ...args.flags, ...source });
  const url = await hub.listen();
  console.log(`tensormine hub listening on ${url}`);
  console.log(
    `  ${hub.directory.games.length} games from ${hub.config.gamesFile}, ${hub.directory.ads.length} ads`,
  );
  console.log(`  public URL ${hub.config.publicUrl} (sitemap ${hub.config.publicUrl}/sitemap.xml)`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: closing`);
    await hub.close();
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
      console.error(`tensormine-hub: ${error.message}`);
      process.exit(2);
    }
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      console.error(`tensormine-hub: the port is already in use; pick another with --port`);
      process.exit(1);
    }
    console.error(error);
    process.exit(1);
  },
);
