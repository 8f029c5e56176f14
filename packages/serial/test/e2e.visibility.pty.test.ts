import {
  type DeviceNotice,
  type FoundResult,
  Miner,
  type MinerLogEvent,
  type MiningJob,
  systemInfo,
  type WorkSource,
} from '@tensormine/miner';
import { afterEach, describe, expect, it } from 'vitest';
import { SerialFleet, type SerialFleetOptions } from '../src/fleet.js';
import { hexJob, until } from './fake-board.js';
import { e2eUnavailable, ptyPair, startSim, stopAll } from './pty.js';

/**
 * What an operator sees of a board, end to end over a socat pseudo-terminal with tm-sim: the
 * notices (attached, lost, back, rebooted, self-test failed, link degraded) with the chip id
 * and port, the per-board counters (hardware errors, CRC errors, resyncs, retransmissions,
 * reboots, losses), a lost board's rate decaying to zero, pause and resume reaching the board,
 * and the per-board figures of the miner's stats and control API.
 */
const unavailable = e2eUnavailable();
if (unavailable) console.warn(`[serial e2e] ${unavailable}`);

const fleets: SerialFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.stop();
  await stopAll();
});

const CHIP = '02a1b2c3d4e50000';
const ID = `serial:${CHIP}`;
const ESP32_RATE = ['--rate-cap', '50000,2000'];

function fleet(ports: string[], options: Partial<SerialFleetOptions> = {}) {
  const f = new SerialFleet({ ports, jobMs: 1000, pollIntervalMs: 500, ...options });
  fleets.push(f);
  const found: FoundResult[] = [];
  const notices: DeviceNotice[] = [];
  f.on('found', (x) => found.push(x));
  f.on('error', () => {});
  f.on('notice', (n) => notices.push(n));
  return { fleet: f, found, notices };
}

const kinds = (notices: readonly DeviceNotice[]) => notices.map((n) => n.kind);

