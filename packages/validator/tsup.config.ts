import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';

export default defineConfig(packageConfig({ index: 'src/index.ts', bin: 'src/bin.ts' }));
