import { defineConfig } from 'vitest/config';

/** One root config; each package is a project (see vitest.shared.ts). */
export default defineConfig({
  test: {
    projects: ['packages/*', 'firmware-sim', 'examples'],
  },
});
