/**
 * The board on the network, end to end: a validator in this process and two `tm-sim --net`
 * boards (the C core over POSIX sockets). They register with their callback ports, mine accepted
 * blocks, and drop their work at once when a callback says it is stale (another block at the
 * cell, a lower difficulty); a malformed or unsigned notification changes nothing; a killed
 * board is backed off; a board restarted with its key is recognised; boards that answer
 * callbacks badly cost the validator one bounded socket each.
 *
 * Every wait is for a condition, with a generous bound: the boards' speed is capped (200 nonces
 * per second, an ESP32 is about 50 000) so that the test, not the machine, decides who wins a
 * cell.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import {
  type Coord,
  type DeviceCallback,
  generateKeyPair,
  type HexChallenge,
  type KeyPair,
  signDeviceCallback,
  toHex,
} from '@tensormine/protocol';
import { createValidator, type Validator } from '@tensormine/validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForValue } from '../../test-support/wait.ts';
import { buildCore } from './driver.ts';
import { NetBoard } from './net-board.ts';
import { BlockSolver, registerKey as registerKey_, takeCell as takeCell_ } from './net-harness.ts';

const EASY = 200n;
const HARD = 16_000n; // 80 s of a capped board's work per block: the test's harness wins the cells
const RATE = '200';

interface Listed {
  pubkey: string;
  device_id: string;
  registered_at: number;
  hashrate_reported: number | null;
  blocks_1h: number;
  work: { challenge_id: string; coord: Coord; difficulty: number; stale: boolean } | null;
  callback: {
    state: string;
    sent: number;
    delivered: number;
    failed: number;
    last_attempt_at: number | null;
    retry_at: number | null;
  };
}

let v: Validator;
let url: string;
const boards: NetBoard[] = [];
const harness = generateKeyPair();
let solver: BlockSolver;

async function json<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}${path}`, init);
  return { status: res.status, body: (await res.json()) as T };
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  json<Record<string, unknown>>(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function setDifficulty(d: bigint): Promise<void> {
  const res = await post(
    '/admin/config',
    { hexchain_difficulty: Number(d) },
    { authorization: `Bearer ${v.adminToken}` },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function device(pubkey: string): Promise<Listed> {
  const { body } = await json<{ devices: Listed[] }>('/devices?limit=500');
  const d = body.devices.find((x) => x.pubkey === pubkey);
  if (!d) throw new Error(`device ${pubkey} is not listed`);
  return d;
}

/** Polls `probe` until it gives a value, within the tests' bound of a wait (test-support/wait.ts). */
const until = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> =>
  waitForValue(probe, what, { intervalMs: 50 });

const registerKey = (key: KeyPair, body: Record<string, unknown>) => registerKey_(url, key, body);

/** Takes `coord` with the harness key (a board's own block may have taken it first: taken either way). */
async function takeCell(coord: Coord): Promise<void> {
  const taken = await takeCell_(url, harness, coord, solver);
  if (taken === undefined) throw new Error(`no challenge for ${JSON.stringify(coord)}`);
  if (taken.status === 409 && taken.code === 'coordinate_occupied') return;
  expect(taken.status, taken.code).toBe(200);
}

/** The board's current work, once it is a fresh challenge at `difficulty` or above (retargets only raise it). */
function workAt(pubkey: string, difficulty: bigint) {
  return until(`a fresh challenge at ${difficulty} for ${pubkey.slice(0, 8)}`, async () => {
    const d = await device(pubkey);
    return d.work && !d.work.stale && BigInt(d.work.difficulty) >= difficulty ? d.work : undefined;
  });
}

function startBoard(seed: number): NetBoard {
  const b = new NetBoard(['--net', url, '--seed', String(seed), '--listen', '127.0.0.1', '--rate-cap', RATE]);
  boards.push(b);
  return b;
}

async function pubkeyOf(b: NetBoard): Promise<string> {
  return (await b.waitFor(/net board ([0-9a-f]{64})/))[1]!;
}

beforeAll(async () => {
  buildCore();
  solver = new BlockSolver();
  v = await createValidator({
    dataDir: ':memory:',
    hexDifficulty: EASY,
    // Blocks always come faster than one an hour: retargets only raise the difficulty, so a
    // notification is only ever the one a test step causes.
    blockIntervalMs: 3_600_000n,
    challengeTtlS: 600,
    deviceCallbacksPerAddress: 64,
    // every board and the harness share 127.0.0.1
    rateLimitPerSecond: 100_000,
    rateLimitBurst: 100_000,
    logger: false,
  });
  url = await v.listen({ host: '127.0.0.1', port: 0 });
  // the harness mines too: registered, without a port
  expect(await registerKey(harness, { device_type: 'native' })).toBe(200);
});

