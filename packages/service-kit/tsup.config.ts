import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';

/**
 * `npm-signals` and `settings` are entries of their own: the CLI loads them at start without
 * Fastify.
 */
export default defineConfig(
  packageConfig({ index: 'src/index.ts', 'npm-signals': 'src/npm-signals.ts', settings: 'src/settings.ts' }),
);
