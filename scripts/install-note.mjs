#!/usr/bin/env node
// Run by `npm install` (the root's postinstall). When npm itself ran on a Node below the
// packages' floor (a system Node 20, say), npm printed one EBADENGINE warning per package above:
// say, as the last lines of the install, what they are about and how to install without them.
// Silent otherwise. Plain JavaScript that any Node runs.
import { readFileSync } from 'node:fs';

const json = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));

const agent = process.env.npm_config_user_agent ?? '';
const npmNode = /\bnode\/v(\d+)\.(\d+)\.(\d+)/.exec(agent);
const floor = json('../package.json').engines.node;
let pinned = 'Node 24';
try {
  pinned = `Node ${json('../node_modules/node/package.json').version}`;
} catch {
  // not installed (yet)
}
const [, major, minor] = /(\d+)\.(\d+)/.exec(floor) ?? [];
if (npmNode) {
  const [a, b] = [Number(npmNode[1]), Number(npmNode[2])];
  if (a < Number(major) || (a === Number(major) && b < Number(minor))) {
    console.log(
      [
        `note: npm ran on Node ${npmNode.slice(1).join('.')}, below the packages' floor (${floor}): the EBADENGINE`,
        `  warnings above are about that Node. Nothing here runs on it: npx, npm run and npm test use the`,
        `  pinned ${pinned} (node_modules/.bin/node). To install without them: npx -y -p node@24 npm install`,
      ].join('\n'),
    );
  }
}
