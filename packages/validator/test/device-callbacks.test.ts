import { createServer, type IncomingMessage, type Server } from 'node:http';
import {
  type CallbackOutcome,
  type CallbackTarget,
  DEVICE_CALLBACK_PATH,
  DeviceCallbackSchema,
  fromHex,
  type KeyPair,
  type SignedDeviceCallback,
  signRequest,
  toHex,
  verifyDeviceCallback,
} from '@tensormine/protocol';
import { Value } from 'typebox/value';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait.ts';
import type { Validator } from '../src/app.js';
import { testKey, testValidator } from './helpers.js';
import { issue, mine, submit } from './hexchain-mine.js';

const board = testKey('board');
const miner = testKey('other-miner');
const BOARD = toHex(board.publicKey);

/** A sender that records what the validator would send, and answers 200. */
function recordingSender() {
  const sent: { target: CallbackTarget; message: SignedDeviceCallback }[] = [];
  const send = async (target: CallbackTarget, message: SignedDeviceCallback): Promise<CallbackOutcome> => {
    sent.push({ target, message });
    return { delivered: true, status: 200 };
  };
  return { sent, send };
}

/** A signed registration injected from `remoteAddress`, with extra headers and body fields. */
function registerFrom(
  v: Validator,
  key: KeyPair,
  remoteAddress: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const payload = JSON.stringify({ pubkey: toHex(key.publicKey), device_type: 'esp32', ...body });
  const signed = signRequest({
    method: 'POST',
    path: '/devices/register',
    body: payload,
    secretKey: key.secretKey,
  });
  return v.inject({
    method: 'POST',
    url: '/devices/register',
    remoteAddress,
    headers: { ...signed, ...headers, 'content-type': 'application/json' },
    payload,
  });
}

/** Issues challenges to `key` until one shares its cell with a challenge for `other`; mines it for `other`. */
async function takeTheCell(v: Validator, key: KeyPair) {
  const mineChallenge = await issue(v, { miner_pubkey: toHex(key.publicKey) });
  for (let i = 0; i < 100; i++) {
    const c = await issue(v);
    if (c.coord.q === mineChallenge.coord.q && c.coord.r === mineChallenge.coord.r) {
      const res = await submit(v, mine(c, miner));
      expect(res.statusCode, res.body).toBe(200);
      return mineChallenge;
    }
  }
  throw new Error('no second challenge for the cell');
}

