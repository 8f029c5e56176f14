/**
 * runServiceBin as a real process (a small service in test/fixtures/demo-bin.ts): the exit codes
 * of usage and configuration errors, `config` with its sources and its hidden secrets, a port in
 * use, and a clean stop on SIGTERM.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { PROCESS_START_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { waitFor } from '../../../test-support/wait.ts';

const BIN = join(import.meta.dirname, 'fixtures', 'demo-bin.ts');
/**
 * The fixture and the kit's sources it imports (the workspace packages from their sources, as
 * `--conditions=@tensormine/source`), bundled once into plain JavaScript that each process runs
 * on Node alone: through tsx every process compiled the sources again, about 2 s of CPU each
 * (9 processes). Inside the package's node_modules, so that what stays external resolves as
 * from the sources.
 */
const OUT = join(import.meta.dirname, '..', 'node_modules', `.service-bin-test-${process.pid}`);
const BUNDLE = join(OUT, 'demo-bin.mjs');
const NODE_ARGS = [BUNDLE];

beforeAll(async () => {
  await build({
    entryPoints: [BIN],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    conditions: ['@tensormine/source'],
    // third-party packages load from node_modules at run time, as under tsx
    plugins: [
      {
        name: 'external-packages',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, ({ path }) =>
            path.startsWith('@tensormine/') ? undefined : { external: true },
          );
        },
      },
    ],
    logLevel: 'warning',
  });
});
afterAll(() => rm(OUT, { recursive: true, force: true }));

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...NODE_ARGS, ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const done of cleanup.splice(0)) done();
});

describe('runServiceBin', () => {
  test('usage and configuration errors exit 2 with a message naming the problem', async () => {
    // In parallel: each is a process of its own.
    const [none, help, unknown, flag, value] = await Promise.all([
      run([]),
      run(['--help']),
      run(['frobnicate']),
      run(['config', '--bogus']),
      run(['config', '--port', 'eighty']),
    ]);
    expect(none.code).toBe(2);
    expect(none.stdout).toContain('usage: demo-bin <command> [options]');
    expect(none.stdout).toContain('--upstream');
    expect(help.code).toBe(0);
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      expect.stringContaining('unknown command "frobnicate"'),
    ]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option '--bogus'");
    expect(value.code).toBe(2);
    expect(value.stderr).toBe('demo-bin: option port: expected an integer in [0, 65535], got "eighty"\n');
  });

  test('config prints each value with its source, secrets hidden, as text or JSON', async () => {
    const env = { DEMO_TOKEN: 'a-very-secret-token', DEMO_UPSTREAM: 'https://user:pw@upstream.example' };
    const [json, text] = await Promise.all([
      run(['config', '--json', '--port', '9000'], env),
      run(['config']),
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      { name: 'port', env: 'DEMO_PORT', value: '9000', source: 'flag' },
      { name: 'token', env: 'DEMO_TOKEN', value: '(set)', source: 'env' },
      { name: 'upstream', env: 'DEMO_UPSTREAM', value: 'https://***@upstream.example', source: 'env' },
    ]);
    expect(text.stdout).toMatch(/^token\s+\(not set\)\s+default \(DEMO_TOKEN\)$/m);
    expect(text.stdout).toMatch(/^upstream\s+\(unset: none\)\s+default \(DEMO_UPSTREAM\)$/m);
    expect(json.stdout + text.stdout).not.toContain('a-very-secret-token');
    expect(json.stdout).not.toContain(':pw@');
  });

  test('a port in use exits 1 and names it', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    cleanup.push(() => taken.close());
    const port = String((taken.address() as { port: number }).port);
    const answer = await run(['start', '--port', port]);
    expect(answer.code).toBe(1);
    expect(answer.stderr).toMatch(
      new RegExp(
        `^demo-bin: port ${port} on 127\\.0\\.0\\.1 is already in use; pick another with --port$`,
        'm',
      ),
    );
  });

  test('start prints its lines, and SIGTERM closes it cleanly (exit 0)', async () => {
    const child: ChildProcess = spawn(process.execPath, [...NODE_ARGS, 'start'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup.push(() => child.exitCode === null && child.kill('SIGKILL'));
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await waitFor(() => /demo listening on \d+/.test(out), 'the demo listening', {
      timeoutMs: PROCESS_START_TIMEOUT_MS,
      intervalMs: 50,
      context: () => out,
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('SIGTERM: closing (finishing requests in flight)');
  });
});
