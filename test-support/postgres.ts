import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chownSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';
import { SERVICE_START_TIMEOUT_MS } from './timeouts.ts';

/**
 * A real PostgreSQL server for tests, started from the machine's PostgreSQL binaries (Debian's
 * `postgresql` package, which `.ci/run` installs) in a fresh temporary data directory, on a
 * free TCP port of 127.0.0.1, with trust authentication for the user `postgres`, and stopped
 * (its directory removed) by `stop()`. `initdb` and `postgres` refuse to run as root: as root,
 * the server runs as the unprivileged user `nobody` (or `TENSORMINE_PG_USER`).
 *
 * Tests do not call `startPostgres` themselves: `testPostgres()` (test-support/services.ts)
 * hands every test file the one server of the test run, started on first use by the run's
 * global set-up, and each file creates its own databases on it. `startPostgres` is for a
 * test that needs a server of its own (one it stops or reconfigures) and for the benches.
 *
 * Where the binaries are: `TENSORMINE_PG_BIN` (a directory holding initdb and postgres), else
 * the newest `/usr/lib/postgresql/<major>/bin`, else `initdb` on the PATH. When none is found
 * or the server does not start, `startPostgres` rejects with the reason: tests that need it
 * fail loudly instead of skipping.
 *
 * Durability settings are off (fsync, full_page_writes): the server is disposable, and its
 * processes are never killed by the tests (validator processes are).
 *
 * The server also stops when the process that started it dies (a watchdog shell ends it when
 * its standard input closes), so a crashed test run leaves no server behind.
 */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (the maintenance database). */
  readonly url: string;
  readonly port: number;
  /**
   * Creates a database (a fresh unique name when `name` is omitted) and returns its URL: empty,
   * or a copy of `template` (a database nobody is connected to; copying a migrated template is
   * much faster than migrating each new database).
   */
  createDatabase(name?: string, options?: { readonly template?: string }): Promise<string>;
  /** Stops the server (fast shutdown) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Extra `-c name=value` settings. */
  readonly settings?: Readonly<Record<string, string | number>>;
  /** How long to wait for the server to accept connections. Default SERVICE_START_TIMEOUT_MS. */
  readonly startTimeoutMs?: number;
}

/**
 * A database name no other test file (in this process or another worker) uses: `prefix`, the
 * process id and a random part.
 */
