/**
 * docs/validator.md's walkthroughs run as written: its scripts saved at the repository root
 * (where they are told to go), its shell blocks run by bash against a node, with the node's URL
 * in place of the default port. A doc command that stops working (an unpublished package name,
 * a script that needs a build, a flag that moved) fails here.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, onTestFinished, test } from 'vitest';
import { SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { testValidator } from './helpers.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const DEFAULT_URL = 'http://127.0.0.1:8420';

/** The fenced blocks of `section` (from its heading to the next heading of the same level). */
async function blocks(heading: string): Promise<{ lang: string; text: string }[]> {
  const page = await readFile(join(root, 'docs', 'validator.md'), 'utf8');
  const start = page.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const level = heading.split(' ')[0]!;
  const next = page.indexOf(`\n${level} `, start + heading.length + 2);
  const section = page.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, text: m[2]! }));
}

/** Runs `script` with bash in `cwd` (a folder of the repository), on the pinned Node. */
function bash(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-euo', 'pipefail', '-c', script],
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', HOME: cwd, npm_config_update_notifier: 'false' },
        timeout: SLOW_TEST_TIMEOUT_MS,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A scratch folder at the repository root (the scripts import the workspace packages). */
async function scratch(): Promise<string> {
  await mkdir(join(root, 'test-artifacts'), { recursive: true });
  const dir = await mkdtemp(join(root, 'test-artifacts', 'walkthrough-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('docs/validator.md, run as written', () => {
  test(
    'POST /devices/register with sign.mjs and curl',
    async () => {
      const v = await testValidator();
      const url = await v.listen({ port: 0 });
      const dir = await scratch();
      const found = await blocks('### POST /devices/register');
      const js = found.find((b) => b.lang === 'js')!;
      const sh = found.find((b) => b.lang === 'sh')!;
      await writeFile(join(dir, 'sign.mjs'), js.text);
      const r = await bash(sh.text.replaceAll(DEFAULT_URL, url), dir);
      expect(r.stderr).not.toMatch(/Error|not found/i);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout.trim())).toMatchObject({
        registered: true,
        device_type: 'esp32',
        port: 8266,
      });
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  test(
    'the v4.1 walkthrough with curl: register, challenge, mine, submit twice, read',
    async () => {
      const v = await testValidator({ hexDifficulty: 4096n });
      const url = await v.listen({ port: 0 });
      const dir = await scratch();
      const found = await blocks('### Walkthrough with curl');
      const [register, mine] = found.filter((b) => b.lang === 'ts');
      await writeFile(join(dir, 'register.mts'), register!.text);
      await writeFile(join(dir, 'mine.mts'), mine!.text);
      const shell = found
        .filter((b) => b.lang === 'sh')
        .map((b) => b.text)
        .join('\n')
        // The node runs in this test (the doc starts one "in another terminal").
        .replace(/^npm start -w @tensormine\/validator .*\n/m, '')
        .replaceAll(DEFAULT_URL, url);
      expect(shell).toContain('register.mts');
      const r = await bash(shell, dir);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
      expect(lines[0]).toMatch(/^200 \{"registered":true/);
      // curl prints no newline after a body: the two answers may share a line.
      const accepted = [...r.stdout.matchAll(/\{"accepted":true.*?"token":"PTM"\}/g)].map((m) => m[0]);
      // The submission, then its identical resubmission: the same answer.
      expect(accepted).toHaveLength(2);
      expect(accepted[1]).toBe(accepted[0]);
      const block = JSON.parse(accepted[0]!) as { block_hash: string };
      expect(r.stdout).toContain(`"block_hash":"${block.block_hash}"`);
      expect(r.stdout).toMatch(/"occupied":2,"max_depth":1/);
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});
