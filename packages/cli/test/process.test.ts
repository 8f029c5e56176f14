/**
 * The `miner` bin as users run it: real processes through bin/miner.js (which, without a
 * build, runs src/cli.ts on the pinned Node through tsx).
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { cp, mkdir, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import { PROCESS_START_TIMEOUT_MS, WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { cleanup, closedUrl, tempHome, testKey, testValidator, waitFor } from './helpers.js';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(pkg, '..', '..');
const bin = join(pkg, 'bin', 'miner.js');

/** PATH without the repository's node_modules/.bin (so `node` is the system's, if any). */
function systemPath(): string {
  return (process.env.PATH ?? '')
    .split(':')
    .filter((p) => !p.includes('node_modules'))
    .join(':');
}

/** The built miner keeps Node's compile cache under $XDG_CACHE_HOME: here, not in the user's home. */
const cacheHome = join(tmpdir(), `tensormine-bin-test-cache-${process.pid}`);
afterAll(() => rm(cacheHome, { recursive: true, force: true }));

function runBin(
  args: string[],
  env: Record<string, string>,
  script = bin,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script, ...args],
      { env: { PATH: process.env.PATH ?? '', XDG_CACHE_HOME: cacheHome, ...env }, timeout: WAIT_TIMEOUT_MS },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

describe('the miner bin', () => {
  test('npx miner --version works from the repository', async () => {
    const { stdout } = await promisify(execFile)('npx', ['miner', '--version'], {
      cwd: root,
      timeout: WAIT_TIMEOUT_MS,
    });
    expect(stdout).toBe('0.1.0\n');
  });

  test('runs from source when there is no build, on the pinned Node even when started by another', async () => {
    // A copy of the package without dist/, inside the repository so that tsx and the pinned
    // Node are found the way an installed checkout finds them.
    const copy = join(pkg, 'node_modules', '.launcher-test');
    await rm(copy, { recursive: true, force: true });
    cleanup(() => rm(copy, { recursive: true, force: true }));
    await mkdir(join(copy, 'bin'), { recursive: true });
    await cp(bin, join(copy, 'bin', 'miner.js'));
    await cp(join(pkg, 'bin', 'current-build.js'), join(copy, 'bin', 'current-build.js'));
    for (const entry of ['src', 'package.json', 'tsconfig.json'])
      await symlink(join(pkg, entry), join(copy, entry));
    const systemNode = spawnSync('node', ['--version'], { env: { PATH: systemPath() }, encoding: 'utf8' });
    const node = systemNode.status === 0 ? 'node' : process.execPath;
    // TENSORMINE_MINER_SOURCE=1: the whole way through the sources (--version alone is otherwise
    // answered by the bin itself).
    const { stdout } = await promisify(execFile)(node, [join(copy, 'bin', 'miner.js'), '--version'], {
      env: { PATH: systemPath(), TENSORMINE_MINER_SOURCE: '1' },
      timeout: WAIT_TIMEOUT_MS,
    });
    expect(stdout).toBe('0.1.0\n');
  });

  test('runs the build only while it is current, else the sources; --version alone loads neither', async () => {
    // A package of its own (no workspace dependencies) whose build and source say which ran.
    const copy = join(pkg, 'node_modules', '.launcher-build-test');
    await rm(copy, { recursive: true, force: true });
    cleanup(() => rm(copy, { recursive: true, force: true }));
    for (const dir of ['bin', 'src', 'dist']) await mkdir(join(copy, dir), { recursive: true });
    await cp(bin, join(copy, 'bin', 'miner.js'));
    await cp(join(pkg, 'bin', 'current-build.js'), join(copy, 'bin', 'current-build.js'));
    await symlink(join(pkg, 'tsconfig.json'), join(copy, 'tsconfig.json'));
    await writeFile(
      join(copy, 'package.json'),
      JSON.stringify({ name: 'launcher-test', version: '9.9.9', type: 'module' }),
    );
    await writeFile(join(copy, 'src', 'cli.ts'), "const ran: string = 'source';\nconsole.log(ran);\n");
    await writeFile(join(copy, 'dist', 'cli.js'), "console.log('build');\n");
    const run = async (args: string[], extra: Record<string, string> = {}) => {
      const { code, stdout, stderr } = await runBin(args, extra, join(copy, 'bin', 'miner.js'));
      return { code, out: stdout.trim(), stderr };
    };
    const built = new Date(Date.now() - 60_000);
    const older = new Date(built.getTime() - 60_000);
    const newer = new Date(built.getTime() + 30_000);
    await utimes(join(copy, 'dist', 'cli.js'), built, built);
    await utimes(join(copy, 'src', 'cli.ts'), older, older);
    // The build runs with Node's compile cache, in $XDG_CACHE_HOME/tensormine (off with
    // NODE_DISABLE_COMPILE_CACHE=1).
    const cache = join(copy, 'cache');
    expect(await run([], { XDG_CACHE_HOME: cache })).toMatchObject({ code: 0, out: 'build' });
    expect((await readdir(join(cache, 'tensormine', 'node-compile-cache'))).length).toBeGreaterThan(0);
    const uncached = join(copy, 'no-cache');
    expect(await run([], { XDG_CACHE_HOME: uncached, NODE_DISABLE_COMPILE_CACHE: '1' })).toMatchObject({
      code: 0,
      out: 'build',
    });
    await expect(stat(uncached)).rejects.toThrow();
    expect(await run([], { TENSORMINE_MINER_SOURCE: '1' })).toMatchObject({ code: 0, out: 'source' });
    expect(await run(['--version'])).toMatchObject({ code: 0, out: '9.9.9' });

    await utimes(join(copy, 'src', 'cli.ts'), newer, newer); // a source edited after the build
    expect(await run([])).toMatchObject({ code: 0, out: 'source' });
    const refused = await run([], { TENSORMINE_MINER_SOURCE: '0' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the build is missing or older than a source: npm run build');
  });

  test('--version answered by the bin is what the miner itself prints', async () => {
    const fast = await runBin(['--version'], {});
    const whole = await runBin(['--version'], { TENSORMINE_MINER_SOURCE: '1' });
    expect(fast).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    expect(whole).toMatchObject({ code: 0, stdout: fast.stdout });
  });

  test('keys generate writes a 0600 key file', async () => {
    const { env } = await tempHome();
    const { code, stdout } = await runBin(['keys', 'generate'], env);
    expect(code).toBe(0);
    const path = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key');
    expect(stdout).toMatch(
      new RegExp(`^wrote a new key to ${path} \\(mode 0600\\)\\npublic key [0-9a-f]{64}\\n$`),
    );
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  test('an unreachable validator is exit 3 with the URL and the reason', async () => {
    const { env } = await tempHome();
    const down = await closedUrl();
    const { code, stderr } = await runBin(['status', '--url', down], env);
    expect(code).toBe(3);
    expect(stderr).toContain(`miner: no answer from ${down} (ECONNREFUSED)\n`);
  });

  test('mine prints plain lines to a pipe and stops cleanly on SIGTERM (exit 0)', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const child: ChildProcess = spawn(process.execPath, [bin, 'mine', '--url', url, '--threads', '1'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup(() => child.kill('SIGKILL'));
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(
      () => out.includes('accepted (1/0)'),
      'an accepted result',
      PROCESS_START_TIMEOUT_MS,
      () => out,
    );
    expect(out).not.toContain('\u001b['); // no terminal codes in a pipe
    child.kill('SIGTERM');
    const code = await exited;
    expect(out.slice(-400)).toMatch(/stopping: workers, boards, journal\n(.*\n)*.*\] stopped\n$/);
    expect(code).toBe(0);
  });
});
