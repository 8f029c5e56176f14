#!/usr/bin/env node
/**
 * tensormine-hub: runs the game hub.
 *
 *   tensormine-hub start [--port 8450] [--games-file FILE] [--ads-file FILE] [--public-url URL] ...
 *   tensormine-hub config [--json]     the effective configuration and where each value came from
 *
 * Every setting is a flag (kebab-case), an environment variable (HUB_*) and a key of the JSON
 * config file; precedence: flags > environment > config file > defaults.
 */
import { describeMetrics, runServiceBin } from '@tensormine/service-kit';
import { createHub } from './app.js';
import { HUB_SETTINGS } from './config.js';

runServiceBin({
  name: 'tensormine-hub',
  what: 'the hub',
  specs: HUB_SETTINGS,
  configEnv: 'HUB_CONFIG',
  secrets: ['metricsToken'],
  hideDefaults: ['gamesFile', 'staticDir'],
  async start(input) {
    const hub = await createHub({
      ...input.flags,
      ...(input.env ? { env: input.env } : {}),
      ...(input.configFile ? { configFile: input.configFile } : {}),
    });
    const url = await hub.listen();
    return {
      lines: [
        `tensormine hub listening on ${url}`,
        `  ${hub.directory.games.length} games from ${hub.config.gamesFile}, ${hub.directory.ads.length} ads`,
        hub.config.publicUrl
          ? `  public URL ${hub.publicUrl()} (sitemap ${hub.publicUrl()}/sitemap.xml)`
          : `  sitemap ${hub.publicUrl()}/sitemap.xml (behind a proxy, give the address people use with --public-url)`,
        `  ${describeMetrics(hub.config, url, hub.app.metrics.listenerUrl)}`,
      ],
      close: () => hub.close(),
    };
  },
});