const validators: Validator[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(validators.splice(0).map((v) => v.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function validatorWith(options: Parameters<typeof testValidator>[0] = {}) {
  const v = await testValidator({ hexDifficulty: 16n, ...options });
  validators.push(v);
  // the other miner registers (without a port)
  const res = await registerFrom(v, miner, '127.0.0.1', { device_type: 'native' });
  expect(res.statusCode, res.body).toBe(200);
  return v;
}

describe('device callbacks', () => {
  it('POSTs a node-signed work_stale to the registered port when another block takes the cell', async () => {
    const received: { req: IncomingMessage; body: Buffer }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ req, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"dropped":true}');
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const v = await validatorWith();
    const reg = await registerFrom(v, board, '127.0.0.1', { port, hashrate: 150_000 });
    expect(reg.json()).toMatchObject({ callbacks: 'on', port });
    const work = await takeTheCell(v, board);
    await waitFor(() => received.length === 1, 'the callback');
    const { req, body } = received[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe(DEVICE_CALLBACK_PATH);
    const callback = JSON.parse(body.toString('utf8'));
    expect(Value.Check(DeviceCallbackSchema, callback)).toBe(true);
    expect(callback).toMatchObject({
      type: 'work_stale',
      reason: 'block',
      device: BOARD,
      challenge_id: work.id,
      coord: work.coord,
      seq: 1,
    });
    const nodeKey = fromHex((await v.inject('/health')).json().node_pubkey, 32);
    expect(verifyDeviceCallback(body, String(req.headers['x-tm-signature']), nodeKey)).toBe(true);
    // The operator's view: its work is stale, the callback was delivered, its reported rate.
    const listedNow = async () =>
      (await v.inject('/devices')).json().devices.find((d: { pubkey: string }) => d.pubkey === BOARD);
    await waitFor(async () => (await listedNow()).callback.state === 'ok', 'the callback to be answered'); // the answer comes after the request
    const listed = await listedNow();
    expect(listed).toMatchObject({
      hashrate_reported: 150_000,
      work: { challenge_id: work.id, stale: true },
      callback: { state: 'ok', sent: 1, delivered: 1 },
    });
  });

  it('calls back only the socket address of the registration, whatever the headers and the body name', async () => {
    const { sent, send } = recordingSender();
    const v = await validatorWith({ deviceCallbackSend: send });
    const res = await registerFrom(
      v,
      board,
      '192.168.1.77',
      {
        port: 4321,
        host: '10.9.9.9',
        callback_url: 'http://10.9.9.9:80/',
        address: '10.9.9.9',
        callback_port: 80,
      },
      { host: '10.9.9.9:80', origin: 'http://10.9.9.9' },
    );
    expect(res.statusCode, res.body).toBe(200);
    await takeTheCell(v, board);
    await waitFor(() => sent.length === 1, 'one callback sent');
    expect(sent[0]!.target).toEqual({ address: '192.168.1.77', port: 4321 });
  });

  it('does not call back a registration that came through a proxy it does not trust; a trusted one forwards its client', async () => {
    const { sent, send } = recordingSender();
    const v = await validatorWith({ deviceCallbackSend: send });
    // A reverse proxy on the validator's host: calling back would call 127.0.0.1 at a stranger's port.
    for (const header of [
      { 'x-forwarded-for': '10.9.9.9' },
      { forwarded: 'for=10.9.9.9' },
      { 'x-real-ip': '10.9.9.9' },
      { via: '1.1 haproxy' },
    ]) {
      const res = await registerFrom(v, board, '127.0.0.1', { port: 22 }, header);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().callbacks).toBe('off');
    }

    const trusted = await validatorWith({ deviceCallbackSend: send, trustProxy: ['127.0.0.1'] });
    const res = await registerFrom(
      trusted,
      board,
      '127.0.0.1',
      { port: 4321 },
      { 'x-forwarded-for': '192.168.1.78' },
    );
    expect(res.json().callbacks).toBe('on');
    await takeTheCell(trusted, board);
    await waitFor(() => sent.length === 1, 'one callback sent');
    expect(sent[0]!.target).toEqual({ address: '192.168.1.78', port: 4321 });
  });

  it('calls an IPv4-mapped address at its IPv4 address', async () => {
    const { sent, send } = recordingSender();
    const v = await validatorWith({ deviceCallbackSend: send });
    expect((await registerFrom(v, board, '::ffff:10.0.0.42', { port: 9000 })).json().callbacks).toBe('on');
    await takeTheCell(v, board);
    await waitFor(() => sent.length === 1, 'one callback sent');
    expect(sent[0]!.target).toEqual({ address: '10.0.0.42', port: 9000 });
  });

  it('does not call a public address unless the operator allows it, nor anyone when callbacks are off', async () => {
    const { sent, send } = recordingSender();
    const v = await validatorWith({ deviceCallbackSend: send });
    expect((await registerFrom(v, board, '203.0.113.9', { port: 9000 })).json().callbacks).toBe('off');
    await takeTheCell(v, board);
    const listed = (await v.inject('/devices'))
      .json()
      .devices.find((d: { pubkey: string }) => d.pubkey === BOARD);
    expect(listed.callback.state).toBe('off');
    expect(sent).toHaveLength(0);

    const all = await validatorWith({ deviceCallbackSend: send, deviceCallbacks: 'all' });
    expect((await registerFrom(all, board, '203.0.113.9', { port: 9000 })).json().callbacks).toBe('on');
    const off = await validatorWith({ deviceCallbackSend: send, deviceCallbacks: 'off' });
    expect((await registerFrom(off, board, '127.0.0.1', { port: 9000 })).json().callbacks).toBe('off');
  });

  it('leaves a registration a status proxy relays to the proxy', async () => {
    const { sent, send } = recordingSender();
    const v = await validatorWith({ deviceCallbackSend: send });
    const res = await registerFrom(v, board, '127.0.0.1', { port: 9000 }, { 'x-tm-callback-relay': '1' });
    expect(res.json().callbacks).toBe('relayed');
    await takeTheCell(v, board);
    expect(sent).toHaveLength(0);
  });

  it('caps the devices with a callback port per address, and lets a device already there register again', async () => {
    const v = await validatorWith({ deviceCallbacksPerAddress: 2 });
    const keys = [0, 1, 2].map((n) => testKey(`fleet-${n}`));
    expect((await registerFrom(v, keys[0]!, '10.1.1.1', { port: 9000 })).statusCode).toBe(200);
    expect((await registerFrom(v, keys[1]!, '10.1.1.1', { port: 9001 })).statusCode).toBe(200);
    const third = await registerFrom(v, keys[2]!, '10.1.1.1', { port: 9002 });
    expect(third.statusCode).toBe(429);
    expect(third.json()).toMatchObject({
      code: 'device_limit_reached',
      message:
        'port: this address already has 2 devices with a callback port, the most the validator allows (2); register without a port (the device then polls) or ask the operator to raise deviceCallbacksPerAddress',
      details: { devices: 2, limit: 2 },
    });
    expect((await registerFrom(v, keys[2]!, '10.1.1.1', {})).statusCode).toBe(200); // without a port
    expect((await registerFrom(v, keys[2]!, '10.1.1.2', { port: 9002 })).statusCode).toBe(200);
    expect((await registerFrom(v, keys[0]!, '10.1.1.1', { port: 9100 })).statusCode).toBe(200);
  });

  it('backs off a device that does not answer, retries, and shows it; a new registration ends the back-off', async () => {
    let clock = Date.now();
    let answering = false;
    const sent: CallbackTarget[] = [];
    const v = await validatorWith({
      now: () => clock,
      deviceCallbackSend: async (target): Promise<CallbackOutcome> => {
        sent.push(target);
        return answering
          ? { delivered: true, status: 200 }
          : { delivered: false, error: 'no answer in 1000 ms' };
      },
    });
    await registerFrom(v, board, '127.0.0.1', { port: 9000 });
    await takeTheCell(v, board);
    await waitFor(() => sent.length === 1, 'one callback sent');
    const listedNow = async () =>
      (await v.inject('/devices')).json().devices.find((d: { pubkey: string }) => d.pubkey === BOARD);
    let listed = await listedNow();
    expect(listed.callback).toMatchObject({
      state: 'failing',
      failed: 1,
      last_error: 'no answer in 1000 ms',
    });
    expect(listed.callback.retry_at).toBeGreaterThanOrEqual(Math.floor(clock / 1000));
    await takeTheCell(v, board); // stale again during the back-off: held back, the newest kept
    expect(sent).toHaveLength(1);
    clock += 1001;
    await waitFor(() => sent.length === 2, 'two callbacks sent'); // sent when the back-off ends (the flush timer)
    listed = await listedNow();
    expect(listed.callback).toMatchObject({ state: 'failing', failed: 2 });
    expect(listed.callback.retry_at - listed.callback.last_attempt_at).toBeGreaterThanOrEqual(1); // now 2 s
    // The board comes back and registers again: the back-off ends, the held notification goes at once.
    answering = true;
    await registerFrom(v, board, '127.0.0.1', { port: 9000 });
    await waitFor(() => sent.length === 3, 'three callbacks sent');
    await waitFor(async () => (await listedNow()).callback.state === 'ok', 'the callback to be answered');
    expect((await listedNow()).callback).toMatchObject({ delivered: 1, retry_at: null });
  });
});
