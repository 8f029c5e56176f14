#!/usr/bin/env node
// Run by `npm install` (the root's postinstall). When npm itself ran on a Node below the
// packages' floor (a system Node 20, say), npm printed one EBADENGINE warning per package above:
// say, as the last lines of the install, what they are about and how to install without them.
// Silent otherwise. Plain JavaScript that any Node runs.
//
// Which Node ran npm: npm_node_execpath, the binary npm runs on. Not npm_config_user_agent: an
// npm started by `npx -y -p node@24 npm install` inherits the outer npx's user agent (naming the
// system Node), so that note told people to run the very command they had just run.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const json = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));

/** The version of the Node that runs npm, e.g. "20.20.2"; undefined when it cannot be told. */
export function npmNodeVersion(env = process.env) {
  const execPath = env.npm_node_execpath;
  if (execPath) {
    if (execPath === process.execPath) return process.versions.node;
    try {
      return execFileSync(execPath, ['-p', 'process.versions.node'], {
        encoding: 'utf8',
        timeout: 10_000,
      }).trim();
    } catch {
      // fall back on the user agent
    }
  }
  return /\bnode\/v(\d+\.\d+\.\d+)/.exec(env.npm_config_user_agent ?? '')?.[1];
}

/** The note to print after an install whose npm ran on `version`; undefined: nothing to say. */
export function installNote(version, floor, pinned) {
  const [, major, minor] = /(\d+)\.(\d+)/.exec(floor) ?? [];
  const [a, b] = (version ?? '').split('.').map(Number);
  if (version === undefined || Number.isNaN(a)) return undefined;
  if (a > Number(major) || (a === Number(major) && b >= Number(minor))) return undefined;
  return [
    `note: npm ran on Node ${version}, below the packages' floor (${floor}): the EBADENGINE`,
    `  warnings above are about that Node. Nothing here runs on it: npx, npm run and npm test use the`,
    `  pinned ${pinned} (node_modules/.bin/node). To install without them: npx -y -p node@24 npm install`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const floor = json('../package.json').engines.node;
  let pinned = 'Node 24';
  try {
    pinned = `Node ${json('../node_modules/node/package.json').version}`;
  } catch {
    // not installed (yet)
  }
  const note = installNote(npmNodeVersion(), floor, pinned);
  if (note) console.log(note);
}