describe.skipIf(unavailable !== undefined)('what an operator sees of a board (pty, tm-sim)', () => {
  it('attached, lost, back on another port with the same identity; a lost board rate decays to zero', async () => {
    const a = await ptyPair();
    const b = await ptyPair();
    const { fleet: f, found, notices } = fleet([a.host, b.host]);
    await f.start();
    const first = startSim(a.device, ['--chip-id', CHIP, ...ESP32_RATE]);
    await until(() => kinds(notices).includes('attached'), 'attached');
    expect(notices[0]).toEqual({
      kind: 'attached',
      unit: ID,
      chipId: CHIP,
      port: a.host,
      message: 'tm-sim fw tm-sim 0.1.0',
    });
    f.setJob({ ...hexJob('vis-lost', 5000), stopOnFound: false });
    await until(() => found.length >= 2 && (f.boards()[0]!.hashrate['10s'] ?? 0) > 0, 'mining');
    await first.stop(); // unplugged
    await until(() => kinds(notices).includes('lost'), 'lost');
    const lost = notices.find((n) => n.kind === 'lost')!;
    expect(lost).toMatchObject({ unit: ID, chipId: CHIP, port: a.host });
    expect(lost.message).toMatch(
      /^(no valid frame for \d+ ms|.* was not acknowledged .*|.* is gone|.*closed.*)$/,
    );
    expect(lost.message.startsWith(a.host)).toBe(false);
    expect(f.boards()[0]!.state).toBe('no device');
    // No PROGRESS any more: the 10 s rate falls to zero instead of freezing at its last value.
    await until(() => f.boards()[0]!.hashrate['10s'] === 0, 'the rate decayed to zero');
    startSim(b.device, ['--chip-id', CHIP, ...ESP32_RATE]); // plugged in elsewhere
    await until(() => kinds(notices).includes('back'), 'back');
    expect(notices.find((n) => n.kind === 'back')).toMatchObject({ unit: ID, chipId: CHIP, port: b.host });
    // The board's life, once each. (A loaded machine answers ACKs late: the retransmissions that
    // causes may add a link-degraded notice, the link-degraded test's subject, not this one's.)
    expect(kinds(notices).filter((k) => k !== 'link-degraded')).toEqual(['attached', 'lost', 'back']);
    expect(f.boards()).toHaveLength(1);
    expect(f.units()[0]).toMatchObject({ id: ID, chipId: CHIP, port: b.host, counters: { linkLosses: 1 } });
  });

  it('rebooted: a notice, the reboots counter, and mining goes on', async () => {
    const pty = await ptyPair();
    const { fleet: f, found, notices } = fleet([pty.host]);
    await f.start();
    const sim = startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE, '--fault', 'reboot-after:3']);
    await until(() => f.boards()[0]?.state === 'idle', 'ready');
    f.setJob({ ...hexJob('vis-reboot', 2000), stopOnFound: false });
    await sim.waitForLog(/fault: rebooting/);
    await until(() => kinds(notices).includes('rebooted'), 'rebooted');
    expect(notices.find((n) => n.kind === 'rebooted')).toEqual({
      kind: 'rebooted',
      unit: ID,
      chipId: CHIP,
      port: pty.host,
      message: 'reset reason: software',
    });
    expect(kinds(notices)).not.toContain('lost');
    const n = found.length;
    await until(() => found.length > n, 'results after the reboot');
    expect(f.units()[0]!.counters).toMatchObject({ reboots: 1, linkLosses: 0 });
  });

  it('self-test failed: a notice with the reason, and no work', async () => {
    const pty = await ptyPair();
    const { fleet: f, notices } = fleet([pty.host]);
    await f.start();
    startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE, '--fault', 'wrong-result']);
    await until(() => kinds(notices).includes('self-test-failed'), 'self-test failed');
    // (a link-degraded notice, which late ACKs on a loaded machine may add, is not this test's)
    expect(notices.filter((n) => n.kind !== 'link-degraded')).toEqual([
      { kind: 'attached', unit: ID, chipId: CHIP, port: pty.host, message: 'tm-sim fw tm-sim 0.1.0' },
      {
        kind: 'self-test-failed',
        unit: ID,
        chipId: CHIP,
        port: pty.host,
        message: 'hex: wrong RESULT: the result fields differ from the reference',
      },
    ]);
  });

  it('counts wrong results as hardware errors (self-test off)', async () => {
    const pty = await ptyPair();
    const { fleet: f, found } = fleet([pty.host], { selfTest: false });
    await f.start();
    startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE, '--fault', 'wrong-result']);
    await until(() => f.boards()[0]?.state === 'idle', 'ready');
    f.setJob({ ...hexJob('vis-hw', 5000), stopOnFound: false });
    await until(() => f.units()[0]!.counters.hardwareErrors >= 3, 'hardware errors');
    expect(found).toEqual([]);
    expect(f.units()[0]!.counters.found).toBe(0);
  });

  it('link degraded: CRC errors, resyncs and retransmissions counted, one notice', async () => {
    const pty = await ptyPair();
    const { fleet: f, found, notices } = fleet([pty.host]);
    await f.start();
    const sim = startSim(pty.device, [
      '--chip-id',
      CHIP,
      ...ESP32_RATE,
      '--seed',
      '7',
      '--fault',
      'corrupt:0.15',
      '--fault',
      'garbage:0.3',
      '--fault',
      'drop:0.1',
    ]);
    await until(() => f.boards()[0]?.state === 'idle', 'ready through the faults');
    const job = { ...hexJob('vis-noisy', 5000), stopOnFound: false };
    f.setJob(job);
    await until(() => kinds(notices).includes('link-degraded'), 'link degraded');
    const degraded = notices.find((n) => n.kind === 'link-degraded')!;
    expect(degraded).toMatchObject({ unit: ID, chipId: CHIP, port: pty.host });
    expect(degraded.message).toMatch(/^\d+ link errors in \d+ s \(total .*\)$/);
    await until(() => found.length >= 5, 'results through the noise');
    // New jobs until one's ACK is dropped and the host sends the job again.
    for (let i = 0; i < 200 && f.units()[0]!.counters.retransmissions === 0; i++) {
      f.setJob({ ...hexJob(`vis-noisy-${i}`, 5000), stopOnFound: false });
      await new Promise((r) => setTimeout(r, 150));
    }
    const c = f.units()[0]!.counters;
    expect(sim.log()).toMatch(/fault: corrupted outgoing/);
    expect(c.crcErrors).toBeGreaterThan(0);
    expect(c.resyncs + c.crcErrors).toBeGreaterThan(0);
    expect(c.retransmissions).toBeGreaterThan(0);
    // Reported once while the trouble goes on, not once per error.
    expect(kinds(notices).filter((k) => k === 'link-degraded')).toHaveLength(1);
    // The same figures in `miner devices` (BoardInfo).
    expect(f.boards()[0]!.counters).toEqual(f.units()[0]!.counters);
  });

  it('pause and resume reach the board: its job is cancelled, it idles, then it gets new work', async () => {
    const pty = await ptyPair();
    const { fleet: f, found } = fleet([pty.host]);
    await f.start();
    const sim = startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE, '--verbose']);
    await until(() => f.boards()[0]?.state === 'idle', 'ready');
    f.setJob({ ...hexJob('vis-pause', 5000), stopOnFound: false });
    await until(() => found.length >= 2, 'mining');
    f.pause();
    await sim.waitForLog(/<- CANCEL/);
    await until(() => f.boards()[0]!.state === 'paused', 'paused');
    const jobsBefore = sim.log().match(/<- JOB_HEX/g)?.length ?? 0;
    const foundBefore = found.length;
    // Idle: the board reports no job, and nothing new is sent or found.
    await until(() => /-> PROGRESS .*job 0\b/.test(sim.log().split('<- CANCEL').pop()!), 'the board idle');
    await new Promise((r) => setTimeout(r, 1500));
    expect(sim.log().match(/<- JOB_HEX/g)?.length ?? 0).toBe(jobsBefore);
    expect(found.length).toBe(foundBefore);
    f.resume();
    await until(() => (sim.log().match(/<- JOB_HEX/g)?.length ?? 0) > jobsBefore, 'new work');
    await until(() => found.length > foundBefore, 'results after resume');
    expect(f.boards()[0]!.state).toBe('ok');
  });

  it('per board in the miner: results name the board, accepted and rejected per board, notices as log events, the control API', async () => {
    const pty = await ptyPair();
    const { fleet: f } = fleet([pty.host]);
    let n = 0;
    let jobs = 0;
    const source: WorkSource = {
      url: 'test://accept-some',
      async getWork(): Promise<MiningJob> {
        return hexJob(`vis-miner-${jobs++}`, 5000); // a fresh challenge after each solo result
      },
      async submit() {
        n++;
        return n % 3 === 0
          ? { status: 'rejected', code: 'duplicate_block', message: 'already have it' }
          : { status: 'accepted' };
      },
    };
    const miner = new Miner({ source, backends: [f] });
    const events: MinerLogEvent[] = [];
    miner.on('log', (e) => events.push(e));
    await miner.start();
    try {
      startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE]);
      await until(() => events.filter((e) => e.type === 'rejected').length >= 1, 'accepted and rejected');
      const notice = events.find((e) => e.type === 'device-notice');
      expect(notice).toEqual({
        type: 'device-notice',
        device: ID,
        backend: 'serial',
        kind: 'attached',
        chipId: CHIP,
        port: pty.host,
        reason: 'tm-sim fw tm-sim 0.1.0',
      });
      for (const e of events)
        if (e.type === 'accepted' || e.type === 'rejected') expect(e.found.device).toBe(ID);
      const stats = miner.stats();
      const unit = stats.devices[0]!.units![0]!;
      const accepted = events.filter((e) => e.type === 'accepted').length;
      const rejected = events.filter((e) => e.type === 'rejected').length;
      expect(unit).toMatchObject({ id: ID, chipId: CHIP, port: pty.host, accepted, rejected });
      expect(unit.rejectedReasons).toEqual([{ code: 'duplicate_block', count: rejected }]);
      const info = systemInfo(stats) as { devices: { boards: Record<string, unknown>[] }[] };
      expect(info.devices[0]!.boards[0]).toMatchObject({
        id: ID,
        chipId: CHIP,
        port: pty.host,
        state: 'ok',
        sharesAccepted: accepted,
        sharesRejected: rejected,
        sharesRejectedReasons: [{ message: 'duplicate_block', count: rejected }],
        hardwareErrors: 0,
        crcErrors: 0,
        retransmissions: expect.any(Number),
        reboots: 0,
        linkLosses: 0,
      });
    } finally {
      await miner.stop();
    }
  });
});
