import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { stopGroup } from '../../../test-support/process-tree.ts';
import { PROCESS_START_TIMEOUT_MS, SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { waitFor } from '../../../test-support/wait.ts';
import { Browserless, freePort, newWallet } from './env.js';

/**
 * docs/terminal.md "Try it locally", run as written: its setup block by bash at the repository
 * root, then its three services (the validator, the local OAuth server, the terminal), each
 * from its block; the defaults' ports are pointed at free ones by the environment (the
 * validator's TENSORMINE_PORT, the terminal's TERMINAL_PORT and SOLANA_RPC_URL) and the OAuth
 * server's 8090 replaced, so that it runs beside anything else on this machine. Then a person's
 * way through it without a browser: prove a wallet, sign in through the local server, claim.
 */

const root = join(import.meta.dirname, '..', '..', '..');

async function blocks(heading: string): Promise<string[]> {
  const page = await readFile(join(root, 'docs', 'terminal.md'), 'utf8');
  const start = page.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const next = page.indexOf('\n## ', start + heading.length + 2);
  const section = page.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-euo', 'pipefail', '-c', script],
      { cwd: root, env, timeout: PROCESS_START_TIMEOUT_MS },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

/** A service of the doc, started by bash in a process group of its own (stopped after the test). */
function service(script: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn('bash', ['-c', script], {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  // Stopped, and waited for: a program still exiting writes into the test's HOME.
  onTestFinished(() => stopGroup(child.pid!));
  return { child, output: () => out };
}

/** Waits for a started program to say `what` (test-support/wait.ts, the bound of a program's start). */
function until(what: string, check: () => boolean, output: () => string): Promise<void> {
  return waitFor(check, what, { timeoutMs: PROCESS_START_TIMEOUT_MS, intervalMs: 100, context: output });
}

describe('docs/terminal.md, Try it locally', () => {
  test(
    'the treasury funded at genesis, the local OAuth server, the terminal: sign in and claim',
    async () => {
      const [setup, validator, oauth, terminal] = await blocks('## Try it locally');
      expect([setup, validator, oauth, terminal].every(Boolean)).toBe(true);
      await mkdir(join(root, 'test-artifacts'), { recursive: true });
      const dir = await mkdtemp(join(root, 'test-artifacts', 'trial-'));
      onTestFinished(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
      const here = (text: string) => text.replaceAll('.data/trial', dir.slice(root.length + 1));
      const [validatorPort, oauthPort, terminalPort] = [await freePort(), await freePort(), await freePort()];
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        npm_config_update_notifier: 'false',
        TENSORMINE_PORT: String(validatorPort),
        TERMINAL_PORT: String(terminalPort),
        SOLANA_RPC_URL: `http://127.0.0.1:${validatorPort}`,
        VITE_API_BASE_URL: `http://127.0.0.1:${terminalPort}`,
      };

      const made = await bash(here(setup!), env);
      expect(made.code, made.out).toBe(0);
      const genesis = JSON.parse(await readFile(join(dir, 'genesis.json'), 'utf8'));
      expect(genesis.allocations.map((a: { token: string }) => a.token)).toEqual(['PTM', 'SOL']);

      const v = service(here(validator!), env);
      const o = service(here(oauth!).replaceAll('8090', String(oauthPort)), env);
      await until('the validator', () => v.output().includes(' listening on http://'), v.output);
      await until('the OAuth server', () => o.output().includes('OAuth 2 server listening'), o.output);
      const t = service(here(terminal!).replaceAll('8090', String(oauthPort)), env);
      await until(
        'the terminal',
        () => t.output().includes('welcome package') || t.output().includes('Error'),
        t.output,
      );
      expect(t.output()).toContain('  welcome package 100 PTM and 0.05 SOL: the treasury holds it');

      // A person's way through it: prove a wallet, sign in (the local server signs in at once), claim.
      const base = `http://127.0.0.1:${terminalPort}`;
      const browser = new Browserless(base);
      const wallet = newWallet();
      await browser.proveWallet(wallet);
      const start = await browser.call('GET', `/api/x-auth/authorize?wallet=${wallet.address}`);
      expect(start.status).toBe(302);
      const provider = await fetch(start.location!, { redirect: 'manual' });
      expect(provider.status).toBe(302);
      const callback = new URL(provider.headers.get('location')!);
      expect(callback.origin).toBe(base);
      const back = await browser.call('GET', `${callback.pathname}${callback.search}`);
      expect(back.status, JSON.stringify(back.json)).toBe(302);
      const session = await browser.call('GET', '/api/session');
      expect(session.json.account).toMatchObject({ provider: 'local', id: 'johndoe' });
      const claimed = await browser.call('POST', '/api/x-auth/claim', {
        wallet: wallet.address,
        session: session.json.claim_session,
      });
      expect(claimed.status, JSON.stringify(claimed.json)).toBe(200);
      expect(claimed.json.transfers).toEqual([
        expect.objectContaining({ token: 'PTM', amount: '100' }),
        expect.objectContaining({ token: 'SOL', amount: '0.05' }),
      ]);
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});
