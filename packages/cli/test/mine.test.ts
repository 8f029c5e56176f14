import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient, Signer } from '@tensormine/client';
import { hexchainJob, Journal, missingCpuFlags, resultFromNonce } from '@tensormine/miner';
import { encodeHeader, hashMeetsTarget, hexPowHash } from '@tensormine/protocol';
import { createValidator } from '@tensormine/validator';
import { Value } from 'typebox/value';
import { describe, expect, test } from 'vitest';
import { within } from '../../../test-support/wait.ts';
import { JsonEventSchema, run } from '../src/index.js';
import type { MiningSession } from '../src/session.js';
import { cleanup, closedUrl, runCli, tempHome, testIo, testKey, testValidator, waitFor } from './helpers.js';

/** Starts `miner mine ...` in process; `stop()` aborts it (as SIGINT does) and resolves to the exit code. */
function startMine(
  argv: string[],
  env: Record<string, string | undefined>,
  options: { stdinTty?: boolean; reportIntervalMs?: number } = {},
) {
  const io = testIo(env, options);
  let session: MiningSession | undefined;
  const done = run(['mine', '--threads', '1', ...argv], io, {
    session: { retryDelayMs: 50 },
    ...(options.reportIntervalMs ? { reportIntervalMs: options.reportIntervalMs } : {}),
    onSession: (s) => {
      session = s;
    },
  });
  const stop = async () => {
    io.controller.abort('test');
    return done;
  };
  cleanup(async () => {
    io.controller.abort();
    await done;
  });
  return { io, done, stop, session: () => session };
}

