#!/usr/bin/env node
// The `miner` command. Plain JavaScript on purpose: it must start on any Node that npm runs it
// with. It behaves the same before and after `npm run build`:
//
//   * On a Node new enough (MIN_NODE), the miner runs in THIS process: dist/cli.js when it is
//     current (built, and no source of this package or of a workspace package it loads is newer
//     than its build: `npm install` builds them, scripts/install-build.mjs), else src/cli.ts
//     through tsx (registered in process, with the @tensormine/source export
//     condition so the workspace packages load from their TypeScript sources too). One
//     process, so a signal to it is a signal to the miner.
//   * On an older Node (e.g. a system Node 20), it re-executes itself on the repository's
//     pinned Node (the `node` devDependency, node_modules/node/bin/node found upwards): it
//     forwards every stop signal to the child, exits with the child's status (or its signal),
//     and the child stops cleanly when this process dies (an IPC channel it watches), so no
//     orphan keeps mining.
//
// The built files run with Node's compile cache ($XDG_CACHE_HOME/tensormine/node-compile-cache,
// default ~/.cache/...): V8's compiled code of the build is kept between starts, which saves
// part of loading it (docs/benchmarks.md, the miner's start). NODE_DISABLE_COMPILE_CACHE=1
// turns it off; a cache that cannot be written is skipped silently.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { builtAndCurrent } from './current-build.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const dist = join(root, 'dist', 'cli.js');
const source = join(root, 'src', 'cli.ts');
const MIN_NODE = [22, 19];
/** Signals passed on to the child; the child stops cleanly on INT, TERM, HUP and QUIT. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'SIGWINCH'];

function nodeAtLeast(version, [major, minor]) {
  const [a, b] = version.replace(/^v/, '').split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

/** The pinned Node of the repository (node_modules/node/bin/node, found upwards), if any. */
function pinnedNode() {
  for (let dir = root; ; dir = dirname(dir)) {
    const candidate = join(
      dir,
      'node_modules',
      'node',
      'bin',
      process.platform === 'win32' ? 'node.exe' : 'node',
    );
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

function fail(message) {
  console.error(`miner: ${message}`);
  process.exit(1);
}

function tsxEntry() {
  try {
    return import.meta.resolve('tsx/esm');
  } catch {
    return fail('not built (no dist/cli.js) and tsx is not installed: run npm install, or npm run build');
  }
}

/** Where the build's compile cache is kept; undefined when no home can be found. */
function compileCacheDir() {
  try {
    const base = process.env.XDG_CACHE_HOME || join(process.env.HOME || homedir(), '.cache');
    return join(base, 'tensormine', 'node-compile-cache');
  } catch {
    return undefined;
  }
}

/** Node's compile cache for the build (Node 22.1+; older Nodes and failures: nothing). */
function enableCompileCache(module) {
  const dir = compileCacheDir();
  if (typeof module.enableCompileCache !== 'function' || dir === undefined) return;
  try {
    module.enableCompileCache(dir);
  } catch {
    // A read-only file system: start without the cache (Node reports failures, never throws).
  }
}

// `miner --version` alone: the package's version, what commander would print, without loading
// the miner at all (TENSORMINE_MINER_SOURCE=1 takes the whole way, through the sources).
const argv = process.argv.slice(2);
const versionOnly = argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V');
if (versionOnly && process.env.TENSORMINE_MINER_SOURCE !== '1') {
  process.stdout.write(`${JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version}\n`);
  process.exit(0);
}

// TENSORMINE_MINER_SOURCE=1 runs the sources whatever the build; =0 runs the build and refuses
// one that is missing or older than a source (benches, a check that npm install built it).
const choice = process.env.TENSORMINE_MINER_SOURCE;
const built = choice !== '1' && builtAndCurrent(root, join('dist', 'cli.js'));
if (choice === '0' && !built)
  fail('TENSORMINE_MINER_SOURCE=0, but the build is missing or older than a source: npm run build');
// TENSORMINE_MINER_SPAWN=1 takes the second path on any Node (tests of the wrapper use it).
const forceSpawn = process.env.TENSORMINE_MINER_SPAWN === '1';
if (nodeAtLeast(process.versions.node, MIN_NODE) && !forceSpawn) {
  if (built) {
    enableCompileCache(await import('node:module'));
    await import(pathToFileURL(dist).href);
  } else {
    // tsx in this process: TypeScript and JSX (react-jsx, for the Ink TUI, from this package's
    // tsconfig), and the workspace packages from their sources.
    tsxEntry();
    const { register } = await import('tsx/esm/api');
    const { register: registerHooks } = await import('node:module');
    register({ tsconfig: realpathSync(join(root, 'tsconfig.json')) });
    registerHooks(
      `data:text/javascript,${encodeURIComponent(
        "export async function resolve(specifier, context, next) { return next(specifier, { ...context, conditions: [...new Set([...(context.conditions ?? []), '@tensormine/source'])] }); }",
      )}`,
    );
    await import(pathToFileURL(source).href);
  }
} else {
  const node = pinnedNode() ?? (forceSpawn ? process.execPath : undefined);
  if (node === undefined || (node === process.execPath && !forceSpawn)) {
    fail(`needs Node ${MIN_NODE.join('.')} or newer, this is ${process.versions.node}`);
  }
  const args = built ? [dist] : ['--conditions=@tensormine/source', '--import', tsxEntry(), source];
  const { TENSORMINE_MINER_SPAWN: _, ...env } = process.env;
  const child = spawn(node, [...args, ...process.argv.slice(2)], {
    // fd 3: an IPC channel; the child stops cleanly when it closes (this process died).
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: {
      ...env,
      TENSORMINE_MINER_WRAPPED: '1',
      // The build on the pinned Node: the same compile cache (the variable the child's Node reads).
      ...(built && env.NODE_COMPILE_CACHE === undefined && compileCacheDir() !== undefined
        ? { NODE_COMPILE_CACHE: compileCacheDir() }
        : {}),
      // tsx takes JSX settings (react-jsx, for the Ink TUI) from this package's tsconfig.
      TSX_TSCONFIG_PATH: realpathSync(join(root, 'tsconfig.json')),
    },
  });
  // Every signal goes on to the child, a terminal's Ctrl+C included: the terminal sends it to
  // both processes (one process group), and the child takes a repeat within a second as one.
  for (const signal of FORWARDED) {
    if (process.platform === 'win32' && signal !== 'SIGINT' && signal !== 'SIGTERM') continue;
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  child.on('error', (error) => fail(`cannot start ${node}: ${error.message}`));
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const s of FORWARDED) process.removeAllListeners(s);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
