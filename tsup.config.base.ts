import type { Options } from 'tsup';

/** The one tsup configuration every package builds with: ESM, declarations, Node 22. */
export function packageConfig(entry: Record<string, string>): Options {
  return {
    entry,
    format: ['esm'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node22',
    platform: 'node',
    splitting: true,
    // Keep 'node:' specifiers: node:sqlite (and future builtins) exist only under that name.
    removeNodeProtocol: false,
  };
}
