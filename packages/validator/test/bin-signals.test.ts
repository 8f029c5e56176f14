/**
 * The validator's bin under npm (`npm start -w @tensormine/validator`): npm passes SIGINT and
 * SIGTERM to its `sh -c` only, and the node still closes cleanly (the npm-signal watcher of
 * @tensormine/service-kit, whose logic its own tests check over a fake /proc).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, onTestFinished, test } from 'vitest';
import { alive, descendants, killTree, survivors } from '../../../test-support/process-tree.ts';
import { PROCESS_START_TIMEOUT_MS, SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { waitFor } from '../../../test-support/wait.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe.runIf(process.platform === 'linux')('npm start -w @tensormine/validator', () => {
  test(
    'SIGINT or SIGTERM to npm closes the node cleanly, and nothing is left running',
    async () => {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        const dataDir = await mkdtemp(join(tmpdir(), 'launcher-'));
        onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
        const npm = spawn(
          'npm',
          ['start', '-w', '@tensormine/validator', '--', '--port', '0', '--data-dir', dataDir],
          {
            cwd: root,
            env: { PATH: process.env.PATH ?? '', HOME: dataDir, npm_config_update_notifier: 'false' },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        onTestFinished(() => killTree(npm.pid!));
        let out = '';
        npm.stdout.on('data', (c: Buffer) => {
          out += c.toString();
        });
        npm.stderr.on('data', (c: Buffer) => {
          out += c.toString();
        });
        await waitFor(() => out.includes(' listening on http://'), 'the validator listening', {
          timeoutMs: PROCESS_START_TIMEOUT_MS,
          intervalMs: 100,
          context: () => out,
        });
        const tree = [npm.pid!, ...descendants(npm.pid!)];
        // npm, its sh -c, tsx and the node (esbuild's service besides).
        expect(tree.length).toBeGreaterThanOrEqual(4);
        process.kill(npm.pid!, signal);
        await waitFor(() => survivors(tree) === '', `every process gone after ${signal} to npm`, {
          intervalMs: 100,
          context: () => survivors(tree),
        });
        // SIGINT: the shell held it and woke; SIGTERM: npm passed it on and the shell died of it.
        expect(out).toContain(`${signal}: closing (finishing requests in flight)`);
        expect(tree.some(alive)).toBe(false);
      }
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});
