import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';

/** undici is bundled (about 110 CommonJS files otherwise loaded one by one at every start). */
export default defineConfig(
  packageConfig(
    { index: 'src/index.ts', errors: 'src/errors.ts', signer: 'src/signer.ts' },
    { bundle: ['undici'], bundleCommonJs: true },
  ),
);
