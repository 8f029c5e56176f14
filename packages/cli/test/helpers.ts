import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { createClient, Signer } from '@tensormine/client';
import { type CreateValidatorOptions, createValidator, type Validator } from '@tensormine/validator';
import { afterEachTest } from '../../../test-support/cleanup.ts';
import { waitFor as waitUntil } from '../../../test-support/wait.ts';
import { type RunOptions, run } from '../src/index.js';
import type { CliIo } from '../src/io.js';

/** A stdout or stderr that keeps what is written. */
export class Capture extends Writable {
  text = '';
  isTTY: boolean;
  columns = 100;
  rows = 40;
  constructor(tty = false) {
    super();
    this.isTTY = tty;
  }
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

/** A stdin: a PassThrough, a terminal when `tty` (raw mode is a no-op). */
export function testStdin(
  tty = false,
): PassThrough & { isTTY: boolean; setRawMode?: (mode: boolean) => void } {
  const stdin = new PassThrough() as PassThrough & { isTTY: boolean; setRawMode?: (mode: boolean) => void };
  stdin.isTTY = tty;
  if (tty) stdin.setRawMode = () => {};
  return stdin;
}

export interface TestIo extends CliIo {
  readonly stdout: Capture;
  readonly stderr: Capture;
  readonly stdin: ReturnType<typeof testStdin>;
  readonly controller: AbortController;
}

const cleanups: (() => Promise<unknown> | unknown)[] = [];

/** Runs `fn` after the current test, even when it fails (last registered, first run). */
export function cleanup(fn: () => Promise<unknown> | unknown): void {
  cleanups.push(fn);
}

afterEachTest(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/**
 * The cache a miner started by a test keeps its built native kernels in: the user's (where the
 * miners of in-process tests keep them too), not the temporary HOME's. With an empty cache every
 * miner process compiled the C kernels again (gcc -O3: about 7 s of CPU per start, 25 starts in
 * signals.test.ts alone). A test of the cache itself gives its own XDG_CACHE_HOME.
 */
export const USER_CACHE_HOME = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');

/**
 * A temporary HOME with XDG config and data directories; removed after the test. The cache is
 * the user's (USER_CACHE_HOME).
 */
export async function tempHome(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), 'miner-cli-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  return {
    dir,
    env: {
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_DATA_HOME: join(dir, 'data'),
      XDG_CACHE_HOME: USER_CACHE_HOME,
    },
  };
}

export function testIo(
  env: Record<string, string | undefined>,
  options: { tty?: boolean; stdinTty?: boolean } = {},
): TestIo {
  const controller = new AbortController();
  return {
    stdout: new Capture(options.tty ?? false),
    stderr: new Capture(false),
    stdin: testStdin(options.stdinTty ?? false),
    env,
    signal: controller.signal,
    controller,
  };
}

/** Runs the CLI in process; resolves to its exit code and output. */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined>,
  options: RunOptions & { stdin?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = testIo(env);
  if (options.stdin !== undefined) io.stdin.end(options.stdin);
  const code = await run(argv, io, options);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

/** A validator in memory listening on a free port, with low difficulties; closed after the test. */
export async function testValidator(
  options: {
    hexDifficulty?: bigint;
    hexchain?: boolean;
    genesis?: CreateValidatorOptions['genesis'];
    poolStrategy?: 'solo' | 'pplns';
    poolShareIntervalMs?: bigint;
    /** Serve GET /metrics behind this token (docs/metrics.md). */
    metricsToken?: string;
    now?: () => number;
  } = {},
): Promise<{ validator: Validator; url: string }> {
  const validator = await createValidator({
    ...(options.metricsToken === undefined ? {} : { metricsToken: options.metricsToken }),
    ...(options.poolStrategy === undefined ? {} : { poolStrategy: options.poolStrategy }),
    ...(options.poolShareIntervalMs === undefined
      ? {}
      : { poolShareIntervalMs: options.poolShareIntervalMs }),
    dataDir: ':memory:',
    hexDifficulty: options.hexDifficulty ?? 65_536n,
    difficulty: 2,
    hexchain: options.hexchain ?? true,
    rateLimitPerSecond: 100_000,
    rateLimitBurst: 100_000,
    keyRateLimitPerSecond: 100_000,
    keyRateLimitBurst: 100_000,
    logger: false,
    ...(options.genesis ? { genesis: options.genesis } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  cleanup(() => validator.close());
  const url = await validator.listen({ host: '127.0.0.1', port: 0 });
  return { validator, url };
}

/** A key saved at `path`, registered on `urls` when given. */
export async function testKey(path: string, registerOn: readonly string[] = []): Promise<Signer> {
  const signer = Signer.generate();
  await signer.save(path);
  for (const url of registerOn) {
    const client = createClient({ url, signer });
    await client.miners.register();
    await client.close();
  }
  return signer;
}

/** A URL where nothing listens (connections are refused). */
export async function closedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/**
 * Polls `predicate` until it holds; fails after `timeoutMs` (default: the suite's wait bound),
 * showing `context()` (test-support/wait.ts).
 */
export function waitFor(
  predicate: () => boolean,
  what: string,
  timeoutMs?: number,
  context?: () => string,
): Promise<void> {
  return waitUntil(predicate, what, {
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(context === undefined ? {} : { context }),
  });
}
