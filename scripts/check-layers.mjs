#!/usr/bin/env node
// Fails when a package reaches above its layer (docs/architecture.md, "The shape"). The layers,
// bottom up, are LAYERS below; a workspace package that is in none fails until it is placed.
//   - What a package runs (src/ but its *.test.ts, bin/, public/) imports only packages of the
//     layers below its own, and only those in its `dependencies` or `peerDependencies` (a
//     devDependency is not installed for its users, and a bundler would copy it in).
//   - Its tests, benches, scripts and configs may also import a package of its own layer (the
//     SDK's tests run against a validator), through a devDependency.
//   - package.json agrees: `dependencies`, `peerDependencies` and `optionalDependencies` name
//     lower layers only, `devDependencies` lower or the same layer.
// Imports are every import, re-export and dynamic import, type-only ones included. examples/
// sits above everything. Run by `npm run check:layers` and CI. Exit 1 with what is wrong.
import { relative, sep } from 'node:path';
import {
  importsOf,
  rel,
  sourceFiles,
  workspacePackageOf,
  workspacePackages,
} from './lib/workspace-imports.mjs';

const LAYERS = [
  ['@tensormine/wasm-gen'],
  ['@tensormine/protocol'],
  ['@tensormine/service-kit'],
  ['@tensormine/client', '@tensormine/validator', '@tensormine/miner'],
  [
    '@tensormine/serial',
    '@tensormine/status-proxy',
    '@tensormine/hub',
    '@tensormine/terminal',
    '@tensormine/firmware-sim',
  ],
  ['@tensormine/cli'],
];
const EXAMPLES = 'examples';
const layerOf = new Map(LAYERS.flatMap((names, layer) => names.map((name) => [name, layer])));
layerOf.set(EXAMPLES, LAYERS.length);

const problems = [];
for (const name of workspacePackages.keys()) {
  if (!layerOf.has(name))
    problems.push(
      `${name}: in no layer: place it in LAYERS (scripts/check-layers.mjs) and docs/architecture.md`,
    );
}
for (const name of LAYERS.flat()) {
  if (!workspacePackages.has(name))
    problems.push(`scripts/check-layers.mjs: LAYERS names ${name}, which is not a workspace package`);
}

const RUNTIME_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'];
for (const [name, { manifest }] of workspacePackages) {
  const own = layerOf.get(name);
  if (own === undefined) continue;
  for (const field of [...RUNTIME_FIELDS, 'devDependencies']) {
    for (const dep of Object.keys(manifest[field] ?? {})) {
      const layer = layerOf.get(dep);
      if (layer === undefined) continue;
      const ok = field === 'devDependencies' ? layer <= own : layer < own;
      if (!ok)
        problems.push(
          `${name}: package.json ${field} names ${dep}, a layer ${layer > own ? 'above' : 'beside'} it`,
        );
    }
  }
}

/** The package a file belongs to (its directory holds the package.json), or examples/. */
const packageDirs = [...workspacePackages].map(([name, { dir }]) => ({ name, dir: dir + sep }));
function ownerOf(file) {
  const owner = packageDirs.find((p) => file.startsWith(p.dir));
  if (owner !== undefined) return { name: owner.name, path: relative(owner.dir, file).split(sep).join('/') };
  return rel(file).startsWith(`${EXAMPLES}/`) ? { name: EXAMPLES, path: rel(file) } : undefined;
}

const runs = (path) =>
  (path.startsWith('src/') && !/\.test\.[cm]?[jt]sx?$/.test(path)) ||
  path.startsWith('bin/') ||
  path.startsWith('public/');

let files = 0;
for (const file of sourceFiles()) {
  const owner = ownerOf(file);
  if (owner === undefined) continue;
  files++;
  const own = layerOf.get(owner.name);
  if (own === undefined) continue;
  const manifest = workspacePackages.get(owner.name)?.manifest ?? {};
  const runtime = owner.name !== EXAMPLES && runs(owner.path);
  for (const specifier of importsOf(file)) {
    const dep = workspacePackageOf(specifier);
    if (dep === undefined || dep === owner.name) continue;
    const layer = layerOf.get(dep);
    if (layer === undefined) continue;
    if (runtime ? layer >= own : layer > own) {
      problems.push(
        `${rel(file)}: imports ${specifier}, a layer ${layer > own ? 'above' : 'beside'} ${owner.name}`,
      );
    } else if (runtime && !RUNTIME_FIELDS.some((field) => manifest[field]?.[dep] !== undefined)) {
      problems.push(
        `${rel(file)}: imports ${specifier} at run time, which is not in ${owner.name}'s dependencies`,
      );
    }
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(
  `every import of ${files} files goes down the layers (${LAYERS.length} layers, bottom up: ${LAYERS.map((l) => l.map((n) => n.replace('@tensormine/', '')).join(' ')).join(' < ')})`,
);
