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
import { describeMetrics, runServiceBin } from '@tensormine/service-kit';
import { createTerminal } from './app.js';
import { SECRET_SETTINGS, TERMINAL_SETTINGS } from './config.js';
import { pubkeyToWallet } from './wallet.js';

runServiceBin({
  name: 'tensormine-terminal',
  what: 'the terminal backend',
  specs: TERMINAL_SETTINGS,
  configEnv: 'TERMINAL_CONFIG',
  secrets: SECRET_SETTINGS,
  hideDefaults: ['dataDir'],
  async start(input) {
    const terminal = await createTerminal({
      ...input.flags,
      ...(input.env ? { env: input.env } : {}),
      ...(input.configFile ? { configFile: input.configFile } : {}),
    });
    const url = await terminal.listen();
    const { config } = terminal;
    void terminal.resumePendingClaims();
    return {
      lines: [
        `tensormine terminal backend listening on ${url}`,
        `  validator ${config.validatorUrl}; public URL ${config.publicUrl}`,
        `  data: ${config.dataDir === ':memory:' ? 'in memory (nothing is kept)' : config.dataDir}`,
        terminal.treasury
          ? `  treasury ${pubkeyToWallet(terminal.treasury)} (${terminal.treasury}; key loaded, never shown)`
          : '  no treasury key: claims and purchases are off (REWARD_WALLET_PRIVATE_KEY or REWARD_WALLET_PRIVATE_KEY_FILE)',
        // Checked now: a package the treasury cannot pay is said at start, not at the first claim.
        ...(await terminal.describeWelcome()),
        ...(config.oauthClientId ? [] : ['  no OAuth client (X_CLIENT_ID): sign-in is off']),
        `  ${describeMetrics(config, url, terminal.app.metrics.listenerUrl)}`,
      ],
      close: () => terminal.close(),
    };
  },
});
