// The workspace's sources and what they import, for the checks on the shape of the import
// graph (scripts/check-cycles.mjs, scripts/check-layers.mjs): every TypeScript and JavaScript
// source of packages/, firmware-sim/ and examples/ (not node_modules, not dist, not .d.ts), its
// imports, re-exports and dynamic imports (type-only ones included), and the file or workspace
// package each specifier names.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SCANNED = ['packages', 'firmware-sim', 'examples'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage', '.turbo']);
const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs'];

/** A path relative to the repository's root, with forward slashes. */
export const rel = (path) => relative(root, path).split(sep).join('/');

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    if (SKIPPED_DIRS.has(name) || name.startsWith('.')) continue;
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) yield* walk(path);
    else if (EXTENSIONS.some((e) => name.endsWith(e)) && !name.endsWith('.d.ts')) yield path;
  }
}

/** Every scanned source file (absolute paths). */
export function* sourceFiles() {
  for (const dir of SCANNED) if (existsSync(join(root, dir))) yield* walk(join(root, dir));
}

/** The specifiers a file imports, re-exports or imports dynamically, type-only ones included. */
export function importsOf(file) {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

/** The workspace packages: name -> { dir, manifest }. */
export const workspacePackages = new Map();
for (const dir of ['packages', 'firmware-sim']) {
  const base = join(root, dir);
  const pkgDirs = dir === 'packages' ? readdirSync(base).map((n) => join(base, n)) : [base];
  for (const pkgDir of pkgDirs) {
    const file = join(pkgDir, 'package.json');
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    workspacePackages.set(manifest.name, { dir: pkgDir, manifest });
  }
}

/** `@tensormine/<name>[/subpath]` -> the source file its `@tensormine/source` export names. */
const workspaceExports = new Map();
for (const [name, { dir, manifest }] of workspacePackages) {
  const exports = typeof manifest.exports === 'object' && manifest.exports !== null ? manifest.exports : {};
  for (const [subpath, target] of Object.entries(exports)) {
    const source = typeof target === 'object' && target !== null ? target['@tensormine/source'] : undefined;
    if (typeof source !== 'string') continue;
    const specifier = subpath === '.' ? name : `${name}/${subpath.replace(/^\.\//, '')}`;
    workspaceExports.set(specifier, resolve(dir, source));
  }
}

/** The workspace package a bare specifier names (`@tensormine/x/sub` -> `@tensormine/x`), if any. */
export function workspacePackageOf(specifier) {
  if (specifier.startsWith('.')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return workspacePackages.has(name) ? name : undefined;
}

/** The file a specifier names, or undefined for a package outside the workspace. */
export function resolveSpecifier(from, specifier) {
  if (specifier.startsWith('.')) {
    const target = resolve(dirname(from), specifier);
    const candidates = [
      target,
      target.replace(/\.(m|c)?js$/, '.$1ts'),
      target.replace(/\.js$/, '.tsx'),
      ...EXTENSIONS.map((e) => target + e),
      ...EXTENSIONS.map((e) => join(target, `index${e}`)),
    ];
    return candidates.find((c) => existsSync(c) && statSync(c).isFile());
  }
  return workspaceExports.get(specifier);
}
