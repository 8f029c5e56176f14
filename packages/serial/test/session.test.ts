import { type FoundResult, verifyFound } from '@tensormine/miner';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SerialDeviceBackend } from '../src/backend.js';
import { SerialError } from '../src/errors.js';
import { BoardSession, type SelfTestReport, type SerialTiming } from '../src/session.js';
import {
  elapse,
  FAST_TIMING,
  FakeBoard,
  fakeBinding,
  hexJob,
  MockBinding,
  tensorJob,
  until,
  useBoardClock,
  useRealClock,
} from './fake-board.js';

const boards = new Map<string, FakeBoard>();
const sessions: BoardSession[] = [];
const backends: SerialDeviceBackend[] = [];

function setup(
  path: string,
  board: FakeBoard,
  options: { failControlLines?: boolean; selfTest?: boolean; timing?: Partial<SerialTiming> } = {},
) {
  MockBinding.createPort(path, { vendorId: '10c4', productId: 'ea60' });
  boards.set(path, board);
  const session = new BoardSession({
    path,
    binding: fakeBinding(boards, { failControlLines: options.failControlLines ?? false }),
    timing: { ...FAST_TIMING, ...options.timing },
    ...(options.selfTest === undefined ? {} : { selfTest: options.selfTest }),
  });
  sessions.push(session);
  return session;
}

async function backendFor(session: BoardSession, jobMs = 200) {
  await session.open();
  const backend = new SerialDeviceBackend({ hello: session.hello!, jobMs, sampleIntervalMs: 100 });
  backends.push(backend);
  const errors: Error[] = [];
  const found: FoundResult[] = [];
  backend.on('error', (e) => errors.push(e));
  backend.on('found', (f) => found.push(f));
  backend.attach(session);
  await backend.start();
  return { backend, errors, found };
}

beforeEach(() => {
  useBoardClock();
});

afterEach(async () => {
  for (const b of backends.splice(0)) await b.stop();
  for (const s of sessions.splice(0)) await s.close();
  for (const b of boards.values()) b.dispose();
  boards.clear();
  MockBinding.reset();
  useRealClock();
});

