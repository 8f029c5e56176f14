import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type Signer, solveWork } from '@tensormine/client';
import { missingCpuFlags } from '@tensormine/miner';
import { formatCoord } from '@tensormine/protocol';
import { describe, expect, test } from 'vitest';
import { referenceChecksum } from '../src/bench-reference.js';
import { run } from '../src/index.js';
import { closedUrl, runCli, tempHome, testIo, testKey, testValidator, waitFor } from './helpers.js';

async function mineBlocks(url: string, signer: Signer, count: number): Promise<void> {
  const client = createClient({ url, signer });
  for (let i = 0; i < count; i++) {
    const work = await client.getWork();
    const solution = solveWork(work, signer)!;
    await client.submitWork(work, solution);
  }
  await client.close();
}

describe('miner register', () => {
  test('registers the key as the device type and says so', async () => {
    const { url } = await testValidator();
    const { env, dir } = await tempHome();
    const signer = await testKey(join(dir, 'k.key'));
    const { code, stdout } = await runCli(
      ['register', '--url', url, '--key', join(dir, 'k.key'), '--device-type', 'esp32'],
      env,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(`^registered ${signer.publicKeyHex} as esp32 on ${url} \\(device [\\w-]+\\)\\n$`),
    );
  });

  test('registers on every validator of the list and reports the ones that did not answer (exit 3)', async () => {
    const a = await testValidator();
    const down = await closedUrl();
    const { env, dir } = await tempHome();
    await testKey(join(dir, 'k.key'));
    const { code, stdout, stderr } = await runCli(
      ['register', '--url', a.url, '--url', down, '--key', join(dir, 'k.key')],
      env,
    );
    expect(code).toBe(3);
    expect(stdout).toContain(`as native on ${a.url}`);
    expect(stderr).toBe(
      `miner: ${down}: no answer from ${down} (ECONNREFUSED)\nminer: registered on 1 of 2 validators\n`,
    );
  });
});

