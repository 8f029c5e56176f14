import { Signer } from '@tensormine/client';
import {
  type FoundResult,
  hexchainJob,
  Miner,
  type MinerLogEvent,
  type MiningJob,
  type SubmitOutcome,
  signFound,
  verifyFound,
  type WorkSource,
} from '@tensormine/miner';
import { formatPublicKey, generateKeyPair, type HexChallenge, signRequest } from '@tensormine/protocol';
import { createValidator } from '@tensormine/validator';
import { afterEach, describe, expect, it } from 'vitest';
import { SerialFleet, type SerialFleetOptions } from '../src/fleet.js';
import { hexJob, tensorJob, until } from './fake-board.js';
import { e2eUnavailable, ptyPair, requirePty, startSim, stopAll } from './pty.js';

/**
 * End to end over a socat pseudo-terminal pair with the simulated board (firmware-sim's
 * tm-sim, the C protocol core): the real serialport binding, the document's timings.
 */
const unavailable = e2eUnavailable();
if (unavailable) console.warn(`[serial e2e] ${unavailable}`);

const fleets: SerialFleet[] = [];

afterEach(async () => {
  for (const f of fleets.splice(0)) await f.stop();
  await stopAll();
});

const CHIP = '02a1b2c3d4e50000';
const ESP32_RATE = ['--rate-cap', '50000,2000'];

function fleet(ports: string[], options: Partial<SerialFleetOptions> = {}) {
  const f = new SerialFleet({ ports, jobMs: 1000, pollIntervalMs: 500, ...options });
  fleets.push(f);
  const found: FoundResult[] = [];
  const errors: Error[] = [];
  f.on('found', (x) => found.push(x));
  f.on('error', (e) => errors.push(e));
  return { fleet: f, found, errors };
}

function expectVerified(job: MiningJob, found: readonly FoundResult[]) {
  for (const f of found) expect(verifyFound(job, f)).toEqual({ ok: true });
  expect(new Set(found.map((f) => f.id)).size).toBe(found.length);
}

requirePty(unavailable, it);

