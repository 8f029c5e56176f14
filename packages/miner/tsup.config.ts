import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';
import { copyNativeSources } from './src/kernels/native/build.ts';

/**
 * The worker entry is its own file: the engine starts it with `new Worker(dist/worker.js)`.
 * The native kernels' C sources go to dist/c: they are compiled on the user's machine on first
 * use (src/kernels/native/build.ts), never shipped prebuilt.
 */
export default defineConfig({
  ...packageConfig({ index: 'src/index.ts', worker: 'src/worker/entry.ts' }),
  onSuccess: async () => {
    copyNativeSources(
      fileURLToPath(new URL('./dist/', import.meta.url)),
      fileURLToPath(new URL('../../firmware-sim/', import.meta.url)),
    );
  },
});