export function uniqueDatabaseName(prefix = 'test'): string {
  return `${prefix}_${process.pid}_${randomBytes(5).toString('hex')}`;
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = findBinaries();
  const owner = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'tensormine-pg-'));
  try {
    if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
    const data = join(dir, 'data');
    await runChecked(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C'],
      dir,
      owner,
    );
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      try {
        const child = await startServer(bin, data, dir, port, owner, options);
        return server(child, dir, port);
      } catch (error) {
        lastError = error;
        // Another process took the port between freePort() and the server's bind: try another.
        if (!String((error as Error).message).includes('could not bind')) break;
      }
    }
    throw lastError;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The server at `url` (a server this process did not start, such as the test run's shared
 * one): creates databases on it; its `stop()` only forgets it (the server's owner stops it).
 */
export function postgresAt(url: string): PostgresServer {
  const port = Number(new URL(url).port);
  return { url, port, createDatabase: databaseCreator(url, port), stop: async () => {} };
}

function databaseCreator(url: string, port: number): PostgresServer['createDatabase'] {
  return async (name, options = {}) => {
    const db = name ?? uniqueDatabaseName();
    for (const identifier of [db, options.template ?? 'x']) {
      if (!/^[a-z_][a-z0-9_]*$/.test(identifier)) {
        throw new Error(`createDatabase: not a plain identifier: ${identifier}`);
      }
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const template = options.template === undefined ? '' : ` TEMPLATE ${options.template}`;
      await client.query(`CREATE DATABASE ${db}${template}`);
    } finally {
      await client.end();
    }
    return `postgres://postgres@127.0.0.1:${port}/${db}`;
  };
}

function server(child: ChildProcess, dir: string, port: number): PostgresServer {
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    createDatabase: databaseCreator(url, port),
    stop() {
      stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
          const within = (ms: number) =>
            Promise.race([exited, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
          child.stdin?.end(); // the watchdog asks the server for a fast shutdown
          // A loaded machine can make the shutdown checkpoint slow: the data is disposable, so
          // after 5 s an immediate shutdown (SIGQUIT), then SIGKILL.
          for (const signal of ['SIGQUIT', 'SIGKILL'] as const) {
            if (await within(5_000)) break;
            const pid = postmasterPid(dir);
            if (pid !== undefined) {
              try {
                process.kill(pid, signal);
              } catch {
                // already gone
              }
            }
          }
          await exited;
        }
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/**
 * Starts `postgres` under a watchdog shell: when the shell's standard input closes (stop(), or
 * the death of this process), it sends the server SIGINT (fast shutdown) and waits for it.
 */
function startServer(
  bin: string,
  data: string,
  dir: string,
  port: number,
  owner: { uid: number; gid: number } | undefined,
  options: StartPostgresOptions,
): Promise<ChildProcess> {
  const settings: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    port,
    unix_socket_directories: dir,
    fsync: 'off',
    full_page_writes: 'off',
    synchronous_commit: 'off',
    max_connections: 200,
    shared_buffers: '32MB',
    ...options.settings,
  };
  const args = Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  // (sh gives an asynchronous command /dev/null as its standard input unless it is redirected
  // explicitly: the watcher reads the shell's own standard input through descriptor 3.)
  const watchdog =
    'exec 3<&0; "$@" </dev/null & pid=$!; ( cat <&3 >/dev/null; kill -INT "$pid" 2>/dev/null ) & wait "$pid"';
  const child = spawn('/bin/sh', ['-c', watchdog, 'sh', join(bin, 'postgres'), '-D', data, ...args], {
    cwd: dir,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(owner === undefined ? {} : { uid: owner.uid, gid: owner.gid }),
  });
  let output = '';
  const timeoutMs = options.startTimeoutMs ?? SERVICE_START_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.stdin?.end();
      reject(new Error(`PostgreSQL did not start (${why}). Its output:\n${output.slice(-4000)}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${timeoutMs} ms`), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('database system is ready to accept connections')) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        // Keep draining its output, so that a full pipe never blocks the server.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(child);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => fail(`it exited with ${signal ?? `code ${code}`}`));
  });
}

/** The server's process id, from the first line of its postmaster.pid. */
function postmasterPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function findBinaries(): string {
  const candidates: string[] = [];
  if (process.env.TENSORMINE_PG_BIN) candidates.push(process.env.TENSORMINE_PG_BIN);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const majors = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...majors.map((major) => join(debian, major, 'bin')));
  }
  try {
    const initdb = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim();
    if (initdb) candidates.push(join(initdb, '..'));
  } catch {
    // not on the PATH
  }
  for (const dir of candidates) {
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
  }
  throw new Error(
    'the PostgreSQL tests need the PostgreSQL server binaries (initdb, postgres) and found none: ' +
      'install them (Debian: apt-get install postgresql, as .ci/run does) or set TENSORMINE_PG_BIN ' +
      `to their directory (looked in: ${candidates.join(', ') || 'nowhere'})`,
  );
}

/** As root: the user the server runs as (initdb and postgres refuse root). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const name = process.env.TENSORMINE_PG_USER ?? 'nobody';
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error(
      `running as root, the PostgreSQL tests start the server as the user ${name}, which does not exist ` +
        '(create it, or set TENSORMINE_PG_USER to an unprivileged user)',
    );
  }
}

function runChecked(
  file: string,
  args: readonly string[],
  cwd: string,
  owner: { uid: number; gid: number } | undefined,
): Promise<void> {
  try {
    accessSync(file, constants.X_OK);
  } catch {
    throw new Error(`${file} is not executable`);
  }
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(owner === undefined ? {} : { uid: owner.uid, gid: owner.gid }),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error) => reject(new Error(`${file}: ${error.message}`)));
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${file} ${args.join(' ')} failed (exit ${code}):\n${output.slice(-4000)}`));
    });
  });
}
