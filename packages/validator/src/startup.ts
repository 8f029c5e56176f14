import type { Validator } from './app.js';
import { describeStorage } from './store/open.js';

/** What a started node says about itself (`tensormine-validator start`, `miner validator start`). */
export function startupLines(validator: Validator, url: string): string[] {
  const { config, context, adminTokenFile } = validator;
  return [
    `tensormine validator ${context.nodeId} listening on ${url}`,
    `  data: ${describeStorage(context.storage.location)}`,
    adminTokenFile
      ? `  admin token: in ${adminTokenFile} (mode 0600)`
      : config.adminToken
        ? '  admin token: from the configuration'
        : '  admin token: generated for this process only (in-memory data directory)',
    `  v4.0 difficulty ${context.runtime.difficulty}, hexchain ${config.hexchain ? 'on' : 'off'}; OpenAPI at ${url}/openapi.json`,
  ];
}
