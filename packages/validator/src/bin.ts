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
import { runServiceBin } from '@tensormine/service-kit';
import { createValidator } from './app.js';
import { SETTINGS } from './config.js';
import { startupLines } from './startup.js';
import { redactDatabaseUrl } from './store/postgres.js';

runServiceBin({
  name: 'tensormine-validator',
  what: 'the validator node',
  specs: SETTINGS,
  configEnv: 'TENSORMINE_CONFIG',
  display: {
    adminToken: (token) => (token ? '(set)' : '(generated at start)'),
    // The URL without its password.
    databaseUrl: (url) => (url === undefined ? '(unset: node:sqlite in dataDir)' : redactDatabaseUrl(url)),
  },
  async start(input) {
    const validator = await createValidator({
      ...input.flags,
      ...(input.env ? { env: input.env } : {}),
      ...(input.configFile ? { configFile: input.configFile } : {}),
    });
    let url: string;
    try {
      url = await validator.listen();
    } catch (error) {
      await validator.close();
      throw error;
    }
    return {
      lines: startupLines(validator, url),
      close: () => validator.close(),
    };
  },
});