describe('miner status', () => {
  test('shows the validator, its status and the miner account of the key', async () => {
    const { url } = await testValidator({ hexDifficulty: 16n });
    const { env, dir } = await tempHome();
    const key = join(dir, 'k.key');
    const signer = await testKey(key, [url]);
    await mineBlocks(url, signer, 2);
    const { code, stdout } = await runCli(['status', '--url', url, '--key', key], env);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^validator  ${url}  ok, tensormine-validator [\\d.]+, protocols 4\\.0 4\\.1, up \\d+s, \\d+ ms$`,
      ),
    );
    expect(lines[1]).toMatch(/^node {2}node-[0-9a-f]+ \(v4\.1, local_only, pool solo\)$/);
    expect(lines[2]).toMatch(/^v4\.0 {2}difficulty 2, tensors up to 64, proofs 0 valid \/ 0 rejected$/);
    expect(lines[3]).toMatch(/^v4\.1 {2}hexchain difficulty \d+, 3 cells occupied, 2 blocks accepted$/);
    expect(lines[4]).toMatch(
      new RegExp(
        `^miner {6}${signer.publicKeyHex} registered as native, blocks 2, proofs 0 accepted / 0 rejected, rewards [\\d.]+ PTM, balances [\\d.]+ PTM$`,
      ),
    );
  });

  test('--json gives the health of each validator, the status and the account', async () => {
    const { url } = await testValidator();
    const down = await closedUrl();
    const { env, dir } = await tempHome();
    const signer = await testKey(join(dir, 'k.key'), [url]);
    const { code, stdout } = await runCli(
      ['status', '--json', '--url', down, '--url', url, '--key', join(dir, 'k.key')],
      env,
    );
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as {
      validators: { url: string; up: boolean; reason?: string }[];
      url: string;
      miner: { pubkey: string; registered: boolean };
    };
    expect(out.validators[0]).toEqual({ url: down, up: false, reason: 'ECONNREFUSED' });
    expect(out.validators[1]).toMatchObject({ url, up: true, status: 'ok' });
    expect(out.url).toBe(url);
    expect(out.miner).toMatchObject({ pubkey: signer.publicKeyHex, registered: true });
  });

  test('no validator answering is exit 3 and names the URL and the reason', async () => {
    const { env } = await tempHome();
    const down = await closedUrl();
    const { code, stdout, stderr } = await runCli(['status', '--url', down], env);
    expect(code).toBe(3);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `miner: no answer from ${down} (ECONNREFUSED)\n  start a local validator with "miner validator start", or pass --url\n`,
    );
  });
});

describe('miner lattice', () => {
  test('prints the lattice status and a page of blocks with the command for the next one', async () => {
    const { url } = await testValidator({ hexDifficulty: 16n });
    const { env, dir } = await tempHome();
    const signer = await testKey(join(dir, 'k.key'), [url]);
    await mineBlocks(url, signer, 3);
    const first = await runCli(['lattice', '--url', url, '--limit', '2'], env);
    expect(first.code).toBe(0);
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^lattice {2}3 blocks \(4 cells with the genesis\), max depth \d, frontier \d+, difficulty \d+, block interval 10 s, retarget in \d+ blocks$/,
    );
    expect(lines[1]).toMatch(/^coord\s+depth\s+miner\s+difficulty\s+accepted\s+block hash$/);
    expect(lines).toHaveLength(6);
    expect(lines[4]).toBe('2 of 3 blocks');
    const next = /--cursor (\S+)$/.exec(lines[5]!)![1]!;
    expect(lines[5]).toBe(`next page: miner lattice --limit 2 --cursor ${next}`);
    const second = await runCli(
      ['lattice', '--url', url, '--limit', '2', '--cursor', next.replace(/^'|'$/g, '')],
      env,
    );
    expect(second.stdout).toContain('1 of 3 blocks');
    const json = await runCli(['lattice', '--url', url, '--json'], env);
    const page = (
      JSON.parse(json.stdout) as { page: { blocks: { coord: { q: number; r: number; s: number } }[] } }
    ).page;
    expect(page.blocks).toHaveLength(3);
    expect(first.stdout).toContain(formatCoord(page.blocks[0]!.coord));
  });

  test('a validator without the hexchain is said so (exit 1)', async () => {
    const { url } = await testValidator({ hexchain: false });
    const { env } = await tempHome();
    const { code, stderr } = await runCli(['lattice', '--url', url], env);
    expect(code).toBe(1);
    expect(stderr).toBe(`miner: ${url} does not serve the v4.1 hexchain\n`);
  });

  test('a --limit out of range is a usage error (exit 2)', async () => {
    const { env } = await tempHome();
    const { code, stderr } = await runCli(['lattice', '--limit', '0'], env);
    expect(code).toBe(2);
    expect(stderr).toBe('miner: option --limit: expected an integer in [1, 500], got "0"\n');
  });
});

describe('miner devices', () => {
  test('lists the devices registered on the validator', async () => {
    const { url } = await testValidator();
    const { env, dir } = await tempHome();
    const a = await testKey(join(dir, 'a.key'), [url]);
    const b = await testKey(join(dir, 'b.key'));
    await runCli(['register', '--url', url, '--key', join(dir, 'b.key'), '--device-type', 'esp8266'], env);
    const { code, stdout } = await runCli(['devices', '--url', url], env);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('registered devices: 2 (native 1, esp32 0, esp8266 1)');
    expect(lines[1]).toMatch(/^device\s+public key\s+type\s+port\s+last seen\s+rate\s+work\s+callback$/);
    expect(lines).toHaveLength(4);
    expect(lines.find((l) => l.includes(a.publicKeyHex))).toMatch(
      new RegExp(`^dev-\\S+\\s+${a.publicKeyHex}\\s+native\\s+-\\s+(never|\\d+s ago)\\s+-\\s+-\\s+none$`),
    );
    expect(lines.find((l) => l.includes(b.publicKeyHex))).toMatch(
      new RegExp(`^dev-\\S+\\s+${b.publicKeyHex}\\s+esp8266\\s+-\\s+(never|\\d+s ago)\\s+-\\s+-\\s+none$`),
    );
    const json = JSON.parse((await runCli(['devices', '--url', url, '--json'], env)).stdout) as {
      registered: { total: number };
    };
    expect(json.registered.total).toBe(2);
  });
});

/** What `--kernel auto` runs here: native on x86-64 with SHA-NI and AVX2 (CI's CPU and compiler). */
const AUTO_KERNEL = process.arch === 'x64' && missingCpuFlags({})?.length === 0 ? 'native' : 'wasm';

describe('miner bench', () => {
  test('prints a rate and a checksum per kernel; the checksum depends on neither the threads nor the kernel', async () => {
    const { env } = await tempHome();
    const args = ['bench', '--amount', '64k', '--tensor-iterations', '0'];
    const one = await runCli([...args, '--threads', '1', '--kernel', 'js'], env);
    const two = await runCli([...args, '--threads', '2'], env);
    expect(one.code).toBe(0);
    const lines = one.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('bench: 1 thread, 64000 hexchain hashes, 0 iterations per tensor case');
    expect(lines[1]).toMatch(
      /^hexchain\s+[\d.]+ [kMG]?H\/s\s+\d+ results\s+checksum [0-9a-f]{16}\s+\([\d.]+ s\)$/,
    );
    expect(lines[3]).toBe('kernel errors 0');
    expect(lines[4]).toBe('kernel js');
    expect(two.stdout.trimEnd().split('\n').at(-1)).toBe(`kernel ${AUTO_KERNEL}`);
    const checksum = (out: string) => /^checksum ([0-9a-f]{64})$/m.exec(out)![1];
    expect(checksum(two.stdout)).toBe(checksum(one.stdout));
  });

  test('checks the checksums against the published reference: "ok" (like xmrig), MISMATCH otherwise', async () => {
    const { env } = await tempHome();
    const { code, stdout } = await runCli(
      ['bench', '--amount', '1M', '--tensor-iterations', '0', '--threads', '2'],
      env,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/^hexchain\s+.*checksum 5b10def4d3513f02 ok\s+\(/m);
    expect(stdout).toMatch(/^checksum [0-9a-f]{64} ok$/m);
    // The default amounts have published checksums (every case).
    expect(referenceChecksum('hexchain', { hexchainHashes: 4_194_304, tensorIterations: 4096 })).toMatch(
      /^[0-9a-f]{64}$/,
    );
    for (const name of [
      'native matmul 64x64',
      'native conv 8x64x64',
      'esp32 matmul 32x32',
      'esp32 conv 4x32x32',
      'esp8266 matmul 16x16',
    ]) {
      expect(referenceChecksum(`tensor ${name}`, { hexchainHashes: 0, tensorIterations: 4096 })).toMatch(
        /^[0-9a-f]{64}$/,
      );
    }
  });

  test('--json gives the cases, the checksum and the kernel errors', async () => {
    const { env } = await tempHome();
    const { code, stdout } = await runCli(
      ['bench', '--json', '--amount', '0', '--tensor-iterations', '16', '--threads', '1'],
      env,
    );
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as {
      threads: number;
      kernel: string;
      cases: { name: string }[];
      kernelErrors: number;
    };
    expect(result.threads).toBe(1);
    expect(result.kernel).toBe(AUTO_KERNEL);
    expect(result.kernelErrors).toBe(0);
    expect(result.cases.every((c) => c.name.startsWith('tensor '))).toBe(true);
  });

  test('refuses an amount that is not a count (exit 2)', async () => {
    const { env } = await tempHome();
    const { code, stderr } = await runCli(['bench', '--amount', 'lots'], env);
    expect(code).toBe(2);
    expect(stderr).toBe('miner: option --amount: expected a count like 4194304, 256k or 1M, got "lots"\n');
  });

  test('refuses an unknown kernel (exit 2)', async () => {
    const { env } = await tempHome();
    const { code, stderr } = await runCli(['bench', '--kernel', 'simd'], env);
    expect(code).toBe(2);
    expect(stderr).toBe('miner: option --kernel: expected one of auto, native, wasm, js, got "simd"\n');
  });
});

describe('miner validator start', () => {
  test('runs the reference validator with its own settings until stopped', async () => {
    const { env } = await tempHome();
    const io = testIo({ ...env, TENSORMINE_HEX_DIFFICULTY: '4096' });
    const done = run(['validator', 'start', '--port', '0', '--data-dir', ':memory:'], io);
    await waitFor(
      () => /listening on (http:\S+)/.test(io.stdout.text),
      'the listening line',
      undefined,
      () => io.stderr.text,
    );
    const url = /listening on (http:\S+)/.exec(io.stdout.text)![1]!;
    expect(io.stdout.text).toContain('  data: in memory (nothing is kept)\n');
    expect(io.stdout.text).toContain(`  mine against it: miner mine --url ${url}\n`);
    const health = (await (await fetch(`${url}/health`)).json()) as { status: string };
    expect(health.status).toBe('ok');
    const status = (await (await fetch(`${url}/api/hexchain/status`)).json()) as { difficulty: number };
    expect(status.difficulty).toBe(4096);
    io.controller.abort();
    expect(await done).toBe(0);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  test('takes the options of tensormine-validator and checks them the same way (exit 2)', async () => {
    const { env } = await tempHome();
    const help = await runCli(['validator', 'start', '--help'], env);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      '--hex-difficulty <value> initial v4.1 difficulty (expected hashes per block) (env TENSORMINE_HEX_DIFFICULTY; default 1048576)',
    );
    const { code, stderr } = await runCli(
      ['validator', 'start', '--difficulty', '99', '--data-dir', ':memory:'],
      env,
    );
    expect(code).toBe(2);
    expect(stderr).toBe('miner: option difficulty: expected an integer in [1, 24], got "99"\n');
  });
});

describe('usage', () => {
  test('--version and --help exit 0', async () => {
    const { env } = await tempHome();
    expect(await runCli(['--version'], env)).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    const help = await runCli(['mine', '--help'], env);
    expect(help.code).toBe(0);
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toContain('--url <url> a validator URL; repeat for failover, in order');
    expect(text).toContain('(env MINER_URL; default http://127.0.0.1:8420)');
    expect(help.stdout).toContain('s results, c connection, q quit.');
  });

  test('an unknown option or command is exit 2 with the help pointer', async () => {
    const { env } = await tempHome();
    const option = await runCli(['mine', '--threds', '2'], env);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("miner: unknown option '--threds'\n(Did you mean --threads?)");
    const command = await runCli(['mnie'], env);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("miner: unknown command 'mnie'");
  });

  test('no command prints the help on stderr (exit 2)', async () => {
    const { env } = await tempHome();
    const { code, stderr } = await runCli([], env);
    expect(code).toBe(2);
    expect(stderr).toContain('Usage: miner [options] [command]');
  });
});

describe('the systemd unit (contrib/tensormine-miner.service)', () => {
  test('its ExecStart runs this bin with settings the miner accepts, and it stops with SIGTERM', async () => {
    const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
    const unit = await readFile(join(pkg, 'contrib', 'tensormine-miner.service'), 'utf8');
    const value = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!);
    const [exec] = value('ExecStart');
    const [node, script, command, ...args] = exec!.split(' ');
    expect(node).toBe('/opt/tensormine/node_modules/.bin/node');
    expect(script).toBe('/opt/tensormine/packages/cli/bin/miner.js');
    expect(existsSync(join(pkg, '..', '..', script!.replace('/opt/tensormine/', '')))).toBe(true);
    expect(existsSync(join(pkg, '..', '..', node!.replace('/opt/tensormine/', '')))).toBe(true);
    expect(command).toBe('mine');
    expect(value('KillSignal')).toEqual(['SIGTERM']);
    // The same settings, from the unit's environment, are valid for the miner.
    const unitEnv = Object.fromEntries(value('Environment').map((e) => e.split(/=(.*)/s).slice(0, 2)));
    const { env } = await tempHome();
    const { code, stdout, stderr } = await runCli(['config', '--json', ...args], {
      ...env,
      MINER_URL: unitEnv.MINER_URL,
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const config = JSON.parse(stdout) as { settings: { name: string; value: unknown }[] };
    const setting = (name: string) => config.settings.find((s) => s.name === name)?.value;
    expect(setting('logFile')).toBe('/var/log/tensormine/miner.log');
    expect(setting('tui')).toBe(false);
    expect(setting('urls')).toEqual([unitEnv.MINER_URL]);
  });
});
