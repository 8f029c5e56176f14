import type { Options } from 'tsup';

/**
 * The one tsup configuration every package builds with: ESM, declarations, Node 22.
 * TypeBox is bundled into each build (tree-shaken, one file per chunk): its ESM build is about 700
 * files, and resolving and loading them cost a started miner about 0.3 s of CPU
 * (docs/benchmarks.md, the miner's start). Copies in two packages work together: a TypeBox schema
 * is plain data (its kind is the `~kind` property). `extra` adds packages to bundle (the client
 * bundles undici, a CommonJS package: `bundleCommonJs`).
 * TENSORMINE_BUILD_DTS=0 leaves the declarations out: the build `npm install` makes so that the
 * miner starts fast (scripts/install-build.mjs) needs only the JavaScript, and the declarations
 * are most of a build's time; `npm run build` makes them (turbo keeps the two builds apart).
 */
export function packageConfig(
  entry: Record<string, string>,
  extra: { readonly bundle?: readonly string[]; readonly bundleCommonJs?: boolean } = {},
): Options {
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
    noExternal: ['typebox', ...(extra.bundle ?? [])],
    // A CommonJS package bundled into ESM calls require() (for node: builtins): give it one.
    ...(extra.bundleCommonJs
      ? {
          banner: {
            js: "import { createRequire as __tensormineCreateRequire } from 'node:module'; const require = __tensormineCreateRequire(import.meta.url);",
          },
        }
      : {}),
  };
}