describe('miner mine (plain lines)', () => {
  test('mines against a validator: start-up summary, then one xmrig line per result; stops cleanly', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    const signer = await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const m = startMine(['--url', url], env);
    await waitFor(
      () => /accepted \(2\/0\)/.test(m.io.stdout.text),
      'two accepted results',
      undefined,
      () => m.io.stdout.text + m.io.stderr.text,
    );
    expect(await m.stop()).toBe(0);
    const out = m.io.stdout.text;
    expect(out).toContain(`tensormine miner 0.1.0 (node ${process.versions.node})`);
    expect(out).toContain(
      ` * key        ${signer.publicKeyHex} (${join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key')})`,
    );
    expect(out).toContain(` * validator  ${url}\n`);
    const kernel = process.arch === 'x64' && missingCpuFlags({})?.length === 0 ? 'native' : 'wasm';
    expect(out).toContain(` * cpu        1 thread, intensity 1, kernel ${kernel}\n`);
    expect(out).toContain(
      ` * journal    ${join(env.XDG_DATA_HOME!, 'tensormine', 'miner', 'journal.jsonl')}\n`,
    );
    expect(out).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] new job h-\w+ \(v4\.1\) diff [\d.]+[kM]? on cpu$/m,
    );
    expect(out).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] accepted \(1\/0\) diff [\d.]+[kM]? \(\d+ ms\) by cpu#\d+$/m,
    );
    expect(out).toMatch(/stopping: workers, boards, journal\n(.*\n)*.*\] stopped\n$/);
    expect(m.io.stderr.text).toBe('');
    // Nothing is left unsettled: every result was accepted and taken off the journal.
    const journal = await readFile(join(env.XDG_DATA_HOME!, 'tensormine', 'miner', 'journal.jsonl'), 'utf8');
    expect(journal).toBe('');
  });

  test('mines v4.0 tensor proofs on a validator without the hexchain', async () => {
    const { url } = await testValidator({ hexchain: false });
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const m = startMine(['--url', url], env);
    await waitFor(
      () => m.io.stdout.text.includes('accepted (1/0)'),
      'an accepted proof',
      undefined,
      () => m.io.stdout.text + m.io.stderr.text,
    );
    expect(m.io.stdout.text).toMatch(/new job \S+ \(v4\.0\) diff [\d.]+[kM]? on cpu/);
    expect(await m.stop()).toBe(0);
  });

  test('--url A --url B with the key registered on A only: registers it on B too, says so, and fails over to B', async () => {
    const a = await testValidator({ hexDifficulty: 256n });
    const b = await testValidator({ hexDifficulty: 256n });
    const { env } = await tempHome();
    const signer = await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [a.url]);
    const m = startMine(['--url', a.url, '--url', b.url], env);
    await waitFor(() => m.io.stdout.text.includes('accepted (1/0)'), 'an accepted result on A');
    expect(m.io.stdout.text).toContain(
      ` * register   the key was registered on ${a.url} only: registered it on ${b.url} too (failover needs it on every validator)\n`,
    );
    const client = createClient({ url: b.url, signer });
    cleanup(() => client.close());
    expect((await client.miners.get()).registered).toBe(true);
    // A goes away: the miner fails over to B, which knows the key.
    await a.validator.close();
    let blocksOnB = 0;
    const poll = setInterval(() => {
      client.miners
        .get()
        .then((account) => {
          blocksOnB = account.blocks_accepted;
        })
        .catch(() => {});
    }, 200);
    cleanup(() => clearInterval(poll));
    await waitFor(
      () => blocksOnB > 0,
      'a block accepted by B',
      undefined,
      () => m.io.stdout.text,
    );
    expect(m.io.stdout.text).not.toContain('miner_not_registered');
    expect(await m.stop()).toBe(0);
  });

  test('failover without noise: a result journaled for a validator that went down waits for it; results on the other raise no connection events', async () => {
    // A holds every submission until it goes down: a result is in flight there when it does.
    const a = await createValidator({
      dataDir: ':memory:',
      hexDifficulty: 256n,
      logger: false,
      rateLimitPerSecond: 100_000,
      rateLimitBurst: 100_000,
      keyRateLimitPerSecond: 100_000,
      keyRateLimitBurst: 100_000,
    });
    const arrived = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    a.app.addHook('onRequest', async (request) => {
      if (request.url !== '/api/hexchain/submit') return;
      arrived.resolve();
      await release.promise;
    });
    cleanup(() => release.resolve());
    cleanup(() => a.close());
    const aUrl = await a.listen({ host: '127.0.0.1', port: 0 });
    const b = await testValidator({ hexDifficulty: 256n });
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [aUrl, b.url]);
    const m = startMine(['--url', aUrl, '--url', b.url, '--json'], env);
    // A goes down while the miner has a result in flight there (held by A's hook): at once, in
    // the same turn, before another request can reach A.
    await within(arrived.promise, 'a result submitted to A');
    a.app.server.closeAllConnections();
    release.resolve();
    await a.close();
    const events = () =>
      m.io.stdout.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; url?: string });
    await waitFor(
      () => events().filter((e) => e.type === 'accepted').length >= 15,
      '15 results accepted by B',
    );
    expect(await m.stop()).toBe(0);
    const all = events();
    const lost = all.filter((e) => e.type === 'connection-lost');
    const restored = all.filter((e) => e.type === 'connection-restored');
    // One validator went down once: at most its lost line and the line of the move to B.
    expect(lost.length).toBeLessThanOrEqual(1);
    expect(restored.length).toBeLessThanOrEqual(1);
    for (const e of [...lost, ...restored]) expect(e.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(all.filter((e) => e.type === 'journaled')).toHaveLength(1); // the scenario happened
  });

  test('a validator of the list that was down at start gets the key registered when it answers', async () => {
    const a = await testValidator({ hexDifficulty: 256n });
    const down = await closedUrl();
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [a.url]);
    const m = startMine(['--url', a.url, '--url', down], env);
    await waitFor(() => m.io.stdout.text.includes('accepted (1/0)'), 'an accepted result on A');
    expect(m.io.stdout.text).toContain(` * note       could not check the key on ${down} (ECONNREFUSED)`);
    expect(await m.stop()).toBe(0);
  });

  test('a key registered on no validator of the list: the command that registers it on all (exit 4)', async () => {
    const a = await testValidator();
    const b = await testValidator();
    const { env } = await tempHome();
    const key = join(env.HOME!, 'key.json');
    const signer = await testKey(key);
    const { code, stderr } = await runCli(['mine', '--url', a.url, '--url', b.url, '--key', key], env);
    expect(code).toBe(4);
    expect(stderr).toBe(
      `miner: key ${signer.publicKeyHex} is not registered on ${a.url}, ${b.url}\n  register it with: miner register --url ${a.url} --url ${b.url} --key ${key}\n`,
    );
  });

  test('an unregistered key stops at once with the exact command that registers it (exit 4)', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    const key = join(env.HOME!, 'my key.json');
    const signer = await testKey(key);
    const { code, stderr, stdout } = await runCli(
      ['mine', '--url', url, '--key', key, '--threads', '1'],
      env,
    );
    expect(code).toBe(4);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `miner: key ${signer.publicKeyHex} is not registered on ${url}\n  register it with: miner register --url ${url} --key '${key}'\n`,
    );
  });

  test('with no validator answering it says which URLs it tried and why, and keeps retrying until one is back', async () => {
    const a = await closedUrl();
    const b = await closedUrl();
    const { env } = await tempHome();
    const signer = await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'));
    const m = startMine(['--url', a, '--url', b], env);
    await waitFor(() => m.io.stdout.text.includes(' unreachable ('), 'the unreachable line');
    expect(m.io.stdout.text).toContain(
      ` * note       no validator answers yet (tried ${a} (ECONNREFUSED), ${b} (ECONNREFUSED)); mining starts when one does\n`,
    );
    expect(m.io.stdout.text).toMatch(
      new RegExp(
        `\\] validator ${a} unreachable \\(no validator reachable: tried ${a} \\(ECONNREFUSED\\), ${b} \\(ECONNREFUSED\\)\\); retrying in 0 s\\n`,
      ),
    );
    // Still trying (with backoff): a validator that comes up at the second URL gets the work.
    let calls = 0;
    const source = m.session()!.source;
    const getWork = source.getWork.bind(source);
    source.getWork = () => {
      calls++;
      return getWork();
    };
    await waitFor(() => calls >= 2, 'two more attempts');
    const validator = await createValidator({ dataDir: ':memory:', hexDifficulty: 65_536n, logger: false });
    cleanup(() => validator.close());
    await validator.listen({ host: '127.0.0.1', port: Number(new URL(b).port) });
    const client = createClient({ url: b, signer });
    await client.miners.register();
    await client.close();
    await waitFor(
      () => m.io.stdout.text.includes('accepted (1/0)'),
      'an accepted result from the second URL',
    );
    expect(m.io.stdout.text).toMatch(/\] validator http:\/\/127\.0\.0\.1:\d+ back after \d+ s\n/);
    expect(await m.stop()).toBe(0);
  });

  test('resubmits the results an earlier run left in the journal', async () => {
    const { url } = await testValidator({ hexDifficulty: 16n });
    const { env } = await tempHome();
    const signer = await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    // A block found by an earlier run that could not deliver it.
    const client = createClient({ url, signer });
    const work = await client.getWork();
    await client.close();
    if (work.version !== '4.1') throw new Error('expected hexchain work');
    const job = hexchainJob(work.challenge, signer.publicKey);
    let nonce = 0;
    while (!hashMeetsTarget(hexPowHash(encodeHeader({ ...job, nonce })), job.target)) nonce++;
    const verdict = resultFromNonce(job, nonce, { device: 'cpu', worker: 0 });
    if (!verdict.ok) throw new Error(verdict.message);
    const journalPath = join(env.HOME!, 'journal.jsonl');
    const journal = await Journal.open(journalPath);
    await journal.add(verdict.found);
    await journal.flush();
    const m = startMine(['--url', url, '--journal', journalPath], env);
    await waitFor(() => m.io.stdout.text.includes('accepted ('), 'the journaled result accepted');
    expect(m.io.stdout.text).toContain('journal holds 1 result from an earlier run');
    expect(m.io.stdout.text).toContain('resubmitting 1 journaled result');
    expect(await m.stop()).toBe(0);
  });

  test('fails over to the next validator when the first does not answer', async () => {
    const down = await closedUrl();
    const { url } = await testValidator();
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const m = startMine(['--url', down, '--url', url], env, { stdinTty: true });
    await waitFor(() => m.io.stdout.text.includes('accepted (1/0)'), 'an accepted result');
    m.io.stdin.write('c');
    await waitFor(() => m.io.stdout.text.includes('using validator'), 'the connection line');
    expect(m.io.stdout.text).toMatch(
      new RegExp(
        `\\] using validator ${url}, v4\\.1, latency \\d+ ms, connected, uptime \\d+s, fallbacks ${down} \\(down: network_error\\)\\n`,
      ),
    );
    expect(await m.stop()).toBe(0);
  });

  test('keys from a terminal stdin: h hashrate, s results, p pause, r resume, q quit', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const m = startMine(['--url', url], env, { stdinTty: true });
    await waitFor(() => m.io.stdout.text.includes('accepted (1/0)'), 'an accepted result');
    expect(m.io.stdout.text).toContain(
      ' * keys       h hashrate, p pause, r resume, s results, c connection, q quit\n',
    );
    m.io.stdin.write('hs');
    await waitFor(() => m.io.stdout.text.includes('] results accepted'), 'the results line');
    expect(m.io.stdout.text).toMatch(
      // n/a before the first sample, ~ while the window fills (how far depends on the machine's speed)
      /\] speed 10s\/60s\/15m (n\/a|~?[\d.]+ [kMG]?H\/s) (n\/a|~?[\d.]+ [kMG]?H\/s) n\/a max /,
    );
    expect(m.io.stdout.text).toMatch(
      /\] results accepted \d+, rejected 0, best diff [\d.]+[kMG]?, avg latency \d+ ms, journal \d+ pending\n/,
    );
    m.io.stdin.write('p');
    await waitFor(() => m.session()!.engine!.state === 'paused', 'the engine paused');
    expect(m.io.stdout.text).toMatch(/\] paused\n/);
    m.io.stdin.write('r');
    await waitFor(() => m.session()!.engine!.state !== 'paused', 'the engine resumed');
    expect(m.io.stdout.text).toMatch(/\] resumed\n/);
    m.io.stdin.write('q');
    expect(await m.done).toBe(0);
    expect(m.session()!.miner.stats().running).toBe(false);
  });

  test('--log-file appends the timestamped log lines to a file, whatever the screen shows', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const log = join(env.HOME!, 'logs', 'miner.log');
    const m = startMine(['--url', url, '--json', '--log-file', log], env);
    await waitFor(() => m.io.stdout.text.includes('"type":"accepted"'), 'an accepted event');
    expect(await m.stop()).toBe(0);
    const text = await readFile(log, 'utf8');
    expect(text).toMatch(/^\[[\d-]+ [\d:]+\] miner started \(pid \d+\)\ntensormine miner /);
    expect(text).toMatch(/\] accepted \(1\/0\) diff /);
    expect(text).toMatch(/\] stopped\n$/);
    expect((await stat(log)).mode & 0o777).toBe(0o600);
  });

  test('--json prints one JSON object per event', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    const signer = await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const m = startMine(['--url', url, '--json'], env, { reportIntervalMs: 300 });
    await waitFor(
      () =>
        m.io.stdout.text.includes('"type":"accepted"') &&
        /"type":"hashrate".*"10s":\d/.test(m.io.stdout.text),
      'an accepted event and a hashrate event with a rate',
    );
    expect(await m.stop()).toBe(0);
    const events = m.io.stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Every line matches the documented schema of its type.
    for (const e of events) {
      expect(
        [...Value.Errors(JsonEventSchema, e)].map((x) => x.message),
        JSON.stringify(e),
      ).toEqual([]);
    }
    const start = events[0]!;
    expect(start).toMatchObject({
      type: 'start',
      version: '0.1.0',
      key: signer.publicKeyHex,
      validators: [url],
      threads: 1,
      journal: join(env.XDG_DATA_HOME!, 'tensormine', 'miner', 'journal.jsonl'),
    });
    const stop = events.at(-1)!;
    expect(stop).toMatchObject({ type: 'stop', reason: 'test' });
    expect(stop.accepted).toBeGreaterThanOrEqual(1);
    const hashrate = events.find((e) => e.type === 'hashrate' && e['10s'] !== null)!;
    expect(hashrate).toMatchObject({ unit: 'H/s' });
    expect(typeof hashrate['10s']).toBe('number'); // the warm-up rate, not null, in the first 10 s
    expect(events.some((e) => e.type === 'note' && /^speed /.test(String(e.message)))).toBe(false);
    const accepted = events.find((e) => e.type === 'accepted')!;
    expect(accepted).toMatchObject({
      message: expect.stringMatching(/^accepted \(1\/0\) diff /),
      accepted: 1,
      rejected: 0,
    });
    expect(accepted.found).toMatchObject({ device: 'cpu', worker: 0 });
    expect(Object.keys(accepted.found as object).sort()).toEqual([
      'challengeId',
      'device',
      'id',
      'nonce',
      'worker',
    ]);
  });

  test('serves the control API with --api-port and a token', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const token = 'test-token-0123456789abcdef';
    const m = startMine(['--url', url, '--api-port', '0'], { ...env, MINER_API_TOKEN: token });
    await waitFor(() => /control API on (http:\S+)/.test(m.io.stdout.text), 'the control API line');
    const api = /control API on (http:\S+)/.exec(m.io.stdout.text)![1]!;
    await waitFor(() => m.io.stdout.text.includes('accepted (1/0)'), 'an accepted result');
    const res = await fetch(`${api}/api/summary`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const summary = (await res.json()) as { validatorUrl: string; sharesAccepted: number };
    expect(summary.validatorUrl).toBe(url);
    expect(summary.sharesAccepted).toBeGreaterThan(0);
    expect((await fetch(`${api}/api/summary`)).status).toBe(401);
    expect(await m.stop()).toBe(0);
  });

  test('mine --local starts a validator in process, registers a new key, and closes it on exit', async () => {
    const { env } = await tempHome();
    const m = startMine(['--local'], { ...env, TENSORMINE_HEX_DIFFICULTY: '4096' });
    await waitFor(() => m.io.stdout.text.includes('accepted (1/0)'), 'an accepted result');
    const dataDir = join(env.XDG_DATA_HOME!, 'tensormine', 'miner', 'local-validator');
    const keyPath = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key');
    const local = /validator {2}(http:\/\/127\.0\.0\.1:\d+) \(local, in this process; data in (.+)\)\n/.exec(
      m.io.stdout.text,
    );
    expect(local?.[2]).toBe(dataDir);
    const signer = await Signer.load(keyPath);
    expect(m.io.stdout.text).toContain(
      ` * key        ${signer.publicKeyHex} (new key written to ${keyPath})`,
    );
    expect(await m.stop()).toBe(0);
    await expect(fetch(`${local![1]}/health`)).rejects.toThrow();
  });

  test('mine --local --dashboard serves the live lattice dashboard and prints its URL', async () => {
    const { env } = await tempHome();
    const m = startMine(['--local', '--dashboard'], { ...env, TENSORMINE_HEX_DIFFICULTY: '4096' });
    await waitFor(() => m.io.stdout.text.includes('accepted (1/0)'), 'an accepted result');
    const shown =
      /dashboard on (http:\/\/127\.0\.0\.1:\d+\/) \(live lattice of (http:\/\/127\.0\.0\.1:\d+)\)/.exec(
        m.io.stdout.text,
      );
    expect(shown, m.io.stdout.text).not.toBeNull();
    const page = await fetch(shown![1]!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<canvas id="lattice"');
    const live = (await (await fetch(`${shown![1]}api/live`)).json()) as {
      blocks: number;
      validator_url: string;
    };
    expect(live.validator_url).toBe(shown![2]);
    expect(live.blocks).toBeGreaterThanOrEqual(1);
    expect(await m.stop()).toBe(0);
    await expect(fetch(shown![1]!)).rejects.toThrow();
  });
});

