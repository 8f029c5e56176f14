import type { FoundResult } from '@tensormine/miner';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ESP32_USB_SERIAL_CHIPS, usbSerialChip } from '../src/discovery.js';
import { SerialFleet } from '../src/fleet.js';
import {
  FAST_TIMING,
  FakeBoard,
  fakeBinding,
  hexJob,
  MockBinding,
  until,
  useBoardClock,
  useRealClock,
} from './fake-board.js';

const boards = new Map<string, FakeBoard>();
const fleets: SerialFleet[] = [];

beforeEach(() => {
  useBoardClock();
});

afterEach(async () => {
  for (const f of fleets.splice(0)) await f.stop();
  for (const b of boards.values()) b.dispose();
  boards.clear();
  MockBinding.reset();
  useRealClock();
});

function plug(path: string, board: FakeBoard, ids = { vendorId: '10c4', productId: 'ea60' }) {
  MockBinding.createPort(path, ids);
  boards.set(path, board);
}

/** MockBinding has no removal: rebuild its port list without `path`. */
function unplug(path: string) {
  const keep = [...boards.entries()].filter(([p]) => p !== path);
  MockBinding.reset();
  boards.delete(path);
  for (const [p] of keep) MockBinding.createPort(p, { vendorId: '10c4', productId: 'ea60' });
}

function fleet(options: ConstructorParameters<typeof SerialFleet>[0] = {}) {
  const f = new SerialFleet({
    binding: fakeBinding(boards),
    timing: FAST_TIMING,
    pollIntervalMs: 50,
    jobMs: 200,
    sampleIntervalMs: 100,
    ...options,
  });
  fleets.push(f);
  const found: FoundResult[] = [];
  f.on('found', (x) => found.push(x));
  f.on('error', () => {});
  return { fleet: f, found };
}

describe('discovery', () => {
  it('recognises the USB-serial chips of ESP32 boards by vendor and product id', () => {
    expect(usbSerialChip({ vendorId: '10C4', productId: 'EA60' })?.chip).toBe('Silicon Labs CP210x');
    expect(usbSerialChip({ vendorId: '303a', productId: '1001' })?.chip).toMatch(/USB-Serial\/JTAG/);
    expect(usbSerialChip({ vendorId: '2341', productId: '0043' })).toBeUndefined(); // an Arduino Uno
    expect(usbSerialChip({ vendorId: undefined, productId: undefined })).toBeUndefined();
    expect(new Set(ESP32_USB_SERIAL_CHIPS.map((c) => `${c.vendorId}:${c.productId}`)).size).toBe(
      ESP32_USB_SERIAL_CHIPS.length,
    );
  });
});

