import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROCESS_START_TIMEOUT_MS } from '../../../../test-support/timeouts.ts';

/**
 * Validator processes (the real bin, `src/bin.ts start`) for cluster tests and benches: each
 * with its own data directory (admin token, node id), on a database URL (PostgreSQL) or its
 * data directory's SQLite file, on a free port of 127.0.0.1. `stopNodes()` ends every process
 * still running and removes the directories.
 */

const PACKAGE_DIR = join(import.meta.dirname, '..', '..');
const running = new Set<Node>();

/** The admin token of every test node (the same on all: behind a load balancer any may answer). */
export const NODE_ADMIN_TOKEN = 'cluster-test-admin-token-0123456789';

export interface Node {
  readonly nodeId: string;
  readonly url: string;
  readonly child: ChildProcess;
  readonly dataDir: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** What the process wrote (the last 8 KB), for failure messages. */
  output(): string;
  /** SIGKILL: no clean stop, no last heartbeat. */
  kill9(): Promise<void>;
  /** SIGTERM, then waits. */
  stop(): Promise<void>;
}

export interface StartNodeOptions {
  readonly nodeId: string;
  /** PostgreSQL URL; without it the node uses SQLite in its data directory. */
  readonly databaseUrl?: string;
  /** Extra TENSORMINE_* variables. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * `source` (default): `src/bin.ts` under tsx; `built`: `dist/bin.js` under plain Node, as an
   * operator runs it (`npm run build` first), for start times and memory without tsx's compiler.
   * A test passes what `builtEntry('validator')` (test-support/services.ts) answers: the build,
   * made once per run, while it is current, else the sources.
   */
  readonly entry?: 'source' | 'built';
  /** Node options before the entry (e.g. `--expose-gc`). */
  readonly nodeOptions?: readonly string[];
}

export async function startNode(options: StartNodeOptions): Promise<Node> {
  const dataDir = mkdtempSync(join(tmpdir(), `tm-node-${options.nodeId}-`));
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeOptions ?? []),
      ...(options.entry === 'built'
        ? ['dist/bin.js']
        : ['--conditions=@tensormine/source', '--import', 'tsx', 'src/bin.ts']),
      'start',
      '--port',
      '0',
    ],
    {
      cwd: PACKAGE_DIR,
      env: {
        ...process.env,
        TENSORMINE_DATA_DIR: dataDir,
        TENSORMINE_NODE_ID: options.nodeId,
        TENSORMINE_ADMIN_TOKEN: NODE_ADMIN_TOKEN,
        ...(options.databaseUrl === undefined ? {} : { TENSORMINE_DATABASE_URL: options.databaseUrl }),
        TENSORMINE_LOG_LEVEL: 'warn',
        TENSORMINE_RATE_LIMIT_PER_SECOND: '1000000',
        TENSORMINE_RATE_LIMIT_BURST: '1000000',
        TENSORMINE_KEY_RATE_LIMIT_PER_SECOND: '1000000',
        TENSORMINE_KEY_RATE_LIMIT_BURST: '1000000',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-8000);
  };
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${options.nodeId} did not start in ${PROCESS_START_TIMEOUT_MS} ms: ${out}`));
    }, PROCESS_START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      keep(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`node ${options.nodeId} exited (${code ?? signal}) before listening: ${out}`));
    });
  });
  const node: Node = {
    nodeId: options.nodeId,
    url,
    child,
    dataDir,
    exited,
    output: () => out,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
  running.add(node);
  return node;
}

/** Ends every node still running (SIGKILL) and removes their data directories. */
export async function stopNodes(): Promise<void> {
  const nodes = [...running];
  running.clear();
  await Promise.all(
    nodes.map(async (node) => {
      if (node.child.exitCode === null && node.child.signalCode === null) await node.kill9();
      rmSync(node.dataDir, { recursive: true, force: true });
    }),
  );
}
