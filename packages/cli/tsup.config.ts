import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';

/** `cli` is what bin/miner.js imports once built; `index` is the programmatic entry (`run`). */
export default defineConfig(packageConfig({ index: 'src/index.ts', cli: 'src/cli.ts' }));
