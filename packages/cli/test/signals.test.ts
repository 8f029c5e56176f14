/**
 * The `miner` process tree as supervisors and shells treat it: a stop signal to any process of
 * it stops the miner cleanly (the journal flushed: "stopped" is printed after it), nothing is
 * left running, and a closed pipe (`| head`) ends a command quietly.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { alive, commandLine, descendants, killTree, survivors } from '../../../test-support/process-tree.ts';
import { PROCESS_START_TIMEOUT_MS, SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { cleanup, runCli, tempHome, testValidator, waitFor } from './helpers.js';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(pkg, '..', '..');
const bin = join(pkg, 'bin', 'miner.js');

/** Whether a process is a Node.js (its program is `node`; not tsx's esbuild service). */
function isNode(pid: number): boolean {
  const program = commandLine(pid).split(' ')[0] ?? '';
  return program === 'node' || program.endsWith('/node');
}

/** A Node older than the bin's floor on this machine (the system Node), if any. */
function oldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    const r = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (r.status === 0 && Number(r.stdout.split('.')[0]) < 22) return candidate;
  }
  return undefined;
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  tree: number[];
}

async function startMining(command: string, args: string[], env: Record<string, string>): Promise<Started> {
  const child = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  // 'close', not 'exit': every process holding the output pipes has ended and what they wrote
  // has been read (a sample of the output right after 'exit' can miss the last lines).
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  cleanup(() => killTree(child.pid!));
  await waitFor(
    () => out.includes('accepted (1/0)'),
    'an accepted result',
    PROCESS_START_TIMEOUT_MS,
    () => out,
  );
  return { child, output: () => out, exited, tree: [child.pid!, ...descendants(child.pid!)] };
}

async function expectAllGone(tree: number[]): Promise<void> {
  await waitFor(
    () => tree.every((pid) => !alive(pid)),
    'every process of the tree to exit',
    undefined,
    () => survivors(tree),
  );
}

const MINE = ['mine', '--local', '--threads', '1'];

// Each test starts real miners one after the other: minutes on a loaded 2-core machine.
const SLOW = SLOW_TEST_TIMEOUT_MS;

describe('signals to the process tree', () => {
  test(
    'one process on a Node new enough: SIGTERM, SIGINT, SIGHUP each stop it cleanly',
    async () => {
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
        const { env } = await tempHome();
        const run = await startMining(process.execPath, [bin, ...MINE], env);
        expect(run.tree.filter(isNode)).toEqual([run.child.pid]);
        process.kill(run.child.pid!, signal);
        expect(await run.exited).toBe(0);
        expect(run.output()).toMatch(/\] stopped\n$/);
        await expectAllGone(run.tree);
      }
    },
    SLOW,
  );

  test(
    'the wrapper on an older Node: a signal to the wrapper or to the child stops both cleanly',
    async () => {
      const node = oldNode();
      // Without an old Node here, the wrapper path is forced on this one.
      const command = node ?? process.execPath;
      const extra: Record<string, string> = node ? {} : { TENSORMINE_MINER_SPAWN: '1' };
      for (const [target, signal] of [
        ['wrapper', 'SIGTERM'],
        ['wrapper', 'SIGINT'],
        ['wrapper', 'SIGHUP'],
        ['child', 'SIGTERM'],
        ['child', 'SIGINT'],
      ] as const) {
        {
          const { env } = await tempHome();
          const run = await startMining(command, [bin, ...MINE], { ...env, ...extra });
          const nodes = run.tree.filter(isNode);
          expect(nodes).toHaveLength(2);
          process.kill(target === 'wrapper' ? run.child.pid! : nodes[1]!, signal);
          const code = await run.exited;
          expect(code, `${signal} to the ${target}`).toBe(0);
          expect(run.output()).toMatch(/\] stopped\n$/);
          await expectAllGone(run.tree);
        }
      }
    },
    SLOW,
  );

  test(
    'the wrapper killed outright (SIGKILL): the child stops cleanly instead of mining on',
    async () => {
      const { env } = await tempHome();
      const run = await startMining(process.execPath, [bin, ...MINE], {
        ...env,
        TENSORMINE_MINER_SPAWN: '1',
      });
      process.kill(run.child.pid!, 'SIGKILL');
      await expectAllGone(run.tree);
      await run.exited; // the pipes closed: the output is all read
      expect(run.output()).toMatch(/\] stopped\n$/);
    },
    SLOW,
  );

  test(
    'npx miner mine: SIGINT, SIGTERM or SIGHUP to npx, or a signal to its shell, stops every process, the miner cleanly',
    async () => {
      for (const [target, signal] of [
        // npm passes SIGINT to its shell only, which holds it until its command exits.
        ['npx', 'SIGINT'],
        ['npx', 'SIGTERM'],
        ['npx', 'SIGHUP'],
        ['sh', 'SIGINT'],
        ['sh', 'SIGTERM'],
        ['miner', 'SIGINT'],
      ] as const) {
        const { env } = await tempHome();
        const run = await startMining('npx', ['miner', ...MINE], {
          ...env,
          npm_config_cache: join(env.HOME!, '.npm'),
          npm_config_update_notifier: 'false',
        });
        const pid =
          target === 'npx'
            ? run.child.pid!
            : run.tree.find((p) => (target === 'sh' ? commandLine(p).startsWith('sh ') : isNode(p)))!;
        process.kill(pid, signal);
        await expectAllGone(run.tree);
        await run.exited; // the pipes closed: the output is all read
        expect(run.output(), `${signal} to ${target}`).toMatch(/\] stopped\n/);
        // Exactly one stop: a signal is not taken for a second one (which exits at once).
        expect(run.output().match(/\] stopping: /g), `${signal} to ${target}`).toHaveLength(1);
      }
    },
    SLOW,
  );
});