describe('miner mine: what the user got wrong', () => {
  test.each([
    [
      ['--no-cpu'],
      {},
      'miner: nothing to mine with: --no-cpu and no --device\n  add --device auto (ESP32 boards on USB) or leave out --no-cpu\n',
    ],
    [
      ['--api-port', '4048'],
      {},
      'miner: --api-port needs a token: --api-token or MINER_API_TOKEN (16 characters or more)\n  e.g. MINER_API_TOKEN=$(openssl rand -hex 16) miner mine --api-port 4048\n',
    ],
    [
      ['--local', '--url', 'http://a:8420'],
      {},
      'miner: --local mines against a validator in this process: leave out --url\n  or leave out --local to mine against the --url validators\n',
    ],
    [
      ['--intensity', '0'],
      {},
      'miner: option --intensity: expected a number in (0, 1] or a percentage, got "0"\n',
    ],
    [
      ['--api-token', 'short'],
      {},
      'miner: option --api-token: expected a token of at least 16 characters, got 5 characters\n',
    ],
  ])('mine %j is a usage error (exit 2)', async (argv, extraEnv, message) => {
    const { env } = await tempHome();
    const { code, stderr } = await runCli(['mine', ...argv], { ...env, ...extraEnv });
    expect(stderr).toBe(message);
    expect(code).toBe(2);
  });

  test('a missing key file names the commands that make one (exit 4)', async () => {
    const { env } = await tempHome();
    const key = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key');
    const { code, stderr } = await runCli(['mine', '--url', 'http://127.0.0.1:1'], env);
    expect(code).toBe(4);
    expect(stderr).toBe(
      `miner: key file ${key} does not exist\n  create one with: miner keys generate --key ${key}\n  or import an existing secret with: miner keys import FILE\n`,
    );
  });
});
