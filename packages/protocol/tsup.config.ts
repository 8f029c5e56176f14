import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';

/** `sha256-words` is its own entry: the miner's kernel workers load it without the rest of the protocol. */

export default defineConfig(packageConfig({ index: 'src/index.ts', 'sha256-words': 'src/sha256-words.ts' }));
