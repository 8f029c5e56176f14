import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createValidator } from '@tensormine/validator';
import { describe, expect, onTestFinished, test } from 'vitest';
import { freePort } from '../../../test-support/ports.ts';
import { stopGroup } from '../../../test-support/process-tree.ts';
import {
  PROCESS_START_TIMEOUT_MS,
  SLOW_TEST_TIMEOUT_MS,
  SOAK_TEST_TIMEOUT_MS,
} from '../../../test-support/timeouts.ts';
import { waitFor } from '../../../test-support/wait.ts';

/**
 * Command chains of the docs, run in order as written on a fresh HOME: the README's "Mine a block
 * from your own code", docs/economy.md "From the command line" and the economy example of
 * docs/cli.md. A validator the docs start "in another terminal" runs here, with the defaults'
 * port pointed at a free one by the environment (TENSORMINE_PORT, MINER_URL) or the URL replaced.
 */

const root = join(import.meta.dirname, '..', '..', '..');
const DEFAULT_URL = 'http://127.0.0.1:8420';

/** The fenced blocks of `heading`'s section (to the next heading of the same level) in `file`. */
async function blocks(file: string, heading: string): Promise<{ lang: string; text: string }[]> {
  const page = await readFile(join(root, file), 'utf8');
  const start = page.indexOf(`\n${heading}\n`);
  expect(start, `${file}: ${heading}`).toBeGreaterThan(0);
  const level = heading.split(' ')[0]!;
  const next = page.indexOf(`\n${level} `, start + heading.length + 2);
  const section = page.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, text: m[2]! }));
}

async function scratch(): Promise<string> {
  await mkdir(join(root, 'test-artifacts'), { recursive: true });
  const dir = await mkdtemp(join(root, 'test-artifacts', 'docs-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
  return dir;
}

function bash(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-euo', 'pipefail', '-c', script],
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', npm_config_update_notifier: 'false', ...env },
        // a whole chain: up to about 20 programs one after the other
        timeout: SOAK_TEST_TIMEOUT_MS,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A long-running command of a doc, in a process group of its own, stopped after the test. */
function service(script: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn('bash', ['-c', script], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', npm_config_update_notifier: 'false', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (c: Buffer) => {
      out += c.toString();
    });
  }
  // Stopped, and waited for: a program still exiting writes into the test's HOME.
  onTestFinished(() => stopGroup(child.pid!));
  return { child, output: () => out };
}

/** Waits for a started program to say `what` (test-support/wait.ts, the bound of a program's start). */
function until(what: string, check: () => boolean, output: () => string): Promise<void> {
  return waitFor(check, what, { timeoutMs: PROCESS_START_TIMEOUT_MS, intervalMs: 100, context: output });
}

describe('README: Mine a block from your own code', () => {
  test(
    'mines and submits a block, saying what it does',
    async () => {
      const found = await blocks('README.md', '## Mine a block from your own code');
      const program = found.find((b) => b.lang === 'ts')!.text;
      const command = found.find((b) => b.lang === 'sh')!.text;
      const dir = await scratch();
      const run = async (hexDifficulty: bigint, edit: (text: string) => string = (t) => t) => {
        const validator = await createValidator({ dataDir: ':memory:', hexDifficulty, logger: false });
        onTestFinished(() => validator.close());
        const url = await validator.listen({ host: '127.0.0.1', port: 0 });
        await writeFile(join(dir, 'mine.mts'), edit(program.replaceAll(DEFAULT_URL, url)));
        return bash(command, dir, { HOME: dir });
      };

      const easy = await run(4096n);
      expect(easy.code, easy.stderr).toBe(0);
      expect(easy.stdout).toMatch(/^v4\.1 work: about \d+ nonces to try$/m);
      expect(easy.stdout).toMatch(/^accepted \(v4\.1\): 1 PTM$/m);

      // Against a difficulty beyond one core of reference code: it says how it goes, then gives up
      // (after the minute of the doc, shortened here).
      const hard = await run(1n << 50n, (t) =>
        t.replace('const GIVE_UP_MS = 60_000;', 'const GIVE_UP_MS = 1;'),
      );
      expect(hard.code, hard.stderr).toBe(0);
      expect(hard.stdout).toMatch(/^1000000 nonces tried$/m);
      expect(hard.stdout).toContain('no block within a minute at this difficulty');
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});

describe('docs/economy.md: From the command line, then docs/cli.md: the economy commands', () => {
  test(
    'a genesis funding your key, a local validator, then every command in order',
    async () => {
      const [setup, chain] = (await blocks('docs/economy.md', '## From the command line')).filter(
        (b) => b.lang === 'sh',
      );
      const cliExample = (await blocks('docs/cli.md', '### The economy commands')).find(
        (b) => b.lang === 'sh',
      )!;
      const dir = await scratch();
      const here = (text: string) => text.replaceAll('.data/', `${dir.slice(root.length + 1)}/`);
      const port = await freePort();
      const env = { HOME: dir, TENSORMINE_PORT: String(port), MINER_URL: `http://127.0.0.1:${port}` };

      const lines = here(setup!.text).trimEnd().split('\n');
      const start = lines.pop()!;
      expect(start).toMatch(/^npx miner validator start /);
      const made = await bash(lines.join('\n'), root, env);
      expect(made.code, made.stderr).toBe(0);
      const validator = service(start, env);
      await until(
        'the validator',
        () => validator.output().includes(' listening on http://'),
        validator.output,
      );

      const ran = await bash(chain!.text, root, env);
      expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
      expect(ran.stdout).toMatch(/^sent 12\.5 PTM to d75a98\S+ \(transfer t-\w+, memo "rent"\)$/m);
      expect(ran.stdout).toMatch(/transfer\s+-12\.5 PTM\s+t-\w+\s+to d75a980182b1… "rent"/);
      expect(ran.stdout).toMatch(/^locked 5 USDC in v-1 until /m);
      expect(ran.stdout).toContain('cancelled o-1');

      const again = await bash(cliExample.text, root, env);
      expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(0);
      expect(again.stdout).toMatch(/^swapped 100 USDC for /m);
    },
    // about 20 `npx miner` commands one after the other: on a 2-core machine at a load of 30
    // and more, longer than one end-to-end test's bound
    SOAK_TEST_TIMEOUT_MS,
  );
});
