import type { Options } from 'tsup';

/**
 * The one tsup configuration every package builds with: ESM, declarations, Node 22.
 * TENSORMINE_BUILD_DTS=0 leaves the declarations out: the build `npm install` makes so that the
 * miner starts fast (scripts/install-build.mjs) needs only the JavaScript, and the declarations
 * are most of a build's time; `npm run build` makes them (turbo keeps the two builds apart).
 */
export function packageConfig(entry: Record<string, string>): Options {
  return {
    entry,
    format: ['esm'],
    dts: process.env.TENSORMINE_BUILD_DTS !== '0',
    sourcemap: true,
    clean: true,
    target: 'node22',
    platform: 'node',
    splitting: true,
    // Keep 'node:' specifiers: node:sqlite (and future builtins) exist only under that name.
    removeNodeProtocol: false,
  };
}
