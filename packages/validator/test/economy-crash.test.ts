import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KeyPair, signRequest } from '@tensormine/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { builtEntry } from '../../../test-support/services.ts';
import { PROCESS_START_TIMEOUT_MS, SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { openSqliteStorage } from '../src/store/sqlite.js';
import { hex } from './economy-helpers.js';
import { testKey } from './helpers.js';

/**
 * Crash test: a real validator process is killed with SIGKILL while several clients stream
 * signed economy operations at it, then restarted on the same data directory, several times.
 * Every acknowledged operation must survive with the same result (its identical signed request
 * returns it again), no operation may apply twice (a retry of an operation whose answer was
 * lost applies it at most once), and every token stays conserved.
 */

const KEYS = [0, 1, 2, 3].map((i) => testKey(`crash-${i}`));
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function startValidator(
  dataDir: string,
  genesisFile: string,
): Promise<{ child: ChildProcess; url: string }> {
  // From the validator's build (made once per run) while it is current, else from the sources.
  const entry = await builtEntry('validator');
  const child = spawn(
    process.execPath,
    [
      ...(entry === 'built'
        ? ['dist/bin.js']
        : ['--conditions=@tensormine/source', '--import', 'tsx', 'src/bin.ts']),
      'start',
      '--port',
      '0',
    ],
    {
      cwd: join(import.meta.dirname, '..'),
      env: {
        ...process.env,
        TENSORMINE_DATA_DIR: dataDir,
        TENSORMINE_GENESIS_FILE: genesisFile,
        TENSORMINE_LOG_LEVEL: 'error',
        TENSORMINE_RATE_LIMIT_PER_SECOND: '100000',
        TENSORMINE_RATE_LIMIT_BURST: '100000',
        TENSORMINE_KEY_RATE_LIMIT_PER_SECOND: '100000',
        TENSORMINE_KEY_RATE_LIMIT_BURST: '100000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`the validator did not start: ${out}`)),
      PROCESS_START_TIMEOUT_MS,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('exit', (code) => reject(new Error(`the validator exited (${code}): ${out}`)));
  });
  return { child, url };
}

interface Op {
  readonly path: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** The 200 body once acknowledged. */
  result?: Record<string, unknown>;
}

function makeOp(key: KeyPair, n: number): Op {
  const pubkey = hex(key);
  const kind = n % 4;
  let path: string;
  let body: object;
  if (kind === 0 || kind === 1) {
    const to = KEYS[(KEYS.indexOf(key) + 1 + (n % 3)) % KEYS.length]!;
    path = '/transfer';
    body = { from: pubkey, to: hex(to), token: 'PTM', amount: `0.${(n % 97) + 1}` };
  } else if (kind === 2) {
    path = '/swap/execute';
    body = { from_token: 'USDC', to_token: 'PTM', amount: '0.5', min_received: '0', pubkey };
  } else {
    path = '/stake';
    body = { amount: '0.25', lock_period_days: 0, pubkey };
  }
  const text = JSON.stringify(body);
  const headers = {
    ...signRequest({ method: 'POST', path, body: text, secretKey: key.secretKey }),
    'content-type': 'application/json',
  };
  return { path, body: text, headers };
}

/** Resolves once the process has exited (at once if it already has). */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function send(
  url: string,
  op: Op,
): Promise<{ status: number; body: Record<string, unknown> } | 'lost'> {
  try {
    const res = await fetch(`${url}${op.path}`, { method: 'POST', headers: op.headers, body: op.body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return 'lost';
  }
}

describe('kill -9 during a stream of economy operations', () => {
  it('loses no acknowledged operation, applies none twice and conserves every token, over repeated crashes', {
    timeout: SLOW_TEST_TIMEOUT_MS,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'economy-crash-'));
    dirs.push(dir);
    const dataDir = join(dir, 'data');
    const genesisFile = join(dir, 'genesis.json');
    writeFileSync(
      genesisFile,
      JSON.stringify({
        reserve: '1000',
        pools: [{ base: 'PTM', quote: 'USDC', base_reserve: '100000', quote_reserve: '5000', fee_bps: 30 }],
        allocations: KEYS.flatMap((k) => [
          { pubkey: hex(k), token: 'PTM', amount: '100000' },
          { pubkey: hex(k), token: 'USDC', amount: '100000' },
        ]),
      }),
    );

    const all: Op[] = [];
    const unknown: Op[] = [];
    let counter = 0;
    let lost = 0;
    for (let round = 0; round < 3; round++) {
      const { child, url } = await startValidator(dataDir, genesisFile);
      // Operations whose answer was lost in the previous crash: their identical request now
      // returns the stored result, or (never applied) executes now.
      for (const op of unknown.splice(0)) {
        const r = await send(url, op);
        expect(r, op.path).not.toBe('lost');
        if (r !== 'lost' && r.status === 200) op.result = r.body;
        else expect(r, `${op.path} ${op.body}`).toMatchObject({ body: { code: 'request_replayed' } });
      }
      // Every acknowledged operation so far: the same result again, nothing moved twice.
      for (const op of all.filter((o) => o.result !== undefined)) {
        const r = await send(url, op);
        expect(r).toMatchObject({ status: 200 });
        expect((r as { body: unknown }).body).toEqual(op.result);
      }
      // A stream of new operations from four clients; SIGKILL in the middle of it: after a
      // number of acknowledged operations (10 to 29, at random), not after a time, so that a slow
      // machine cuts the stream as far in as a fast one.
      let killed = false;
      let acknowledgedInRound = 0;
      const killAfter = 10 + Math.floor(Math.random() * 20);
      await Promise.all(
        KEYS.map(async (key) => {
          while (!killed) {
            const op = makeOp(key, counter++);
            all.push(op);
            const r = await send(url, op);
            if (r === 'lost') {
              lost++;
              unknown.push(op);
            } else if (r.status === 200) {
              op.result = r.body;
              if (++acknowledgedInRound >= killAfter && !killed) {
                killed = true;
                child.kill('SIGKILL');
              }
            } else throw new Error(`unexpected refusal ${r.status} ${JSON.stringify(r.body)}`);
          }
        }),
      );
      await exited(child);
      expect(child.signalCode).toBe('SIGKILL');
    }

    // Last restart: settle what is still unknown, then check the books offline.
    const { child, url } = await startValidator(dataDir, genesisFile);
    for (const op of unknown.splice(0)) {
      const r = await send(url, op);
      if (r !== 'lost' && r.status === 200) op.result = r.body;
    }
    for (const op of all.filter((o) => o.result !== undefined)) {
      const r = await send(url, op);
      expect((r as { body: unknown }).body).toEqual(op.result);
    }
    child.kill('SIGTERM');
    await exited(child);

    const storage = await openSqliteStorage({ path: join(dataDir, 'validator.db') });
    try {
      await storage.read(async (tx) => {
        expect(await tx.economy.supply()).toEqual(await tx.economy.issued());
        const acknowledged = all.filter((o) => o.result !== undefined);
        expect(acknowledged.length).toBeGreaterThan(20);
        // The kills did cut requests in flight (each of the 4 clients had one outstanding).
        expect(lost).toBeGreaterThan(0);
        const byRef = new Map<string, number>();
        for (const e of await tx.ledger.list({ limit: 1_000_000 })) {
          if (e.ref !== null) byRef.set(e.ref, (byRef.get(e.ref) ?? 0) + 1);
        }
        for (const op of acknowledged) {
          const r = op.result!;
          const ref = (r.transfer_id ?? r.swap_id ?? r.stake_id) as string;
          // transfer: -from +to; stake: -key +@stake; swap: 2 legs each side and the fee pair.
          const expected = op.path === '/swap/execute' ? 6 : 2;
          expect(byRef.get(ref), `${op.path} ${ref}`).toBe(expected);
        }
        const stakes = await tx.economy.stakes.allOpen();
        expect(stakes.length).toBe(acknowledged.filter((o) => o.path === '/stake').length);
      });
    } finally {
      await storage.close();
    }
  });
});
