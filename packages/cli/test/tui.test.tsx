import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { HashrateWindows, MinerStats } from '@tensormine/miner';
import { render as inkRender } from 'ink';
import { cleanup as inkCleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { tolerateLostTerminal } from '../src/io.js';
import { poolReport, type Snapshot } from '../src/reports.js';
import { MiningSession, type SessionEvents, type SessionView } from '../src/session.js';
import { resolveSettings } from '../src/settings.js';
import { App, hangingIndent } from '../src/tui/app.js';
import { runTui, terminalReflows } from '../src/tui/run.js';
import { Capture, cleanup, tempHome, testKey, testStdin, testValidator, waitFor } from './helpers.js';

afterEach(() => inkCleanup());

const NONE: HashrateWindows = {
  '10s': undefined,
  '60s': undefined,
  '15m': undefined,
  '10m': undefined,
  '1h': undefined,
  max: undefined,
};

function stats(overrides: Partial<MinerStats> = {}): MinerStats {
  return {
    running: true,
    paused: false,
    connected: true,
    accepted: 12,
    rejected: 2,
    rejectedReasons: [{ code: 'coordinate_occupied', count: 2 }],
    stale: 2,
    bestDifficulty: 2e6,
    lastLatencyMs: 103,
    averageLatencyMs: 98,
    journalSize: 0,
    sharesQueued: 0,
    sharesDropped: 0,
    uptimeSeconds: 3723,
    job: { challengeId: 'h-1', protocolVersion: '4.1', difficulty: 43118, expiresAtMs: Date.now() + 60_000 },
    hashrate: { ...NONE, '10s': 1_520_000, max: 1_600_000 },
    expectedHashrate: undefined,
    devices: [],
    validatorUrl: 'http://validator:8420',
    ...overrides,
  };
}

/** A session view with a fixed snapshot: the TUI's layout, without mining. */
class FakeSession extends EventEmitter<SessionEvents> implements SessionView {
  readonly banner = ['tensormine miner 0.1.0'];
  paused = false;
  closed = 0;
  snap: Snapshot = {
    stats: stats(),
    rows: [
      {
        name: 'cpu',
        level: 'device',
        state: 'ok',
        rate10s: 1_520_000,
        rate60s: undefined,
        lastValidWorkAtMs: Date.now() - 4000,
      },
      {
        name: 'cpu#0',
        level: 'worker',
        state: 'mining',
        rate10s: 760_000,
        rate60s: undefined,
        lastValidWorkAtMs: undefined,
      },
      {
        name: 'serial:3c61053f6a28a4e1',
        level: 'device',
        state: 'self-test failed',
        rate10s: undefined,
        rate60s: undefined,
        lastValidWorkAtMs: undefined,
        detail: '/dev/ttyUSB0, esp32 fw 1.0.0',
      },
      {
        name: '/dev/ttyACM0',
        level: 'device',
        state: 'no device',
        rate10s: undefined,
        rate60s: undefined,
        lastValidWorkAtMs: undefined,
      },
    ],
    connection: {
      url: 'http://validator:8420',
      endpoints: [],
      protocol: '4.1',
      connected: true,
      latencyMs: 103,
      averageLatencyMs: 98,
      local: false,
      apiUrl: undefined,
    },
    jobLabel: 'q=3 r=-1 s=-2',
    nowMs: Date.now(),
  };
  snapshot(): Snapshot {
    return { ...this.snap };
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

/** Resolves once `frames` has grown by `count` frames (refreshes): the app is drawn and its effects ran. */
const refreshed = (frames: readonly unknown[], count = 1) => {
  const target = frames.length + count;
  return waitFor(() => frames.length >= target, `${count} more frame(s)`);
};

describe('the TUI layout', () => {
  test('shows a warming-up rate (~) from the first samples instead of n/a', () => {
    const session = new FakeSession();
    session.snap = {
      ...session.snap,
      stats: { ...session.snap.stats, hashrate: { ...NONE, warmup: 1_250_000 } },
    };
    const frame = render(<App session={session} onQuit={() => {}} />).lastFrame()!;
    expect(frame).toContain('hashrate  10s ~1.25 MH/s  60s n/a  15m n/a  max 1.25 MH/s');
  });

  test('shows the windows (n/a until they have data), results with reasons, the job, the connection and the keys', () => {
    const { lastFrame } = render(<App session={new FakeSession()} onQuit={() => {}} refreshMs={20} />);
    const frame = lastFrame()!;
    expect(frame).toContain('MINING  http://validator:8420  v4.1  latency 103 ms  uptime 1h 02m 03s');
    expect(frame).toContain('hashrate  10s 1.52 MH/s  60s n/a  15m n/a  max 1.60 MH/s');
    expect(frame).toContain('results   accepted 12  rejected 2 (coordinate_occupied 2)');
    expect(frame).toContain('job       q=3 r=-1 s=-2  difficulty 43118');
    expect(frame).toContain('keys: h hashrate p pause r resume s results c connection q quit');
    expect(frame).toContain('tensormine miner 0.1.0');
  });

  test('mine --pool: a pool line with shares, share difficulty, earnings and the last block', () => {
    const session = new FakeSession();
    session.snap = {
      ...session.snap,
      pool: {
        sharesAccepted: 41,
        sharesStale: 2,
        sharesRejected: 1,
        blocks: 3,
        shareDifficulty: 4096,
        // 12 s before the snapshot's own time (the TUI's clock), not before the real clock's
        lastBlock: { height: 1204, mine: true, foundAt: Math.floor(session.snap.nowMs / 1000) - 12 },
        estimated: '0.12',
        paid: '1.5',
      },
    };
    const { lastFrame } = render(<App session={session} onQuit={() => {}} refreshMs={20} />);
    const frame = lastFrame()!;
    expect(frame).toContain(
      'pool      shares 41  stale 2  rejected 1  share diff 4096  est 0.12 PTM  paid 1.5 PTM  last blo',
    );
    // The whole line, as `s` prints it (the live area truncates it to the terminal's width).
    expect(poolReport(session.snap.pool!, session.snap.nowMs)).toMatch(
      /^pool shares 41\/2\/1 \(accepted\/stale\/rejected\), share diff 4096, blocks 3, est 0\.12 PTM, paid 1\.5 PTM, last block 1204 \(yours\) \(1[23]s ago\)$/,
    );
    expect(new FakeSession().snapshot().pool).toBeUndefined();
  });

  test('solo: the balance and what the run earned; the dashboard and control URLs stay on screen; what q r s means', () => {
    const session = new FakeSession();
    const nowMs = Date.now();
    session.snap = {
      ...session.snap,
      wallet: { balance: '12.5', earned: '1.5', checkedAtMs: nowMs - 7000 },
      dashboardUrl: 'http://127.0.0.1:41234/',
      connection: { ...session.snap.connection, apiUrl: 'http://127.0.0.1:4048' },
      nowMs,
    };
    const frame = render(<App session={session} onQuit={() => {}} />).lastFrame()!;
    expect(frame).toMatch(/wallet {4}balance 12\.5 PTM {2}earned \+1\.5 PTM this run {2}\(read [78]s ago\)/);
    expect(frame).toContain('links     dashboard http://127.0.0.1:41234/  control http://127.0.0.1:4048/');
    expect(frame).toContain(
      'q r s: the lattice cell this block claims (hexagonal coordinates, q + r + s = 0)',
    );
    // Neither in pool mode (the pool line says it) nor before the first reading.
    const plain = render(<App session={new FakeSession()} onQuit={() => {}} />).lastFrame()!;
    expect(plain).not.toContain('wallet ');
    expect(plain).not.toContain('links ');
  });

  test('one row per device and per worker, with state, rate and last valid work', () => {
    const { lastFrame } = render(<App session={new FakeSession()} onQuit={() => {}} />);
    const lines = lastFrame()!.split('\n');
    const row = (name: string) =>
      lines
        .find((l) => l.includes(` ${name} `))!
        .replace(/[│]/g, '')
        .trim();
    expect(row('device')).toMatch(/^device\s+state\s+10s\s+60s\s+last valid work$/);
    expect(row('cpu')).toMatch(/^cpu\s+ok\s+1\.52 MH\/s\s+n\/a\s+4s ago$/);
    expect(row('cpu#0')).toMatch(/^cpu#0\s+mining\s+760\.00 kH\/s\s+n\/a\s+never$/);
    // Cut at the terminal's width (100 columns here).
    expect(row('serial:3c61053f6a28a4e1')).toMatch(
      /^serial:3c61053f6a28a4e1\s+self-test failed\s+n\/a\s+n\/a\s+never\s+\/dev\/ttyUSB0, esp32…$/,
    );
    expect(row('/dev/ttyACM0')).toMatch(/^\/dev\/ttyACM0\s+no device\s+n\/a\s+n\/a\s+never$/);
  });

  test('log lines are written above the live area, once', async () => {
    const session = new FakeSession();
    const { lastFrame, frames } = render(<App session={session} onQuit={() => {}} refreshMs={20} />);
    session.emit('line', { text: 'accepted (13/2) diff 43118 (103 ms)', tone: 'good' });
    session.emit('line', { text: 'rejected (13/3) diff 43118 (98 ms): coordinate_occupied', tone: 'bad' });
    await waitFor(() => lastFrame()!.includes('rejected (13/3)'), 'the log lines');
    const frame = lastFrame()!;
    expect(frame.indexOf('accepted (13/2) diff 43118 (103 ms)')).toBeLessThan(
      frame.indexOf('rejected (13/3)'),
    );
    expect(frame.indexOf('rejected (13/3)')).toBeLessThan(frame.indexOf('hashrate'));
    expect(frame).toMatch(/^\d\d:\d\d:\d\d accepted \(13\/2\) diff 43118 \(103 ms\)$/m);
    // The live area is redrawn on every refresh; the log lines are not.
    const before = frames.length;
    await refreshed(frames, 2);
    expect(frames.length).toBeGreaterThan(before);
    expect(lastFrame()!.split('accepted (13/2)').length).toBe(2);
  });

  test('a start or log line wider than the terminal goes on under its text, not at the left edge', async () => {
    const session = new FakeSession();
    const path = `/home/someone/.config/tensormine/${'deep/'.repeat(12)}miner.key`;
    (session as { banner: string[] }).banner = [
      'tensormine miner 0.1.0',
      ` * key        ${'ab'.repeat(32)} (new key written to ${path})`,
    ];
    const { lastFrame } = render(<App session={session} onQuit={() => {}} refreshMs={20} />);
    session.emit('line', { text: `note ${'x'.repeat(150)}`, tone: 'info' });
    await waitFor(() => lastFrame()!.includes('xxxx'), 'the long log line');
    const lines = lastFrame()!.split('\n');
    const key = lines.findIndex((l) => l.startsWith(' * key        abab'));
    expect(key).toBeGreaterThanOrEqual(0);
    // ink-testing-library's terminal is 100 columns wide: the path wraps, under the value.
    expect(lines[key + 1]).toMatch(/^ {14}\S/);
    const note = lines.findIndex((l) => /^\d\d:\d\d:\d\d note x/.test(l));
    expect(lines[note + 1]).toMatch(/^ {9}x/);
    expect(hangingIndent('plain text')).toEqual(['', 'plain text']);
  });

  test('h, s and c print the hashrate, results and connection lines', async () => {
    const { lastFrame, stdin, frames } = render(
      <App session={new FakeSession()} onQuit={() => {}} refreshMs={20} />,
    );
    await refreshed(frames);
    stdin.write('h');
    stdin.write('s');
    stdin.write('c');
    await waitFor(() => lastFrame()!.includes('using validator'), 'the connection line');
    // Log lines wrap at the terminal's width rather than lose their end (under their text).
    const frame = lastFrame()!.replace(/\n(?!\d\d:) */g, ' ');
    expect(frame).toContain('speed 10s/60s/15m 1.52 MH/s n/a n/a max 1.60 MH/s');
    expect(frame).toContain(
      'results accepted 12, rejected 2 (coordinate_occupied 2), best diff 2.00M, avg latency 98 ms, journal 0 pending',
    );
    expect(frame).toContain(
      'using validator http://validator:8420, v4.1, latency 103 ms, connected, uptime 1h 02m 03s',
    );
  });

  test('q calls onQuit once and shows that it is stopping', async () => {
    // The stop takes as long as the test says: the stopping state stays on screen until then.
    const stopped = Promise.withResolvers<void>();
    const onQuit = vi.fn(() => stopped.promise);
    const { lastFrame, frames, stdin } = render(
      <App session={new FakeSession()} onQuit={onQuit} refreshMs={20} />,
    );
    await refreshed(frames);
    stdin.write('q');
    stdin.write('q');
    await waitFor(() => lastFrame()!.includes('STOPPING'), 'the stopping state');
    expect(lastFrame()).toContain('stopping: workers, boards, journal');
    // The workers are shown stopping, not mining; a board without a device stays as it is.
    expect(lastFrame()).not.toMatch(/cpu#0\s+mining/);
    expect(lastFrame()).toMatch(/cpu#0\s+stopping/);
    expect(lastFrame()).toMatch(/no device/);
    expect(onQuit).toHaveBeenCalledTimes(1);
    stopped.resolve();
    // The last frame drawn says that it stopped, not that it is still stopping.
    await waitFor(() => frames.some((f) => f.includes('STOPPED')), 'the stopped state');
    const last = frames.findLast((f) => f.includes('STOPPED'))!;
    expect(last).toMatch(/\d\d:\d\d:\d\d stopped\n/);
    expect(last).toMatch(/cpu#0\s+stopped/);
    expect(last).not.toContain('STOPPING');
  });

  test('a stop signal (SIGINT, SIGTERM) stops like q: stopping, then stopped', async () => {
    const controller = new AbortController();
    const stopped = Promise.withResolvers<void>();
    const onQuit = vi.fn(() => stopped.promise);
    const { lastFrame, frames } = render(
      <App session={new FakeSession()} onQuit={onQuit} stop={controller.signal} refreshMs={20} />,
    );
    await refreshed(frames);
    expect(lastFrame()).toContain('MINING');
    controller.abort();
    await waitFor(() => lastFrame()!.includes('STOPPING'), 'the stopping state');
    expect(lastFrame()).toContain('stopping: workers, boards, journal');
    stopped.resolve();
    await waitFor(() => frames.some((f) => f.includes('STOPPED')), 'the stopped state');
    expect(onQuit).toHaveBeenCalledTimes(1);
  });

  test('a terminal lost by the time it stops (npx gone: EIO on raw mode) still ends the screen', async () => {
    const stdin = testStdin(true);
    const controller = new AbortController();
    const switches: boolean[] = [];
    // The kernel's answer to an orphaned background process group, as Node's tty stream gives
    // it: an 'error' event (thrown by the emit when nothing listens).
    const lost = Object.assign(new Error('setRawMode EIO'), { code: 'EIO' });
    stdin.setRawMode = (mode: boolean) => {
      if (controller.signal.aborted) stdin.emit('error', lost);
      else switches.push(mode);
    };
    const original = stdin.setRawMode;
    const stdout = new Capture(true);
    const io = { stdout, stderr: new Capture(false), stdin, env: {}, signal: controller.signal };
    // No fallback in this test: only a settled exit ends it.
    const done = runTui(new FakeSession(), io, {
      refreshMs: 20,
      patchConsole: false,
      exitGraceMs: 3_600_000,
    });
    await waitFor(() => stdout.text.includes('hashrate'), 'a frame');
    expect(switches).toEqual([true]);
    controller.abort('SIGTERM');
    // Ink's exit settles (it did not: "stopped" on screen, the process alive).
    await done;
    expect(stdout.text).toMatch(/\d\d:\d\d:\d\d stopped\n/);
    // The stream's own method is back, and its error listener gone.
    expect(stdin.setRawMode).toBe(original);
    expect(stdin.listenerCount('error')).toBe(0);
    // A stream that throws: the same for a lost terminal; another error is not hidden.
    stdin.setRawMode = () => {
      throw lost;
    };
    const restoreLost = tolerateLostTerminal(stdin);
    expect(() => stdin.setRawMode!(false)).not.toThrow();
    restoreLost();
    stdin.setRawMode = () => {
      throw Object.assign(new Error('setRawMode EINVAL'), { code: 'EINVAL' });
    };
    const restore = tolerateLostTerminal(stdin);
    expect(() => stdin.setRawMode!(false)).toThrow('setRawMode EINVAL');
    restore();
  });

  test('a screen whose teardown fails another way still ends once the session stopped', async () => {
    const stdin = testStdin(true);
    const controller = new AbortController();
    stdin.setRawMode = (mode: boolean) => {
      if (!mode) throw Object.assign(new Error('setRawMode EINVAL'), { code: 'EINVAL' });
    };
    const stdout = new Capture(true);
    const io = { stdout, stderr: new Capture(false), stdin, env: {}, signal: controller.signal };
    const done = runTui(new FakeSession(), io, { refreshMs: 20, patchConsole: false, exitGraceMs: 50 });
    await waitFor(() => stdout.text.includes('hashrate'), 'a frame');
    controller.abort('SIGTERM');
    await done;
    expect(stdout.text).toMatch(/\d\d:\d\d:\d\d stopped\n/);
  });

  test('a narrower terminal leaves no fragments: the rows its reflow added are deleted before the redraw', async () => {
    const stdout = Object.assign(new Capture(true), { columns: 120 });
    const controller = new AbortController();
    const io = {
      stdout,
      stderr: new Capture(false),
      stdin: testStdin(true),
      env: { MINER_TERMINAL_REFLOW: '1' },
      signal: controller.signal,
    };
    const done = runTui(new FakeSession(), io, { refreshMs: 20, patchConsole: false });
    cleanup(async () => {
      controller.abort();
      await done;
    });
    await waitFor(() => stdout.text.split('hashrate').length > 2, 'two frames');
    const before = stdout.text.length;
    stdout.columns = 50; // 120-wide rows now take 3 rows each
    stdout.emit('resize');
    await waitFor(() => stdout.text.length > before, 'the repair and a new frame');
    const ESC = String.fromCharCode(27);
    const repair = new RegExp(`\\${ESC}\\[(\\d+)A\\r\\${ESC}\\[(\\d+)M\\${ESC}\\[(\\d+)B`).exec(
      stdout.text.slice(before),
    );
    expect(repair).not.toBeNull();
    const [, rows, deleted, down] = repair!.map(Number);
    expect(down).toBeGreaterThan(10); // the live area's height
    expect(rows).toBe(down! * 3);
    expect(deleted).toBe(down! * 2);
    controller.abort();
    await done;
    expect(terminalReflows({ TMUX: '/tmp/tmux-0/default,1,0' })).toBe(true);
    expect(terminalReflows({ TERM: 'xterm' })).toBe(false);
  });

  test('uses the terminal width and lays out again on a resize', async () => {
    const stdout = Object.assign(new Capture(true), { columns: 120 });
    const stdin = testStdin(true);
    // Debug mode writes every frame in full (the log lines, then the live area), back to back.
    const lastFrame = () => stdout.text.split('tensormine miner 0.1.0').at(-1)!;
    const instance = inkRender(<App session={new FakeSession()} onQuit={() => {}} refreshMs={20} />, {
      stdout,
      stdin,
      debug: true,
      exitOnCtrlC: false,
      patchConsole: false,
    });
    cleanup(() => instance.unmount());
    await waitFor(() => lastFrame().includes('hashrate'), 'a frame');
    const widest = (text: string) =>
      Math.max(...text.split('\n').map((l) => stripVTControlCharacters(l).length));
    expect(widest(lastFrame())).toBe(120);
    const before = stdout.text.length;
    stdout.columns = 60;
    stdout.emit('resize');
    await waitFor(
      () => stdout.text.length > before && widest(lastFrame()) === 60,
      'a new frame, 60 columns wide',
    );
    expect(widest(lastFrame())).toBe(60);
    expect(lastFrame()).toContain('hashrate  10s 1.52 MH/s');
  });
});

describe('the TUI on a mining session', () => {
  async function session(): Promise<MiningSession> {
    const { url } = await testValidator();
    const { env } = await tempHome();
    const key = join(env.HOME!, 'miner.key');
    await testKey(key, [url]);
    const { settings } = resolveSettings({ flags: { urls: [url], threads: 1, key }, env });
    const s = await MiningSession.open({
      settings,
      env,
      version: '0.1.0',
      engine: { sampleIntervalMs: 100, batchMs: 10 },
    });
    cleanup(() => s.close());
    return s;
  }

  test('shows accepted results above, the device and worker rows below', async () => {
    const s = await session();
    const { lastFrame } = render(<App session={s} onQuit={() => s.close()} refreshMs={50} />);
    await s.start();
    await waitFor(() => /accepted \(2\/0\)/.test(lastFrame()!), 'two accepted results');
    const frame = lastFrame()!;
    expect(frame).toMatch(/^\d\d:\d\d:\d\d accepted \(1\/0\) diff [\d.]+[kM]? \(\d+ ms\) by cpu#\d+$/m);
    expect(frame).toMatch(/│ cpu\s+(ok|idle)\s/);
    expect(frame).toMatch(/│ {3}cpu#0\s+(mining|idle)\s/);
    expect(frame).toMatch(/ v4\.1 /);
  });

  test('p pauses the engine (its hash counters stop), r resumes it (they move again), q quits', async () => {
    const s = await session();
    const engine = s.engine!;
    const { lastFrame, stdin } = render(<App session={s} onQuit={() => s.close()} refreshMs={50} />);
    await s.start();
    await waitFor(() => engine.totalHashes() > 0, 'hashes');
    stdin.write('p');
    await waitFor(
      () => s.paused && engine.workerStates().every((w) => w === 'paused'),
      'every worker paused',
    );
    const frozen = engine.totalHashes();
    // Three more samples of the engine's counters: none moved.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => engine.once('hashrate', resolve));
    expect(engine.totalHashes()).toBe(frozen);
    expect(engine.state).toBe('paused');
    await waitFor(() => lastFrame()!.includes('PAUSED'), 'the paused state on screen');
    expect(lastFrame()).toMatch(/^\d\d:\d\d:\d\d paused$/m);

    stdin.write('r');
    await waitFor(() => engine.totalHashes() > frozen, 'the counters moving again');
    expect(s.paused).toBe(false);
    await waitFor(() => /^\d\d:\d\d:\d\d resumed$/m.test(lastFrame()!), 'the resumed line');

    stdin.write('q');
    await waitFor(() => engine.state === 'stopped', 'the engine stopped');
    expect(s.miner.stats().running).toBe(false);
  });
});