describe.skipIf(unavailable !== undefined)('over a pty with tm-sim', () => {
  it('identifies the board, passes the self-test and mines hexchain and tensor results that verify', async () => {
    const pty = await ptyPair();
    const { fleet: f, found, errors } = fleet([pty.host]);
    await f.start();
    startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE]);
    await until(() => f.boards()[0]?.state === 'idle', 'the board ready');
    const info = f.boards()[0]!;
    expect(info).toMatchObject({
      id: `serial:${CHIP}`,
      chipId: CHIP,
      port: pty.host,
      firmware: 'tm-sim 0.1.0',
      board: 'tm-sim',
      capabilities: ['hexchain', 'matmul', 'conv', 'sigmoid', 'tanh'],
      maxDim: 32,
      maxFilters: 4,
    });
    expect(info.selfTest).toMatchObject({ ok: true, tested: ['hex', 'tensor'] });
    // A pseudo-terminal cannot carry DTR/RTS; the session went on without them.
    expect(f.backends()[0]!.attachedSession!.controlLinesError?.message).toMatch(
      /Inappropriate ioctl for device/,
    );

    const hex = { ...hexJob('e2e-hex', 5000), stopOnFound: false };
    f.setJob(hex);
    await until(() => found.length >= 5, 'hexchain results');
    expect(f.state).toBe('ok');
    expectVerified(hex, found);

    const tensor = tensorJob('e2e-tensor', { stopOnFound: false }, 16); // about 2 results/s at N = 8
    found.length = 0;
    f.setJob(tensor);
    await until(() => found.filter((x) => x.challengeId === 'e2e-tensor').length >= 3, 'tensor results');
    expectVerified(
      tensor,
      found.filter((x) => x.challengeId === 'e2e-tensor'),
    );
    // Hash counts arrive in the board's PROGRESS reports (one a second while it mines).
    await until(() => f.totalHashes() > 0, 'a progress report with hash counts');
    expect(errors).toEqual([]);
  });

  it('negotiates 921600 baud and keeps an idle board (PROGRESS every 5 s) connected', async () => {
    const pty = await ptyPair();
    const { fleet: f } = fleet([pty.host], { baudRate: 921_600 });
    await f.start();
    startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE]);
    await until(() => f.boards()[0]?.state === 'idle', 'the board ready');
    expect(f.boards()[0]!.baudRate).toBe(921_600);
    await new Promise((r) => setTimeout(r, 4500)); // longer than the 3 s heartbeat timeout
    expect(f.boards()[0]!).toMatchObject({ state: 'idle', stats: { linkLosses: 0 } });
  });

  it('recovers from garbage and dropped frames', async () => {
    const pty = await ptyPair();
    const { fleet: f, found } = fleet([pty.host]);
    await f.start();
    startSim(pty.device, [
      '--chip-id',
      CHIP,
      ...ESP32_RATE,
      '--fault',
      'garbage:0.3',
      '--fault',
      'drop:0.05',
    ]);
    await until(() => f.boards()[0]?.state === 'idle', 'the board ready');
    const job = { ...hexJob('e2e-faults', 5000), stopOnFound: false };
    f.setJob(job);
    await until(() => found.length >= 10, 'results through the faults');
    expectVerified(job, found);
    const link = f.boards()[0]!.link!;
    expect(link.decoder.garbageBytes).toBeGreaterThan(0);
  });

  it('keeps the identity and counters of a board that is unplugged and comes back on another port', async () => {
    const a = await ptyPair();
    const b = await ptyPair();
    const { fleet: f, found } = fleet([a.host, b.host]);
    await f.start();
    const first = startSim(a.device, ['--chip-id', CHIP, ...ESP32_RATE]);
    await until(() => f.boards()[0]?.state === 'idle', 'the board ready');
    const job = { ...hexJob('e2e-replug', 5000), stopOnFound: false };
    f.setJob(job);
    await until(() => found.length >= 3, 'results on the first port');
    const before = f.boards()[0]!;
    await first.stop(); // unplugged
    await until(() => f.boards()[0]?.state === 'no device', 'no device');
    expect(f.boards()[0]!.lastValidWork?.challengeId).toBe('e2e-replug');
    startSim(b.device, ['--chip-id', CHIP, ...ESP32_RATE]); // plugged in elsewhere
    await until(() => f.boards()[0]?.state === 'ok' && f.boards()[0]?.port === b.host, 'back on port b');
    const n = found.length;
    await until(() => found.length > n, 'results on the second port');
    const after = f.boards()[0]!;
    expect(f.boards().length).toBe(1);
    expect(after.id).toBe(before.id);
    expect(after.stats.found).toBeGreaterThan(before.stats.found);
    expect(after.totalHashes).toBeGreaterThanOrEqual(before.totalHashes);
    expectVerified(job, found);
  });

  it('loses no found result when the board reboots mid-job', async () => {
    const pty = await ptyPair();
    const { fleet: f, found } = fleet([pty.host]);
    await f.start();
    const sim = startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE, '--fault', 'reboot-after:3']);
    await until(() => f.boards()[0]?.state === 'idle', 'the board ready');
    const job = { ...hexJob('e2e-reboot', 2000), stopOnFound: false };
    f.setJob(job);
    await sim.waitForLog(/fault: rebooting/);
    await until(() => f.backends()[0]!.stats.reboots === 1, 'the reboot seen');
    expect(f.boards()[0]!.stats.linkLosses).toBe(0); // the port stayed open: a new handshake on it
    await until(() => f.state === 'ok', 'mining again');
    const n = found.length;
    await until(() => found.length > n + 2, 'results after the reboot');
    // Every result the board sent for this job was emitted. (The self-tests' nonces start at a
    // random point below 2^40; this job's stay below a few million.)
    const sent = new Set(sim.resultNonces().filter((x) => x < 1e8));
    const missing = () => [...sent].filter((x) => !found.some((f) => f.nonce === x));
    await until(() => missing().length === 0, 'every sent result emitted').catch(() => {
      throw new Error(`results sent but not emitted: ${missing().join(', ')}`);
    });
    expectVerified(job, found);
  });

  it('marks a board that returns wrong results "self-test failed" and gives it no work', async () => {
    const pty = await ptyPair();
    const { fleet: f, found } = fleet([pty.host]);
    await f.start();
    const sim = startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE, '--fault', 'wrong-result']);
    await until(() => f.boards()[0]?.state === 'self-test failed', 'self-test failed');
    expect(f.boards()[0]!.selfTest?.reason).toBe(
      'hex: wrong RESULT: the result fields differ from the reference',
    );
    f.setJob({ ...hexJob('e2e-liar', 5000), stopOnFound: false });
    await new Promise((r) => setTimeout(r, 1000));
    expect(found).toEqual([]);
    // The self-test's job was the only one the board got (its retransmissions are logged once).
    expect(new Set([...sim.log().matchAll(/<- JOB_HEX seq \d+ job (\d+)/g)].map((m) => m[1])).size).toBe(1);
  });

  it('catches every wrong result before it would be submitted (self-test off)', async () => {
    const pty = await ptyPair();
    const { fleet: f, found, errors } = fleet([pty.host], { selfTest: false });
    await f.start();
    startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE, '--fault', 'wrong-result']);
    await until(() => f.boards()[0]?.state === 'idle', 'the board ready');
    f.setJob({ ...hexJob('e2e-wrong', 5000), stopOnFound: false });
    await until(() => (f.boards()[0]?.stats.wrongResults ?? 0) >= 3, 'wrong results');
    expect(found).toEqual([]);
    expect(errors.some((e) => /wrong RESULT for challenge e2e-wrong.*pow_hash differs/.test(e.message))).toBe(
      true,
    );
  });

  it('mines hexchain blocks that the in-process validator accepts (Miner, fleet, tm-sim)', async () => {
    const validator = await createValidator({
      dataDir: ':memory:',
      hexDifficulty: 20_000n,
      rateLimitPerSecond: 100_000,
      rateLimitBurst: 100_000,
      keyRateLimitPerSecond: 100_000,
      keyRateLimitBurst: 100_000,
    });
    try {
      const key = generateKeyPair();
      const body = JSON.stringify({ pubkey: formatPublicKey(key.publicKey), device_type: 'esp32' });
      const registered = await validator.inject({
        method: 'POST',
        url: '/devices/register',
        headers: {
          ...signRequest({ method: 'POST', path: '/devices/register', body, secretKey: key.secretKey }),
          'content-type': 'application/json',
        },
        payload: body,
      });
      expect(registered.statusCode).toBe(200);
      const source: WorkSource = {
        url: 'inject://validator',
        async getWork(): Promise<MiningJob> {
          const res = await validator.inject({
            method: 'POST',
            url: '/api/hexchain/challenge',
            payload: { slot: 5000, slot_hash: 'serial-e2e' },
          });
          if (res.statusCode !== 200) throw new Error(`challenge: ${res.statusCode} ${res.body}`);
          return hexchainJob(res.json() as HexChallenge, key.publicKey);
        },
        async submit(found: FoundResult): Promise<SubmitOutcome> {
          const res = await validator.inject({
            method: 'POST',
            url: '/api/hexchain/submit',
            payload: signFound(found, Signer.fromSecretKey(key.secretKey)) as unknown as Record<
              string,
              unknown
            >,
          });
          const json = res.json() as Record<string, unknown>;
          if (res.statusCode === 200) return { status: 'accepted', details: json };
          return { status: 'rejected', code: String(json.code), message: String(json.message) };
        },
      };
      const pty = await ptyPair();
      const { fleet: f } = fleet([pty.host]);
      const miner = new Miner({ source, backends: [f] });
      const events: MinerLogEvent[] = [];
      miner.on('log', (e) => events.push(e));
      await miner.start();
      startSim(pty.device, ['--chip-id', CHIP, ...ESP32_RATE]);
      await until(() => events.filter((e) => e.type === 'accepted').length >= 2, 'two accepted blocks');
      await miner.stop();
      expect(events.filter((e) => e.type === 'rejected')).toEqual([]);
      const accepted = events.filter((e) => e.type === 'accepted');
      expect(accepted[0]!.found.device).toBe(`serial:${CHIP}`);
    } finally {
      await validator.close();
    }
  });
});