describe('SerialFleet', () => {
  it('opens the ports of ESP32 USB chips, not the others, and lists the boards', async () => {
    plug('/dev/ttyUSB0', new FakeBoard({ chipId: 'aa00000000000001' }));
    plug('/dev/ttyACM0', new FakeBoard({ chipId: 'aa00000000000002' }), {
      vendorId: '303a',
      productId: '1001',
    });
    plug('/dev/ttyS0', new FakeBoard({ chipId: 'aa00000000000003' }), {
      vendorId: '2341',
      productId: '0043',
    });
    const { fleet: f } = fleet();
    await f.start();
    await until(() => f.boards().filter((b) => b.state === 'idle').length === 2, 'two boards');
    expect(
      f
        .boards()
        .map((b) => [b.chipId, b.port])
        .sort(),
    ).toEqual([
      ['aa00000000000001', '/dev/ttyUSB0'],
      ['aa00000000000002', '/dev/ttyACM0'],
    ]);
    expect(f.state).toBe('idle');
  });

  it('opens explicit ports whatever their ids, and only them when auto is off', async () => {
    plug('/dev/ttyUSB0', new FakeBoard({ chipId: 'aa00000000000001' }));
    plug('/dev/ttyS5', new FakeBoard({ chipId: 'aa00000000000005' }), {
      vendorId: '2341',
      productId: '0043',
    });
    const { fleet: f } = fleet({ ports: ['/dev/ttyS5'] });
    await f.start();
    await until(() => f.boards()[0]?.state === 'idle', 'the board');
    await f.settled(1000);
    expect(f.boards().map((b) => b.port)).toEqual(['/dev/ttyS5']);
  });

  it('shares a job among its boards in chunks and mines with all of them', async () => {
    plug('/dev/ttyUSB0', new FakeBoard({ chipId: 'aa00000000000001', hexRate: 10_000 }));
    plug('/dev/ttyUSB1', new FakeBoard({ chipId: 'aa00000000000002', hexRate: 40_000 }));
    const { fleet: f, found } = fleet();
    await f.start();
    await until(() => f.boards().filter((b) => b.state === 'idle').length === 2, 'two boards');
    const job = { ...hexJob('fleet', 256), stopOnFound: false };
    expect(f.supports(job)).toBe(true);
    f.setJob(job);
    await until(() => new Set(found.map((x) => x.device)).size === 2, 'results from both boards');
    const ranges = [...boards.values()].flatMap((b) =>
      b.received
        .filter((m) => m.name === 'JOB_HEX' && m.nonceCount > 5000)
        .map((m) => m as { firstNonce: number; nonceCount: number }),
    );
    ranges.sort((x, y) => x.firstNonce - y.firstNonce);
    for (let i = 1; i < ranges.length; i++) {
      expect(ranges[i]!.firstNonce).toBeGreaterThanOrEqual(
        ranges[i - 1]!.firstNonce + ranges[i - 1]!.nonceCount,
      );
    }
    await until(() => f.hashrate().workers.length === 2 && f.totalHashes() > 0, 'hashrate');
  });

  it('ends a solo job on every board at the first result', async () => {
    plug('/dev/ttyUSB0', new FakeBoard({ chipId: 'aa00000000000001' }));
    plug('/dev/ttyUSB1', new FakeBoard({ chipId: 'aa00000000000002' }));
    const { fleet: f, found } = fleet();
    await f.start();
    await until(() => f.boards().filter((b) => b.state === 'idle').length === 2, 'two boards');
    f.setJob(hexJob('solo', 1024));
    await until(() => found.length >= 1, 'a result');
    expect(f.job).toBeUndefined();
    await until(() => [...boards.values()].every((b) => b.currentJob === undefined), 'both boards idle');
  });

  it('recognises a board replugged on another port by its chip id and keeps its counters', async () => {
    const board = new FakeBoard({ chipId: 'bb00000000000001' });
    plug('/dev/ttyUSB0', board);
    const { fleet: f, found } = fleet();
    const attached: string[] = [];
    f.boardEvents.on('attached', (_b, path) => attached.push(path));
    await f.start();
    await until(() => f.boards()[0]?.state === 'idle', 'the board');
    f.setJob({ ...hexJob('replug', 256), stopOnFound: false });
    await until(() => found.length >= 2, 'results');
    const before = f.boards()[0]!;
    unplug('/dev/ttyUSB0');
    await until(() => f.boards()[0]?.state === 'no device', 'no device');
    expect(f.state).toBe('no device');
    plug('/dev/ttyUSB3', board);
    await until(() => f.boards()[0]?.state === 'ok', 'back');
    const n = found.length;
    await until(() => found.length > n, 'results on the new port');
    const after = f.boards()[0]!;
    expect(f.boards()).toHaveLength(1);
    expect(after).toMatchObject({ id: before.id, chipId: 'bb00000000000001', port: '/dev/ttyUSB3' });
    expect(after.stats.found).toBeGreaterThan(before.stats.found);
    expect(attached).toEqual(['/dev/ttyUSB0', '/dev/ttyUSB3']);
  });

  it('supports any job before a board is known, and only what its boards can run after', async () => {
    const { fleet: f } = fleet({ ports: [], auto: true });
    await f.start();
    expect(f.supports(hexJob('x'))).toBe(true);
    expect(f.state).toBe('no device');
  });
});
