import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';

/** The worker entry is its own file: the engine starts it with `new Worker(dist/worker.js)`. */
export default defineConfig(packageConfig({ index: 'src/index.ts', worker: 'src/worker/entry.ts' }));
