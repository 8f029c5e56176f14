#!/usr/bin/env node
// The `miner` command. Plain JavaScript on purpose: it must start on any Node that npm runs it
// with. It behaves the same before and after `npm run build`:
//
//   * On a Node new enough (MIN_NODE), the miner runs in THIS process: dist/cli.js once built,
//     else src/cli.ts through tsx (registered in process, with the @tensormine/source export
//     condition so the workspace packages load from their TypeScript sources too). One
//     process, so a signal to it is a signal to the miner.
//   * On an older Node (e.g. a system Node 20), it re-executes itself on the repository's
//     pinned Node (the `node` devDependency, node_modules/node/bin/node found upwards): it
//     forwards every stop signal to the child, exits with the child's status (or its signal),
//     and the child stops cleanly when this process dies (an IPC channel it watches), so no
//     orphan keeps mining.
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

const built = existsSync(dist);
// TENSORMINE_MINER_SPAWN=1 takes the second path on any Node (tests of the wrapper use it).
const forceSpawn = process.env.TENSORMINE_MINER_SPAWN === '1';
if (nodeAtLeast(process.versions.node, MIN_NODE) && !forceSpawn) {
  if (built) {
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