describe('BoardSession', () => {
  it('waits for BOOT/HELLO after opening, identifies the board and passes the self-test', async () => {
    const board = new FakeBoard();
    const session = setup('/dev/ttyUSB0', board, { failControlLines: true });
    await session.open();
    expect(session.state).toBe('ready');
    expect(session.hello?.firmware).toBe('fake-fw 1.0');
    expect(session.lastSelfTest).toMatchObject({ ok: true, tested: ['hex', 'tensor'] });
    // The pseudo-terminal case: DTR/RTS could not be set, and nothing depended on it.
    expect(session.controlLinesError?.message).toBe('Inappropriate ioctl for device');
    const jobs = board.received.filter((m) => m.name === 'JOB_HEX' || m.name === 'JOB_TENSOR');
    expect(jobs.map((m) => m.name)).toEqual(['JOB_HEX', 'JOB_TENSOR']);
  });

  it('sends HELLO_REQ when a running board says nothing after the port opens', async () => {
    const board = new FakeBoard({ bootOnOpen: false });
    const session = setup('/dev/ttyUSB0', board);
    await session.open();
    expect(session.state).toBe('ready');
    expect(board.received[0]).toEqual({ name: 'HELLO_REQ', version: 1 });
  });

  it('gives up after three HELLO_REQ and reports no device', async () => {
    const board = new FakeBoard({ bootOnOpen: false });
    board.silent = true;
    const session = setup('/dev/ttyUSB0', board);
    await expect(session.open()).rejects.toThrow('no HELLO within 150 ms of opening nor after 3 HELLO_REQ');
    expect(session.state).toBe('no device');
  });

  it('marks a board whose results are wrong "self-test failed" and gives it no work', async () => {
    const board = new FakeBoard();
    board.lie = 'self-test';
    const session = setup('/dev/ttyUSB0', board);
    await session.open();
    expect(session.state).toBe('self-test failed');
    expect(session.lastSelfTest?.reason).toBe(
      'hex: wrong RESULT: the result fields differ from the reference',
    );
    const backend = new SerialDeviceBackend({ hello: session.hello!, jobMs: 200 });
    backends.push(backend);
    backend.attach(session);
    await backend.start();
    const before = board.received.length;
    backend.setJob(hexJob('no-work'));
    await elapse(100);
    expect(backend.state).toBe('self-test failed');
    expect(backend.unitInfo().selfTest).toEqual({
      reason: 'hex: wrong RESULT: the result fields differ from the reference',
    });
    expect(board.received.slice(before).filter((m) => m.name === 'JOB_HEX')).toEqual([]);
  });

  it('fails the self-test of a board that does not find the known solution', async () => {
    const board = new FakeBoard({ capabilities: 1 });
    board.lie = 'nonce';
    const session = setup('/dev/ttyUSB0', board);
    await session.open();
    expect(session.state).toBe('self-test failed');
    expect(session.lastSelfTest?.reason).toMatch(/^hex: wrong RESULT: nonce \d+, expected \d+$/);
  });

  it('keeps a board that answered wrongly "self-test failed" for good: no second test', async () => {
    const board = new FakeBoard();
    board.lie = 'self-test';
    const session = setup('/dev/ttyUSB0', board);
    const reports: SelfTestReport[] = [];
    session.on('selfTest', (r) => reports.push(r));
    await session.open();
    await elapse(1000);
    expect(session.state).toBe('self-test failed');
    expect(reports).toHaveLength(1);
    expect(reports[0]).not.toHaveProperty('retryInMs');
    const jobs = board.received.filter((m) => m.name === 'JOB_HEX' || m.name === 'JOB_TENSOR');
    expect(jobs).toHaveLength(1);
  });

  it('tries a self-test that only timed out again, gives no work meanwhile, and mines once it passes', async () => {
    const board = new FakeBoard();
    board.speed = 0; // a starved board: it acknowledges the known-answer job and finishes nothing
    const session = setup('/dev/ttyUSB0', board);
    const reports: SelfTestReport[] = [];
    const states: string[] = [];
    const errors: Error[] = [];
    session.on('selfTest', (r) => reports.push(r));
    session.on('state', (s) => states.push(s));
    session.on('error', (e) => errors.push(e));
    const before = Date.now();
    await session.open();
    const after = Date.now();
    // open() resolves: the board is known, not failed, and waits for its next test.
    expect(session.state).toBe('self-test');
    expect(reports).toEqual([
      {
        ok: false,
        tested: ['hex'],
        reason: expect.stringMatching(/^hex: no RESULT within \d+ ms$/),
        retryInMs: 100,
        retryAtMs: expect.any(Number),
        ms: expect.any(Number),
      },
    ]);
    // When the next try starts, as a time (a snapshot of it does not go stale).
    expect(reports[0]!.retryAtMs).toBeGreaterThanOrEqual(before + 100);
    expect(reports[0]!.retryAtMs).toBeLessThanOrEqual(after + 100);
    const timeout = errors.find((e) => (e as SerialError).code === 'self_test_timeout');
    expect(timeout?.message).toMatch(
      /^\/dev\/ttyUSB0: self-test timed out: hex: no RESULT within \d+ ms; trying again in 0\.1 s$/,
    );
    const firstJob = board.received.find((m) => m.name === 'JOB_HEX') as { jobId: number };
    await until(
      () => board.received.some((m) => m.name === 'CANCEL' && m.jobId === firstJob.jobId),
      'the CANCEL',
    );
    // Meanwhile a backend gives it no work.
    const backend = new SerialDeviceBackend({ hello: session.hello!, jobMs: 200, sampleIntervalMs: 100 });
    backends.push(backend);
    const found: FoundResult[] = [];
    backend.on('found', (f) => found.push(f));
    backend.on('error', () => {});
    backend.attach(session);
    await backend.start();
    backend.setJob({ ...hexJob('after-retry', 64), stopOnFound: false });
    // Its state says it waits to test again, and its unit (the miner's view) why and when.
    expect(backend.state).toBe('self-test');
    expect(backend.info().state).toBe('self-test');
    expect(backend.unitInfo().selfTest).toEqual({
      reason: reports[0]!.reason,
      retryAtMs: reports[0]!.retryAtMs,
    });
    expect(backend.stats.jobsSent).toBe(0);
    board.speed = 1; // the machine is quiet again
    await until(() => session.state === 'ready', 'the next self-test passing');
    expect(session.lastSelfTest).toMatchObject({ ok: true, tested: ['hex', 'tensor'] });
    expect(reports.filter((r) => r.ok)).toHaveLength(1);
    expect(states).not.toContain('self-test failed');
    await until(() => found.length >= 1, 'a result after the retried self-test');
    expect(backend.state).toBe('ok');
    expect(backend.unitInfo()).not.toHaveProperty('selfTest');
  });

  it('keeps trying a self-test that times out again and again, with growing backoff, and never says ready', async () => {
    const board = new FakeBoard({ capabilities: 1 });
    board.speed = 0;
    const session = setup('/dev/ttyUSB0', board, { timing: { selfTestRetryMaxMs: 300 } });
    const reports: SelfTestReport[] = [];
    const states: string[] = [];
    session.on('selfTest', (r) => reports.push(r));
    session.on('state', (s) => states.push(s));
    session.on('error', () => {});
    await session.open();
    await until(() => reports.length >= 3, 'three self-tests timed out');
    expect(reports.map((r) => r.ok)).toEqual([false, false, false]);
    // Waits of 100, 200, then the longest, 300 ms; and each try has twice the time of the last.
    expect(reports.map((r) => r.retryInMs)).toEqual([100, 200, 300]);
    const budgets = reports.map((r) => Number(/within (\d+) ms/.exec(r.reason!)![1]));
    expect(budgets[0]).toBeGreaterThanOrEqual(1000);
    expect(budgets[1]).toBeGreaterThanOrEqual(2000);
    expect(budgets[2]).toBeGreaterThanOrEqual(4000);
    const jobs = board.received.filter((m) => m.name === 'JOB_HEX') as { jobId: number }[];
    expect(new Set(jobs.map((j) => j.jobId)).size).toBe(jobs.length); // a fresh test each time
    expect(jobs.length).toBeGreaterThanOrEqual(3);
    expect(session.state).toBe('self-test');
    expect(states).not.toContain('ready');
    expect(states).not.toContain('self-test failed');
  });

  it('retransmits an acked frame whose ACK is lost, with the same seq, and the board acts once', async () => {
    const board = new FakeBoard();
    board.dropFirst.add('JOB_HEX');
    const session = setup('/dev/ttyUSB0', board);
    await session.open();
    expect(session.state).toBe('ready');
    expect(session.stats().retransmits).toBeGreaterThanOrEqual(1);
    const hex = board.received.filter((m) => m.name === 'JOB_HEX');
    expect(hex.length).toBe(2);
    expect(hex[0]).toEqual(hex[1]);
  });

  it('treats the link as lost after 8 unanswered retransmissions', async () => {
    const board = new FakeBoard();
    const session = setup('/dev/ttyUSB0', board);
    await session.open();
    board.silent = true;
    const error = await session.cancel(0).catch((e: Error) => e);
    expect(error).toBeInstanceOf(SerialError);
    expect((error as SerialError).message).toMatch(
      /CANCEL \(seq \d+\) was not acknowledged after 8 retransmissions/,
    );
    expect(session.state).toBe('no device');
  });

  it('negotiates a faster baud rate', async () => {
    const board = new FakeBoard();
    MockBinding.createPort('/dev/ttyUSB0');
    boards.set('/dev/ttyUSB0', board);
    const session = new BoardSession({
      path: '/dev/ttyUSB0',
      binding: fakeBinding(boards),
      timing: FAST_TIMING,
      baudRate: 921_600,
      selfTest: false,
    });
    sessions.push(session);
    await session.open();
    expect(session.baudRate).toBe(921_600);
    expect(board.received.some((m) => m.name === 'SET_BAUD' && m.baudRate === 921_600)).toBe(true);
  });

  it('keeps 115200 when the board refuses the rate', async () => {
    const board = new FakeBoard({ maxBaud: 2_000_000 });
    MockBinding.createPort('/dev/ttyUSB0');
    boards.set('/dev/ttyUSB0', board);
    board.options; // the fake refuses rates above its max baud; ask for more than HELLO says
    const session = new BoardSession({
      path: '/dev/ttyUSB0',
      binding: fakeBinding(boards),
      timing: FAST_TIMING,
      baudRate: 3_000_000,
      selfTest: false,
    });
    sessions.push(session);
    await session.open();
    expect(session.baudRate).toBe(115_200);
    expect(board.received.some((m) => m.name === 'SET_BAUD')).toBe(false);
  });
});