describe('the reason a stop gives', () => {
  test(
    'npx miner mine --json: the stop event names the signal npx was sent (SIGTERM, SIGHUP)',
    async () => {
      for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
        const { env } = await tempHome();
        const run = await startMining('npx', ['miner', ...MINE, '--json'], {
          ...env,
          npm_config_cache: join(env.HOME!, '.npm'),
          npm_config_update_notifier: 'false',
        });
        process.kill(run.child.pid!, signal);
        await expectAllGone(run.tree);
        await run.exited; // the pipes closed: the output is all read
        const events = run
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { type: string; reason?: string });
        // SIGTERM: npm passed it to its shell, which died of it; SIGHUP: npm died of it.
        expect(events.at(-1), signal).toMatchObject({ type: 'stop', reason: signal });
      }
    },
    SLOW,
  );
});

describe('a closed pipe', () => {
  function piped(shell: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        'sh',
        ['-c', `${shell}; echo "status $?" >&2`],
        { cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, timeout: SLOW_TEST_TIMEOUT_MS },
        (error, _stdout, stderr) => resolve({ code: error ? 1 : 0, stderr }),
      );
    });
  }
  const node = `'${process.execPath}' '${bin}'`;

  // `| true`: the reader is gone before the first write, so every write is a broken pipe.
  test('miner config | head exits quietly', async () => {
    const { env } = await tempHome();
    const r = await piped(`${node} config | true`, env);
    expect(r.stderr).toBe('status 0\n');
  });

  test('miner lattice | head exits quietly', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    const r = await piped(`${node} lattice --url ${url} | true`, env);
    expect(r.stderr).toBe('status 0\n');
  });

  test('miner mine --local | head -2 stops cleanly and quietly', async () => {
    const { env } = await tempHome();
    const r = await piped(`${node} ${MINE.join(' ')} | head -2 >/dev/null; sleep 0.2`, env);
    expect(r.stderr).toBe('status 0\n');
  });
});

describe('one miner per data directory', () => {
  test(
    'a second miner mine --local on the same data directory stops, naming the process that holds it',
    async () => {
      const { env } = await tempHome();
      const first = await startMining(process.execPath, [bin, ...MINE], env);
      const second = await runCli(['mine', '--local', '--threads', '1'], env);
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(
        `miner: the data directory ${join(env.XDG_DATA_HOME!, 'tensormine', 'miner')} (its --local validator) is in use by another miner: pid ${first.child.pid} (miner mine --local --threads 1)`,
      );
      expect(second.stderr).toContain('stop that miner first, or give this one another --data-dir');
      process.kill(first.child.pid!, 'SIGTERM');
      expect(await first.exited).toBe(0);
      // A lock left by a process that is gone (kill -9) is taken over.
      await writeFile(
        join(env.XDG_DATA_HOME!, 'tensormine', 'miner', 'local-validator.lock'),
        JSON.stringify({ pid: 2 ** 22 + 12345, startedAt: 'then', command: 'miner mine --local' }),
      );
      const third = await startMining(process.execPath, [bin, ...MINE], env);
      process.kill(third.child.pid!, 'SIGTERM');
      expect(await third.exited).toBe(0);
    },
    SLOW,
  );
});