afterAll(async () => {
  await Promise.all(boards.map((b) => b.stop('SIGKILL')));
  solver?.close();
  await v?.close();
});

describe('tm-sim --net against a validator', () => {
  let a: NetBoard;
  let b: NetBoard;
  let keyA: string;
  let keyB: string;

  it('two boards register with their callback ports and mine accepted blocks', async () => {
    a = startBoard(1);
    b = startBoard(2);
    [keyA, keyB] = await Promise.all([pubkeyOf(a), pubkeyOf(b)]);
    for (const board of [a, b]) {
      await board.waitFor(/validator speaks v4\.1 \(hexchain\)/);
      await board.waitFor(/^tm-sim +[\d.]+ callbacks on port \d+$/);
      await board.waitFor(/block accepted: h-/);
    }
    for (const key of [keyA, keyB]) {
      const d = await device(key);
      expect(d.hashrate_reported).toBe(200);
      expect(d.blocks_1h).toBeGreaterThanOrEqual(1);
      expect(['idle', 'ok']).toContain(d.callback.state);
    }
  });

  it('a board drops its work within its slice when a block takes its cell', async () => {
    await setDifficulty(HARD);
    await Promise.all([workAt(keyA, HARD), workAt(keyB, HARD)]); // neither can win a cell quickly now
    for (const [board, key] of [
      [a, keyA],
      [b, keyB],
    ] as const) {
      const work = await workAt(key, HARD);
      const from = board.lines.length;
      await takeCell(work.coord);
      const taken = performance.now();
      await board.waitFor(/callback: work stale \(block at its cell\)/, from);
      await board.waitFor(new RegExp(`job ${work.challenge_id} dropped: callback`), from);
      await board.waitFor(/job h-\S+ at /, from); // and asks for new work
      expect(board.lines.find((l, i) => i >= from && /dropped: callback/.test(l.text))!.at).toBeGreaterThan(
        taken - 5_000,
      );
      expect((await device(key)).callback).toMatchObject({ state: 'ok' });
    }
  });

  it('a lower difficulty makes harder work stale (retarget), and both boards drop it', async () => {
    const works = await Promise.all([workAt(keyA, HARD), workAt(keyB, HARD)]);
    const from = [a.lines.length, b.lines.length];
    await setDifficulty(EASY * 2n);
    await a.waitFor(/callback: work stale \(retarget\)/, from[0]);
    await a.waitFor(new RegExp(`job ${works[0].challenge_id} dropped: callback`), from[0]);
    await b.waitFor(new RegExp(`job ${works[1].challenge_id} dropped: callback`), from[1]);
    await setDifficulty(HARD);
  });

  it('ignores malformed, unsigned, forged, stale and replayed notifications, and acts on a valid one', async () => {
    const work = await workAt(keyA, HARD);
    const port = await a.port();
    const from = a.lines.length;
    const raw = (text: string | Buffer) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let answer = '';
        socket.on('data', (c) => {
          answer += c.toString('latin1');
        });
        socket.on('close', () => resolve(answer));
        socket.on('error', () => resolve(answer));
        socket.end(text);
      });
    const request = (
      body: string,
      headers: Record<string, string> = {},
      method = 'POST',
      path = '/tm/notify',
    ) =>
      raw(
        `${method} ${path} HTTP/1.1\r\nhost: board\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${Object.entries(
          headers,
        )
          .map(([k, x]) => `${k}: ${x}\r\n`)
          .join('')}\r\n${body}`,
      );
    const notice = (fields: Partial<DeviceCallback> = {}): DeviceCallback => ({
      type: 'work_stale',
      reason: 'block',
      device: keyA,
      challenge_id: work.challenge_id,
      coord: work.coord,
      height: 1,
      difficulty: Number(HARD),
      sent_at: Date.now(),
      seq: 1,
      ...fields,
    });
    const node = v.context.identity;
    const signed = (n: DeviceCallback) => signDeviceCallback(n, node.secretKey, node.publicKey);
    const good = signed(notice());
    const goodBody = Buffer.from(good.body).toString('utf8');
    const sig = good.headers['x-tm-signature']!;
    const statusOf = (answer: string) => /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
    const codeOf = (answer: string) => /"code":"([a-z_]+)"/.exec(answer)?.[1];

    const cases: [string, Promise<string>, string, string][] = [
      ['no signature', request(goodBody), '401', 'signature_required'],
      [
        'a signature that is not hex',
        request(goodBody, { 'x-tm-signature': 'zz'.repeat(64) }),
        '401',
        'signature_invalid',
      ],
      [
        'the signature of another body',
        request(goodBody.replace('"seq":1', '"seq":2'), { 'x-tm-signature': sig }),
        '401',
        'signature_invalid',
      ],
      [
        'signed by another key',
        (() => {
          const other = generateKeyPair();
          const forged = signDeviceCallback(notice(), other.secretKey, other.publicKey);
          return request(Buffer.from(forged.body).toString('utf8'), forged.headers);
        })(),
        '401',
        'signature_invalid',
      ],
      [
        'not JSON',
        request('{"type":"work_stale",', { 'x-tm-signature': sig }),
        '400',
        'invalid_notification',
      ],
      [
        'JSON without the fields',
        request('{"type":"work_stale"}', { 'x-tm-signature': sig }),
        '400',
        'invalid_notification',
      ],
      [
        'another device',
        (() => {
          const s = signed(notice({ device: keyB }));
          return request(Buffer.from(s.body).toString('utf8'), s.headers);
        })(),
        '403',
        'wrong_device',
      ],
      [
        'two minutes old',
        (() => {
          const s = signed(notice({ sent_at: Date.now() - 120_000 }));
          return request(Buffer.from(s.body).toString('utf8'), s.headers);
        })(),
        '401',
        'notification_expired',
      ],
      [
        'too large',
        request(`{"pad":"${'x'.repeat(2000)}"}`, { 'x-tm-signature': sig }),
        '413',
        'body_too_large',
      ],
      ['a GET', request('', {}, 'GET'), '405', 'method_not_allowed'],
      ['another path', request(goodBody, { 'x-tm-signature': sig }, 'POST', '/tm/other'), '404', 'not_found'],
      [
        'a chunked body',
        raw(`POST /tm/notify HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`),
        '400',
        'malformed_request',
      ],
      ['garbage', raw(Buffer.from([0, 1, 2, 3, 0xff, 0x0d, 0x0a, 0x0d, 0x0a])), '400', 'malformed_request'],
    ];
    for (const [name, answer, status, code] of cases) {
      const text = await answer;
      expect(statusOf(text), `${name}: ${text}`).toBe(status);
      expect(codeOf(text), `${name}: ${text}`).toBe(code);
    }
    // A connection that sends nothing is answered 408 in half a second; the board goes on.
    const silent = await new Promise<string>((resolve) => {
      const socket: Socket = connect(port, '127.0.0.1');
      let answer = '';
      socket.on('data', (c) => {
        answer += c.toString('latin1');
      });
      socket.on('close', () => resolve(answer));
    });
    expect(statusOf(silent)).toBe('408');
    // None of them made the board drop anything.
    expect(a.count(/dropped: callback/, from)).toBe(0);

    // A valid one about the job it works on now (it may have found a block meanwhile): dropped
    // at once; the same bytes again: refused as a replay.
    const job = await until('a running job', async () => a.currentJob());
    const valid = signed(notice({ challenge_id: job }));
    const validBody = Buffer.from(valid.body).toString('utf8');
    expect(await request(validBody, valid.headers)).toMatch(/^HTTP\/1\.1 200[\s\S]*"dropped":true/);
    await a.waitFor(new RegExp(`job ${job} dropped: callback`), from);
    expect(codeOf(await request(validBody, valid.headers))).toBe('notification_replayed');
  });

  it('backs off the callbacks of a killed board', async () => {
    await b.stop('SIGKILL');
    // challenges still issued to its key (a board that cannot be reached), one after the other stale
    const staleFor = async () => {
      const res = await post('/api/hexchain/challenge', {
        slot: 2,
        slot_hash: 'dead-board',
        miner_pubkey: keyB,
      });
      expect(res.status).toBe(200);
      await takeCell((res.body as unknown as HexChallenge).coord);
    };
    await staleFor();
    const first = await until('a failed callback', async () => {
      const d = await device(keyB);
      return d.callback.failed >= 1 ? d.callback : undefined;
    });
    expect(first.state).toBe('failing');
    expect(first.retry_at! - first.last_attempt_at!).toBeGreaterThanOrEqual(0);
    await staleFor();
    const second = await until('a second failed callback', async () => {
      const d = await device(keyB);
      return d.callback.failed >= 2 ? d.callback : undefined;
    });
    // 1 s, then 2 s: the second back-off is longer (Unix seconds in the listing: at least 1 s later)
    expect(second.retry_at! - second.last_attempt_at!).toBeGreaterThanOrEqual(1);
    expect(second.sent).toBe(second.delivered + second.failed); // nothing sent during a back-off went unaccounted
  });

  it('recognises a board restarted with the same key and calls it back again', async () => {
    const before = await device(keyB);
    b = startBoard(2);
    expect(await pubkeyOf(b)).toBe(keyB);
    await b.waitFor(/^tm-sim +[\d.]+ callbacks on port \d+$/);
    await b.waitFor(/registered [0-9a-f]{64} as esp32/);
    // The back-off ended with the registration: the notification held for the dead board was
    // sent to the new one at once (not its job: delivered, nothing dropped).
    const after = await until('the back-off to end', async () => {
      const d = await device(keyB);
      return d.callback.retry_at === null && (d.callback.state === 'idle' || d.callback.state === 'ok')
        ? d
        : undefined;
    });
    expect(after.device_id).toBe(before.device_id);
    expect(after.registered_at).toBe(before.registered_at);
    const work = await workAt(keyB, HARD);
    const from = b.lines.length;
    await takeCell(work.coord);
    await b.waitFor(new RegExp(`job ${work.challenge_id} dropped: callback`), from);
  });

  it('boards that hang or answer garbage cost the validator one bounded socket each', async () => {
    // Eight registered "boards" on one port that accept and never answer, or answer garbage.
    const sockets = new Set<Socket>();
    let accepted = 0;
    const server: Server = createServer((socket) => {
      accepted++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
      socket.resume(); // read and drop the request, so that the validator's close is seen
      if (accepted % 2 === 0) socket.write(Buffer.alloc(4096, 0x41)); // garbage, then silence
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const keys = Array.from({ length: 8 }, () => generateKeyPair());
    for (const k of keys) expect(await registerKey(k, { port })).toBe(200);
    for (const k of keys) {
      const res = await post('/api/hexchain/challenge', {
        slot: 3,
        slot_hash: 'bad-boards',
        miner_pubkey: toHex(k.publicKey),
      });
      expect(res.status).toBe(200);
    }
    const work = await workAt(keyA, HARD);
    const from = a.lines.length;
    await setDifficulty(EASY * 2n); // every challenge above it is stale: eight bad boards and board A
    await a.waitFor(new RegExp(`job ${work.challenge_id} dropped: callback`), from);
    await until('the bad boards to be called', async () => (accepted >= 8 ? true : undefined));
    // Each socket is closed by the validator after its timeout (1 s): none is kept.
    await until('every socket closed', async () => (sockets.size === 0 ? true : undefined));
    for (const k of keys) {
      const d = await device(toHex(k.publicKey));
      expect(d.callback.state, JSON.stringify(d.callback)).toMatch(/failing|refused/);
    }
    const health = await json<{ status: string }>('/health');
    expect(health.body.status).toBe('ok');
    await new Promise<void>((r) => server.close(() => r()));
    await setDifficulty(HARD);
  });
});