describe('SerialDeviceBackend', () => {
  it('mines a hexchain job in chunks sized from the rate; every found result verifies', async () => {
    const board = new FakeBoard({ hexRate: 20_000 });
    const { backend, found, errors } = await backendFor(setup('/dev/ttyUSB0', board), 200);
    const job = { ...hexJob('hx-1', 64), stopOnFound: false };
    backend.setJob(job);
    await until(() => found.length >= 3, 'three results');
    expect(backend.state).toBe('ok');
    for (const f of found) {
      expect(verifyFound(job, f)).toEqual({ ok: true });
      expect(f.device).toBe(backend.id);
    }
    expect(backend.id).toBe('serial:3c61053f6a280000');
    const counts = board.received
      .filter((m) => m.name === 'JOB_HEX')
      .map((m) => (m as { nonceCount: number }).nonceCount);
    expect(counts.at(-1)).toBeGreaterThanOrEqual(3000); // 20 kH/s * 0.2 s, learned from PROGRESS
    expect(counts.at(-1)).toBeLessThanOrEqual(5000);
    expect(errors).toEqual([]);
    await until(() => backend.totalHashes() > 0, 'hashes');
  });

  it('mines a tensor job and verifies each result with computeWork and the thresholds', async () => {
    const board = new FakeBoard({ tensorRate: 400 });
    const { backend, found } = await backendFor(setup('/dev/ttyUSB0', board), 300);
    const job = { ...tensorJob('t-1'), stopOnFound: false };
    backend.setJob(job);
    await until(() => found.length >= 2, 'two tensor results');
    for (const f of found) expect(verifyFound(job, f)).toEqual({ ok: true });
  });

  it('ends a solo job at its first result and cancels the board job', async () => {
    const board = new FakeBoard();
    const { backend, found } = await backendFor(setup('/dev/ttyUSB0', board));
    backend.setJob(hexJob('solo', 32));
    await until(() => found.length >= 1, 'a result');
    await until(() => board.currentJob === undefined, 'the cancel');
    expect(backend.job).toBeUndefined();
    expect(backend.state).toBe('idle');
    expect(board.received.some((m) => m.name === 'CANCEL')).toBe(true);
    expect(found.length).toBe(1); // a solo challenge takes one result
  });

  it('acknowledges every RESULT and acts once when the ACK is lost and the board retransmits', async () => {
    const board = new FakeBoard();
    const session = setup('/dev/ttyUSB0', board);
    const { backend, found } = await backendFor(session);
    board.ignoreResultAcks = 2;
    backend.setJob({ ...hexJob('dup', 64), stopOnFound: false });
    await until(() => found.length >= 2, 'two results');
    await until(() => session.stats().duplicateResults >= 2, 'retransmitted results');
    const ids = found.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(found.length).toBeLessThanOrEqual(board.results.length);
  });

  it('catches a wrong result before it is emitted, counts and reports it', async () => {
    const board = new FakeBoard();
    const { backend, found, errors } = await backendFor(setup('/dev/ttyUSB0', board));
    board.lie = 'nonce';
    backend.setJob({ ...hexJob('liar', 32), stopOnFound: false });
    await until(() => backend.stats.wrongResults >= 2, 'wrong results');
    expect(found).toEqual([]);
    expect(errors[0]).toBeInstanceOf(SerialError);
    expect((errors[0] as SerialError).code).toBe('wrong_result');
    expect(errors[0]!.message).toMatch(
      /wrong RESULT for challenge liar, nonce \d+: pow_above_target: .*; not submitted/,
    );
  });

  it('goes "no device" when the heartbeat stops, keeps its job, and resumes it when the board is back', async () => {
    const board = new FakeBoard();
    const session = setup('/dev/ttyUSB0', board);
    const { backend, found } = await backendFor(session);
    const states: string[] = [];
    backend.on('state', (s) => states.push(s));
    const job = { ...hexJob('hb', 64), stopOnFound: false };
    backend.setJob(job);
    await until(() => found.length >= 1, 'a result');
    board.silent = true;
    await until(() => backend.state === 'no device', 'no device');
    expect(backend.job).toBe(job);
    expect(backend.info().lastValidWork?.challengeId).toBe('hb');
    const before = found.length;
    board.silent = false;
    await until(() => backend.state === 'ok', 'reconnected');
    await until(() => found.length > before, 'results after the reconnect');
    expect(states).toEqual(expect.arrayContaining(['no device', 'starting', 'ok']));
    expect(backend.stats.linkLosses).toBe(1);
  });

  it('loses no result when the board reboots with an unacknowledged RESULT', async () => {
    const board = new FakeBoard();
    const session = setup('/dev/ttyUSB0', board);
    const { backend, found } = await backendFor(session);
    const skip = board.results.length; // the self-test's
    board.holdResults = true; // the RESULT frames are lost on the way: the host has none of them
    backend.setJob({ ...hexJob('reboot', 64), stopOnFound: false });
    await until(() => board.results.length >= skip + 2, 'results on the board');
    expect(found).toEqual([]);
    board.boot(2); // a watchdog reset: the board keeps its results and sends them again
    await until(() => backend.stats.reboots === 1, 'the BOOT');
    await until(() => session.state === 'ready', 'the handshake after the reboot');
    await until(() => found.length >= 2, 'the kept results');
    const ids = found.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of board.results.slice(skip, skip + 2)) expect(ids).toContain(`reboot/${r.nonce}`);
    await until(() => backend.state === 'ok' && board.currentJob !== undefined, 'the job resent');
    expect(backend.stats.linkLosses).toBe(0);
  });

  it('replaces the board job when the job changes, and still verifies late results of the old one', async () => {
    const board = new FakeBoard();
    const { backend } = await backendFor(setup('/dev/ttyUSB0', board));
    backend.setJob({ ...hexJob('old', 1_000_000), stopOnFound: false });
    await until(() => board.currentJob !== undefined, 'the first job');
    const first = board.currentJob!.jobId;
    backend.setJob({ ...hexJob('new', 1_000_000), stopOnFound: false });
    await until(() => board.currentJob !== undefined && board.currentJob.jobId !== first, 'the replacement');
    const done = board.received.filter((m) => m.name === 'CANCEL');
    expect(done).toEqual([]); // replaced by the new JOB, not cancelled
    backend.setJob(undefined);
    await until(() => board.currentJob === undefined, 'the cancel');
    expect(backend.state).toBe('idle');
  });

  it('retries later when the board is busy', async () => {
    const board = new FakeBoard();
    const { backend, errors } = await backendFor(setup('/dev/ttyUSB0', board));
    board.refuseJobs = 5;
    backend.setJob(hexJob('busy', 1_000_000));
    await until(() => errors.length >= 1, 'the refusal');
    expect(errors[0]!.message).toMatch(/JOB_HEX refused with status 5 \(busy\)/);
    board.refuseJobs = undefined;
    await until(() => board.currentJob !== undefined, 'the job after the retry');
  });

  it('does not take jobs it cannot run', async () => {
    const board = new FakeBoard({ capabilities: 1 });
    const { backend } = await backendFor(setup('/dev/ttyUSB0', board));
    expect(backend.supports(hexJob('x'))).toBe(true);
    expect(backend.supports(tensorJob('x'))).toBe(false);
  });
});
