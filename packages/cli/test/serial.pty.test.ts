/**
 * Serial boards end to end: the simulated board (firmware-sim's tm-sim) on one end of a socat
 * pseudo-terminal pair, `miner` on the other end through --device PATH. Skipped (with the
 * reason) where socat or tm-sim is missing.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildFirmware, TM_SIM } from '../../../test-support/firmware.ts';
import { waitFor as waitUntil } from '../../../test-support/wait.ts';
import { run } from '../src/index.js';
import { cleanup, runCli, tempHome, testIo, testKey, testValidator, waitFor } from './helpers.js';

const unavailable = (() => {
  if (spawnSync('socat', ['-V'], { stdio: 'ignore' }).status !== 0) return 'socat is not installed';
  // Built before the run (test-support/firmware.ts); rebuilt when the C sources changed.
  try {
    buildFirmware();
  } catch (error) {
    return (error as Error).message;
  }
  if (!existsSync(TM_SIM)) return `${TM_SIM} is not built (make -C firmware-sim build/tm-sim)`;
  return undefined;
})();
const CHIP = '3c61053f6a28a4e1';

function stopOnCleanup(child: ChildProcess): void {
  cleanup(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  );
}

/** A socat pty pair with tm-sim on its device end; resolves to the host end. */
async function simulatedBoard(extra: readonly string[] = []): Promise<string> {
  const socat = spawn('socat', ['-d', '-d', 'pty,raw,echo=0', 'pty,raw,echo=0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  stopOnCleanup(socat);
  const [host, device] = await new Promise<[string, string]>((resolve, reject) => {
    let text = '';
    socat.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const paths = [...text.matchAll(/PTY is (\S+)/g)].map((m) => m[1]!);
      if (paths.length === 2 && text.includes('starting data transfer loop')) resolve([paths[0]!, paths[1]!]);
    });
    socat.on('exit', () => reject(new Error(`socat exited: ${text}`)));
  });
  const sim = spawn(TM_SIM, ['--port', device, '--chip-id', CHIP, '--rate-cap', '200000,4000', ...extra], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  stopOnCleanup(sim);
  return host;
}

// `npm test` never passes silently without these: TENSORMINE_SKIP_PTY=1 skips them knowingly.
if (unavailable !== undefined && process.env.TENSORMINE_SKIP_PTY !== '1') {
  test('the serial end-to-end tests can run here (socat, firmware-sim/build/tm-sim)', () => {
    throw new Error(
      `${unavailable}; install it (apt-get install socat make gcc zlib1g-dev), or set TENSORMINE_SKIP_PTY=1 to skip these tests knowingly`,
    );
  });
}

describe.skipIf(unavailable !== undefined)(`serial boards (${unavailable ?? 'socat and tm-sim'})`, () => {
  test('devices --local-boards lists the board: state, rate, firmware, chip id, port', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    const port = await simulatedBoard();
    const { code, stdout } = await runCli(['devices', '--url', url, '--local-boards', '--device', port], env);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('registered devices: 0 (native 0, esp32 0, esp8266 0)');
    expect(lines[1]).toBe('serial boards here: 1');
    expect(lines[2]).toMatch(
      /^board\s+state\s+rate\s+firmware\s+chip id\s+port\s+last valid work\s+found\s+hw err\s+crc\s+resync\s+retx\s+reboots\s+lost$/,
    );
    expect(lines[3]).toMatch(
      new RegExp(
        `^serial:${CHIP}\\s+idle\\s+[\\d.]+ [kM]?H/s \\(announced\\)\\s+tm-sim [\\d.]+\\s+${CHIP}\\s+${port}\\s+never(\\s+0){7}$`,
      ),
    );
  });

  test('mine --device PATH --no-cpu mines with the board', async () => {
    const { url } = await testValidator({ hexDifficulty: 4096n });
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const port = await simulatedBoard();
    const io = testIo(env);
    const done = run(['mine', '--url', url, '--device', port, '--no-cpu'], io);
    cleanup(async () => {
      io.controller.abort();
      await done;
    });
    await waitFor(
      () => io.stdout.text.includes('accepted (1/0)'),
      'a block from the board',
      undefined,
      () => io.stdout.text,
    );
    expect(io.stdout.text).toContain(` * boards     ${port}\n`);
    expect(io.stdout.text).toContain(`serial:${CHIP} (${port}): attached: tm-sim fw tm-sim`);
    expect(io.stdout.text).toMatch(
      new RegExp(`accepted \\(1/0\\) diff \\S+ \\(\\d+ ms\\) by serial:${CHIP}`),
    );
    expect(io.stdout.text).toMatch(/new job h-\w+ \(v4\.1\) diff [\d.]+k? on serial/);
    io.controller.abort();
    expect(await done).toBe(0);
  });

  test('mine --json: board notices with chip id and port (attached, rebooted, lost), results naming the board', async () => {
    const { url } = await testValidator({ hexDifficulty: 4096n });
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const port = await simulatedBoard(['--fault', 'reboot-after:4', '--fault', 'disconnect-after:9']);
    const io = testIo(env);
    const done = run(['mine', '--url', url, '--device', port, '--no-cpu', '--json'], io);
    cleanup(async () => {
      io.controller.abort();
      await done;
    });
    const events = () =>
      io.stdout.text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const notice = (kind: string) => events().find((e) => e.type === 'device-notice' && e.kind === kind);
    await waitFor(
      () => notice('lost') !== undefined,
      'the board lost',
      undefined,
      () => io.stdout.text,
    );
    for (const kind of ['attached', 'rebooted', 'lost']) {
      expect(notice(kind), kind).toMatchObject({
        type: 'device-notice',
        device: `serial:${CHIP}`,
        backend: 'serial',
        kind,
        chipId: CHIP,
        port,
      });
    }
    expect(notice('rebooted')!.message).toBe(`serial:${CHIP} (${port}): rebooted: reset reason: software`);
    const accepted = events().filter((e) => e.type === 'accepted');
    expect(accepted.length).toBeGreaterThan(0);
    for (const a of accepted) expect((a.found as { device: string }).device).toBe(`serial:${CHIP}`);
    io.controller.abort();
    expect(await done).toBe(0);
  });

  test('mine --device auto with no board says what it looked for and how to fix permissions', async () => {
    const { url } = await testValidator();
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const io = testIo(env);
    const done = run(['mine', '--url', url, '--device', 'auto', '--no-cpu', '--no-tui'], io);
    cleanup(async () => {
      io.controller.abort();
      await done;
    });
    await waitFor(
      () => io.stdout.text.includes('dialout'),
      'the help',
      undefined,
      () => io.stdout.text,
    );
    expect(io.stdout.text).toMatch(
      /no ESP32 board found: --device auto looks for USB serial bridges Silicon Labs CP210x \(10c4:ea60\); WCH CH340/,
    );
    expect(io.stdout.text).toContain('Espressif USB-Serial/JTAG (native USB) (303a:1001)');
    expect(io.stdout.text).toContain('sudo usermod -aG dialout $USER');
    expect(io.stdout.text).toContain('docs/udev/99-tensormine.rules');
    io.controller.abort();
    expect(await done).toBe(0);
  });

  test("devices --local-boards reads a running miner's boards from its control API, with accepted results", async () => {
    const { url } = await testValidator({ hexDifficulty: 4096n });
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const port = await simulatedBoard();
    const token = 'a-test-token-of-32-characters-xx';
    const io = testIo({ ...env, MINER_API_TOKEN: token });
    const done = run(['mine', '--url', url, '--device', port, '--no-cpu', '--no-tui', '--api-port', '0'], io);
    cleanup(async () => {
      io.controller.abort();
      await done;
    });
    await waitFor(
      () => /accepted \(\d+\//.test(io.stdout.text),
      'an accepted result',
      undefined,
      () => io.stdout.text,
    );
    const api = /control API on http:\/\/127\.0\.0\.1:(\d+)/.exec(io.stdout.text)![1]!;
    // Between two jobs (a block moves the lattice, new work follows) the board is `idle` for a
    // moment: read again until the row shows it mining.
    const readBoards = async () => {
      const { code, stdout } = await runCli(['devices', '--url', url, '--local-boards', '--api-port', api], {
        ...env,
        MINER_API_TOKEN: token,
      });
      expect(code).toBe(0);
      const all = stdout.trimEnd().split('\n');
      return all.slice(all.findIndex((l) => l.startsWith('serial boards here')) - 1);
    };
    let lines: string[] = [];
    await waitUntil(
      async () => {
        lines = await readBoards();
        return lines[3]?.split(/\s{2,}/)[1] === 'ok';
      },
      'the board mining (ok) in `miner devices`',
      { intervalMs: 250, context: () => lines.join('\n') },
    );
    expect(lines[1]).toBe(`serial boards here: 1 (the running miner, control API 127.0.0.1:${api})`);
    expect(lines[2]).toMatch(
      /^board\s+state\s+rate\s+firmware\s+chip id\s+port\s+last valid work\s+accepted\s+rejected\s+found\s+hw err\s+crc\s+resync\s+retx\s+reboots\s+lost$/,
    );
    const row = lines[3]!.split(/\s{2,}/);
    expect(row.slice(0, 2)).toEqual([`serial:${CHIP}`, 'ok']);
    expect(row).toContain(port);
    expect(Number(row[row.length - 9])).toBeGreaterThanOrEqual(1); // accepted
    io.controller.abort();
    expect(await done).toBe(0);
  });
});