describe('tm-sim --net --pool against a validator that runs a pool', () => {
  it('joins the pool and mines shares, which the validator accepts', async () => {
    const pooled = await createValidator({
      dataDir: ':memory:',
      hexDifficulty: 2_000n, // about 10 s of a capped board per block: shares come first
      blockIntervalMs: 3_600_000n,
      poolStrategy: 'pplns',
      poolShareIntervalMs: 1000n,
      logger: false,
    });
    try {
      const poolUrl = await pooled.listen({ host: '127.0.0.1', port: 0 });
      const board = new NetBoard([
        '--net',
        poolUrl,
        '--seed',
        '7',
        '--listen',
        '127.0.0.1',
        '--rate-cap',
        RATE,
        '--pool',
      ]);
      boards.push(board);
      const key = (await board.waitFor(/net board ([0-9a-f]{64})/))[1]!;
      await board.waitFor(/pool: member; mining shares/);
      await board.waitFor(/job h-\S+ at .* \(shares\)$/);
      const member = await until('accepted shares', async () => {
        const res = await fetch(`${poolUrl}/pool/members/${key}`);
        const body = (await res.json()) as { member: boolean; shares_accepted: number };
        return body.shares_accepted >= 2 ? body : undefined;
      });
      expect(member.member).toBe(true);
    } finally {
      await pooled.close();
    }
  });
});
