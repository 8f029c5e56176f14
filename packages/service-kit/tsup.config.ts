import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';

/**
 * `npm-signals`, `settings` and `metrics` are entries of their own: the CLI and the miner load
 * them without Fastify.
 */
export default defineConfig(
  packageConfig({
    index: 'src/index.ts',
    'npm-signals': 'src/npm-signals.ts',
    settings: 'src/settings.ts',
    metrics: 'src/metrics.ts',
  }),
);
