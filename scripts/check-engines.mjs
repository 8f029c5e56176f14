#!/usr/bin/env node
// Checks that the Node versions the repository names agree, so that `npm install` on a Node at
// the floor prints no EBADENGINE warning: every workspace package (and the root) declares the
// same `engines.node` floor; the bin's MIN_NODE is that floor; the pinned Node (the `node`
// devDependency) and every package in package-lock.json that declares `engines.node` accept the
// lowest Node of the floor. Run by `npm run check:engines` and CI. Exit 1 with what disagrees.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const json = (path) => JSON.parse(readFileSync(join(root, path), 'utf8'));
const problems = [];

const rootPkg = json('package.json');
const floor = rootPkg.engines?.node;
if (!floor || !semver.validRange(floor)) problems.push(`package.json: engines.node is not a range: ${floor}`);
const lowest = floor ? semver.minVersion(floor)?.version : undefined;

const lock = json('package-lock.json');
const workspaces = Object.entries(lock.packages).filter(
  ([path]) => path !== '' && !path.includes('node_modules/'),
);
for (const [path] of workspaces) {
  const declared = json(join(path, 'package.json')).engines?.node;
  if (declared !== floor)
    problems.push(`${path}/package.json: engines.node ${declared}, the root says ${floor}`);
}

const bin = readFileSync(join(root, 'packages/cli/bin/miner.js'), 'utf8');
const minNode = /const MIN_NODE = \[(\d+), (\d+)\];/.exec(bin);
if (!minNode || `${minNode[1]}.${minNode[2]}.0` !== lowest) {
  problems.push(`packages/cli/bin/miner.js: MIN_NODE ${minNode?.slice(1).join('.')}, the floor is ${lowest}`);
}

const pinned = rootPkg.devDependencies?.node;
const pinnedLowest = pinned ? semver.minVersion(pinned)?.version : undefined;
if (!pinnedLowest || !lowest || !semver.satisfies(pinnedLowest, `>=${lowest}`)) {
  problems.push(`package.json: the pinned Node ${pinned} is below the floor ${floor}`);
}

if (lowest) {
  for (const [path, entry] of Object.entries(lock.packages)) {
    const wanted = entry.engines?.node;
    if (!path.includes('node_modules/') || entry.optional || typeof wanted !== 'string') continue;
    if (!semver.validRange(wanted)) continue; // not a range npm could check either
    if (!semver.satisfies(lowest, wanted, { includePrerelease: true })) {
      problems.push(`${path}: engines.node ${wanted} does not accept Node ${lowest} (the floor)`);
    }
  }
}

if (problems.length > 0) {
  console.error(`Node versions disagree (the floor is ${floor}):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `engines: every package accepts Node ${lowest} (the floor ${floor}); the pinned Node is ${pinned}`,
);
