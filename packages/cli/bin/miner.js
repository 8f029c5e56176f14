#!/usr/bin/env node
// The `miner` command. Built (dist/cli.js exists): runs it in this process. From a fresh
// checkout (npm install, no build): runs src/cli.ts on the repository's pinned Node (the
// `node` devDependency) through tsx, with the @tensormine/source export condition so that the
// workspace packages load from their TypeScript sources too. Plain JavaScript on purpose: it
// must start on any Node that npm runs it with.
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const dist = join(root, 'dist', 'cli.js');
const MIN_NODE = [22, 19];

function nodeAtLeast(version, [major, minor]) {
  const [a, b] = version.split('.').map(Number);
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

if (existsSync(dist)) {
  if (!nodeAtLeast(process.versions.node, MIN_NODE)) {
    console.error(`miner: needs Node ${MIN_NODE.join('.')} or newer, this is ${process.versions.node}`);
    process.exit(1);
  }
  await import(pathToFileURL(dist).href);
} else {
  const node = pinnedNode() ?? process.execPath;
  let tsx;
  try {
    tsx = import.meta.resolve('tsx/esm');
  } catch {
    console.error(
      'miner: not built (no dist/cli.js) and tsx is not installed: run npm install, or npm run build',
    );
    process.exit(1);
  }
  const child = spawn(
    node,
    [
      '--conditions=@tensormine/source',
      '--import',
      tsx,
      join(root, 'src', 'cli.ts'),
      ...process.argv.slice(2),
    ],
    {
      stdio: 'inherit',
      // tsx takes JSX settings (react-jsx, for the Ink TUI) from this package's tsconfig.
      env: { ...process.env, TSX_TSCONFIG_PATH: realpathSync(join(root, 'tsconfig.json')) },
    },
  );
  // Signals are passed on to the child, except a terminal's Ctrl+C: the terminal sends that to
  // both processes (one process group), and the child handles it.
  const terminal = process.stdin.isTTY || process.stdout.isTTY || process.stderr.isTTY;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (signal !== 'SIGINT' || !terminal) child.kill(signal);
    });
  }
  child.on('error', (error) => {
    console.error(`miner: cannot start ${node}: ${error.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
