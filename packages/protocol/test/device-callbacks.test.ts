import { request } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { Value } from 'typebox/value';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CallbackOutcome,
  type CallbackTarget,
  callbackModeFor,
  DEVICE_CALLBACK_PATH,
  DeviceCallbackSchema,
  DeviceCallbacks,
  type DeviceWorkInput,
  fromHex,
  generateKeyPair,
  httpCallbackSender,
  type SignedDeviceCallback,
  SseHub,
  throughUnseenProxy,
  toHex,
  verifyDeviceCallback,
} from '../src/index.js';

const node = generateKeyPair();
const target: CallbackTarget = { address: '192.168.1.20', port: 4242 };
const keyOf = (n: number) => n.toString(16).padStart(64, '0');
const A = keyOf(0xa);
const B = keyOf(0xb);
const MINER = keyOf(0xc);

/** A sender whose answers the test gives, one call at a time. */
class ScriptedSender {
  readonly calls: {
    target: CallbackTarget;
    message: SignedDeviceCallback;
    answer: (o: CallbackOutcome) => void;
  }[] = [];
  readonly send = (t: CallbackTarget, message: SignedDeviceCallback) =>
    new Promise<CallbackOutcome>((answer) => this.calls.push({ target: t, message, answer }));
  body(i: number): Record<string, unknown> {
    return JSON.parse(Buffer.from(this.calls[i]!.message.body).toString('utf8'));
  }
}

function setup(options: { maxInFlight?: number } = {}) {
  let now = 1_700_000_000_000;
  const sender = new ScriptedSender();
  const callbacks = new DeviceCallbacks({
    secretKey: node.secretKey,
    publicKey: node.publicKey,
    send: sender.send,
    now: () => now,
    ...options,
  });
  const work = (id: string, q = 1, difficulty = 1000, ttlS = 120): DeviceWorkInput => ({
    challengeId: id,
    coord: { q, r: -q, s: 0 },
    difficulty,
    issuedAt: Math.floor(now / 1000),
    expiresAt: Math.floor(now / 1000) + ttlS,
  });
  return { sender, callbacks, work, advance: (ms: number) => (now += ms), now: () => now };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('DeviceCallbacks', () => {
  it('notifies every other device working on a block’s cell, signed over the exact body, and no one else', async () => {
    const { sender, callbacks, work } = setup();
    callbacks.setDevice(A, target, 'on');
    callbacks.setDevice(B, { address: '10.0.0.7', port: 5000 }, 'on');
    callbacks.setDevice(MINER, { address: '10.0.0.8', port: 5001 }, 'on');
    callbacks.workIssued(A, work('h-a', 1));
    callbacks.workIssued(B, work('h-b', 2));
    callbacks.workIssued(MINER, work('h-m', 1));
    callbacks.setChain(40, 1000);
    callbacks.blockAccepted({ coord: { q: 1, r: -1, s: 0 }, minerPubkey: MINER, difficulty: 1000 }, 41);
    expect(sender.calls).toHaveLength(1);
    expect(sender.calls[0]!.target).toEqual(target);
    const body = sender.body(0);
    expect(Value.Check(DeviceCallbackSchema, body)).toBe(true);
    expect(body).toMatchObject({
      type: 'work_stale',
      reason: 'block',
      device: A,
      challenge_id: 'h-a',
      coord: { q: 1, r: -1, s: 0 },
      height: 41,
      seq: 1,
    });
    const { message } = sender.calls[0]!;
    expect(verifyDeviceCallback(message.body, message.headers['x-tm-signature']!, node.publicKey)).toBe(true);
    expect(message.headers['x-tm-node-pubkey']).toBe(toHex(node.publicKey));
    expect(callbacks.work(A)?.stale).toBe(true);
    expect(callbacks.work(B)?.stale).toBe(false);
    expect(callbacks.work(MINER)?.stale).toBe(true); // its own block: done, not notified
  });

  it('keeps one notification in flight per device and coalesces the next ones into the newest', async () => {
    const { sender, callbacks, work } = setup();
    callbacks.setDevice(A, target, 'on');
    callbacks.workIssued(A, work('h-1', 1, 4000));
    callbacks.blockAccepted({ coord: { q: 1, r: -1, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 1);
    expect(sender.calls).toHaveLength(1);
    // New work arrives, and goes stale twice while the first notification is in flight.
    callbacks.workIssued(A, work('h-2', 2, 4000));
    callbacks.difficultyChanged(2000, 12);
    callbacks.workIssued(A, work('h-3', 3, 4000));
    callbacks.difficultyChanged(1000, 24);
    expect(sender.calls).toHaveLength(1);
    sender.calls[0]!.answer({ delivered: true, status: 200 });
    await settle();
    expect(sender.calls).toHaveLength(2);
    expect(sender.body(1)).toMatchObject({
      challenge_id: 'h-3',
      reason: 'retarget',
      difficulty: 1000,
      seq: 2,
    });
    expect(callbacks.health(A)).toMatchObject({ state: 'ok', sent: 2, delivered: 1, coalesced: 0 });
  });

  it('drops a coalesced notification about work the device has already replaced', async () => {
    const { sender, callbacks, work } = setup();
    callbacks.setDevice(A, target, 'on');
    callbacks.workIssued(A, work('h-1', 1));
    callbacks.blockAccepted({ coord: { q: 1, r: -1, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 1);
    callbacks.workIssued(A, work('h-2', 2));
    callbacks.blockAccepted({ coord: { q: 2, r: -2, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 2);
    callbacks.workIssued(A, work('h-3', 3)); // the device fetched new work by itself
    sender.calls[0]!.answer({ delivered: true, status: 200 });
    await settle();
    expect(sender.calls).toHaveLength(1);
  });

  it('backs a silent device off, doubling up to the maximum, and a registration ends the back-off', async () => {
    const { sender, callbacks, work, advance } = setup();
    callbacks.setDevice(A, target, 'on');
    const stale = async (n: number) => {
      callbacks.workIssued(A, work(`h-${n}`, n, 1000, 3600)); // outlives the longest back-off
      callbacks.blockAccepted({ coord: { q: n, r: -n, s: 0 }, minerPubkey: MINER, difficulty: 1 }, n);
      await settle();
    };
    await stale(1);
    sender.calls[0]!.answer({ delivered: false, error: 'no answer in 1000 ms' });
    await settle();
    expect(callbacks.health(A)).toMatchObject({
      state: 'failing',
      failed: 1,
      last_error: 'no answer in 1000 ms',
    });
    // During the back-off (1 s) the next notification waits; it goes when the back-off ends.
    await stale(2);
    expect(sender.calls).toHaveLength(1);
    advance(999);
    callbacks.flush();
    expect(sender.calls).toHaveLength(1);
    advance(1);
    callbacks.flush();
    expect(sender.calls).toHaveLength(2);
    const delays: number[] = [];
    for (let i = 2; i <= 12; i++) {
      sender.calls[i - 1]!.answer({ delivered: false, error: 'connect ECONNREFUSED' });
      await settle();
      await stale(i + 1);
      let waited = 0;
      while (sender.calls.length === i && waited < 3_600_000) {
        advance(1000);
        waited += 1000;
        callbacks.flush();
      }
      delays.push(waited);
    }
    expect(delays).toEqual([2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 300000, 300000, 300000]);
    // The board restarted and registered again: the next notification goes at once.
    sender.calls.at(-1)!.answer({ delivered: false, error: 'connect ECONNREFUSED' });
    await settle();
    const before = sender.calls.length;
    callbacks.setDevice(A, target, 'on');
    await stale(99);
    expect(sender.calls).toHaveLength(before + 1);
  });

  it('sends a notification that was not answered again when the back-off ends, while its work is current', async () => {
    const { sender, callbacks, work, advance } = setup();
    callbacks.setDevice(A, target, 'on');
    callbacks.workIssued(A, work('h-1', 1));
    callbacks.blockAccepted({ coord: { q: 1, r: -1, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 1);
    sender.calls[0]!.answer({ delivered: false, error: 'no answer in 1000 ms' });
    await settle();
    advance(999);
    callbacks.flush();
    expect(sender.calls).toHaveLength(1);
    advance(1);
    callbacks.flush();
    expect(sender.calls).toHaveLength(2);
    expect(sender.body(1)).toMatchObject({ challenge_id: 'h-1', reason: 'block', seq: 2 });
    sender.calls[1]!.answer({ delivered: true, status: 200 });
    await settle();
    expect(callbacks.health(A)).toMatchObject({ state: 'ok', sent: 2, delivered: 1, failed: 1 });
    // Not again once the device has new work, nor after its challenge expired.
    callbacks.workIssued(A, work('h-2', 2));
    callbacks.blockAccepted({ coord: { q: 2, r: -2, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 2);
    sender.calls[2]!.answer({ delivered: false, error: 'no answer in 1000 ms' });
    await settle();
    callbacks.workIssued(A, work('h-3', 3));
    advance(5_000);
    callbacks.flush();
    expect(sender.calls).toHaveLength(3);
  });

  it('ends the back-off for an answer of any status: the device is alive', async () => {
    const { sender, callbacks, work } = setup();
    callbacks.setDevice(A, target, 'on');
    callbacks.workIssued(A, work('h-1', 1));
    callbacks.blockAccepted({ coord: { q: 1, r: -1, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 1);
    sender.calls[0]!.answer({ delivered: false, status: 401, error: 'HTTP 401' });
    await settle();
    expect(callbacks.health(A)).toMatchObject({ state: 'refused', refused: 1, retry_at: null });
    callbacks.workIssued(A, work('h-2', 2));
    callbacks.blockAccepted({ coord: { q: 2, r: -2, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 2);
    expect(sender.calls).toHaveLength(2);
  });

  it('caps the notifications in flight for all devices together', async () => {
    const { sender, callbacks, work } = setup({ maxInFlight: 2 });
    const keys = [1, 2, 3, 4].map((n) => keyOf(0x100 + n));
    for (const k of keys) {
      callbacks.setDevice(k, target, 'on');
      callbacks.workIssued(k, work(`h-${k.slice(-3)}`, 5));
    }
    callbacks.blockAccepted({ coord: { q: 5, r: -5, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 1);
    expect(sender.calls).toHaveLength(2);
    expect(callbacks.inFlight).toBe(2);
    sender.calls[0]!.answer({ delivered: true, status: 204 });
    await settle();
    expect(sender.calls).toHaveLength(3);
    sender.calls[1]!.answer({ delivered: true, status: 204 });
    sender.calls[2]!.answer({ delivered: true, status: 204 });
    await settle();
    expect(sender.calls).toHaveLength(4);
  });

  it('sends nothing for relayed, off or port-less devices, and only for harder work on a retarget', () => {
    const { sender, callbacks, work } = setup();
    callbacks.setDevice(A, target, 'relayed');
    callbacks.setDevice(B, target, 'off');
    callbacks.setDevice(MINER, null, 'none');
    for (const k of [A, B, MINER]) callbacks.workIssued(k, work(`h-${k.slice(-1)}`, 7, 5000));
    callbacks.difficultyChanged(1000, 12);
    expect(sender.calls).toHaveLength(0);
    expect(callbacks.health(A).state).toBe('relayed');
    expect(callbacks.health(B).state).toBe('off');
    expect(callbacks.health(MINER).state).toBe('none');
    const C = keyOf(0xd);
    callbacks.setDevice(C, target, 'on');
    callbacks.workIssued(C, work('h-easy', 8, 1000));
    callbacks.difficultyChanged(4000, 24); // harder now: the easier challenge stays good
    callbacks.difficultyChanged(1000, 36);
    expect(sender.calls).toHaveLength(0);
    callbacks.difficultyChanged(999, 48);
    expect(sender.calls).toHaveLength(1);
  });

  it('sends nothing about an expired challenge, and forgets nothing the listing shows', () => {
    const { sender, callbacks, work, advance } = setup();
    callbacks.setDevice(A, target, 'on');
    callbacks.workIssued(A, work('h-1', 1));
    advance(121_000);
    callbacks.blockAccepted({ coord: { q: 1, r: -1, s: 0 }, minerPubkey: MINER, difficulty: 1 }, 1);
    expect(sender.calls).toHaveLength(0);
    expect(callbacks.work(A)).toMatchObject({ challenge_id: 'h-1', stale: true });
  });

  it('estimates a miner’s hash rate from its blocks of the last hour', () => {
    const { callbacks, advance } = setup();
    callbacks.setDevice(MINER, null, 'none');
    callbacks.blockAccepted({ coord: { q: 1, r: -1, s: 0 }, minerPubkey: MINER, difficulty: 1_800_000 }, 1);
    callbacks.blockAccepted({ coord: { q: 2, r: -2, s: 0 }, minerPubkey: MINER, difficulty: 1_800_000 }, 2);
    expect(callbacks.blockRate(MINER)).toEqual({ blocks: 2, hashrate: 1000 });
    advance(3_600_001);
    expect(callbacks.blockRate(MINER)).toEqual({ blocks: 0, hashrate: null });
  });
});

describe('who is called back', () => {
  it('calls local addresses by default, public ones only under "all", nobody through a proxy it cannot see past', () => {
    expect(callbackModeFor('private', '192.168.1.7', 4242, false)).toBe('on');
    expect(callbackModeFor('private', '::ffff:10.0.0.2', 4242, false)).toBe('on');
    expect(callbackModeFor('private', '203.0.113.9', 4242, false)).toBe('off');
    expect(callbackModeFor('all', '203.0.113.9', 4242, false)).toBe('on');
    expect(callbackModeFor('off', '127.0.0.1', 4242, false)).toBe('off');
    expect(callbackModeFor('private', '127.0.0.1', null, false)).toBe('none');
    expect(callbackModeFor('private', '127.0.0.1', 4242, true)).toBe('relayed');
    expect(callbackModeFor('all', '127.0.0.1', 4242, false, true)).toBe('off');
    // A forwarding header seen from the socket's peer: an untrusted proxy. From a trusted one,
    // the address is the client it forwards for, not the peer.
    for (const h of ['x-forwarded-for', 'forwarded', 'x-real-ip', 'via'])
      expect(throughUnseenProxy({ [h]: 'x' }, '127.0.0.1', '127.0.0.1')).toBe(true);
    expect(throughUnseenProxy({ 'x-forwarded-for': '192.168.1.8' }, '192.168.1.8', '127.0.0.1')).toBe(false);
    expect(throughUnseenProxy({ host: 'x', origin: 'y' }, '127.0.0.1', '127.0.0.1')).toBe(false);
  });
});

describe('SseHub.listen', () => {
  it('hands every published event to in-process listeners until removed', () => {
    const hub = new SseHub({ heartbeatMs: 0 });
    const seen: [string, unknown][] = [];
    const stop = hub.listen((event, data) => seen.push([event, data]));
    hub.listen(() => {
      throw new Error('a failing listener');
    });
    hub.publish('block', { height: 1 });
    stop();
    hub.publish('block', { height: 2 });
    expect(seen).toEqual([['block', { height: 1 }]]);
    hub.close();
  });
});

describe('httpCallbackSender', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });
  /** A TCP server that does `behave` with every connection. */
  async function board(behave: (socket: Socket, request: string) => void): Promise<CallbackTarget> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
        if (text.includes('\r\n\r\n')) behave(socket, text);
      });
    });
    server.on('close', () => {
      for (const s of sockets) s.destroy();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return { address: '127.0.0.1', port: address.port };
  }
  const message: SignedDeviceCallback = {
    body: new TextEncoder().encode('{"type":"work_stale"}'),
    headers: { 'content-type': 'application/json', 'x-tm-signature': 'ab'.repeat(64) },
  };
  const send = httpCallbackSender(request, { timeoutMs: 300 });

  it('POSTs the exact body to the callback path and reads only the status', async () => {
    let seen = '';
    const t = await board((socket, text) => {
      seen = text;
      socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n{"ok":true');
    });
    await expect(send(t, message)).resolves.toEqual({ delivered: true, status: 200 });
    expect(seen.startsWith(`POST ${DEVICE_CALLBACK_PATH} HTTP/1.1\r\n`)).toBe(true);
    expect(seen).toContain(`x-tm-signature: ${'ab'.repeat(64)}`);
  });

  it('gives up on a board that accepts and never answers, within the timeout', async () => {
    const t = await board(() => {});
    const started = process.hrtime.bigint();
    await expect(send(t, message)).resolves.toEqual({ delivered: false, error: 'no answer in 300 ms' });
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(10_000);
  });

  it('turns garbage, a reset and a refused connection into outcomes, never a rejection', async () => {
    const garbage = await board((socket) => socket.end('\x00\x01 not http at all\r\n\r\n'));
    const reset = await board((socket) => socket.resetAndDestroy());
    const outcomes = await Promise.all([
      send(garbage, message),
      send(reset, message),
      send({ address: '127.0.0.1', port: 1 }, message),
    ]);
    for (const o of outcomes) expect(o.delivered).toBe(false);
    expect(outcomes.every((o) => !o.delivered && o.status === undefined)).toBe(true);
  });

  it('reports a refusal with its status', async () => {
    const t = await board((socket) => socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n'));
    await expect(send(t, message)).resolves.toEqual({ delivered: false, status: 401, error: 'HTTP 401' });
  });
});

describe('the device callback vectors', () => {
  it('verify as listed', async () => {
    const vectors = (await import('../vectors/device-callbacks.vectors.json', { with: { type: 'json' } }))
      .default;
    for (const c of vectors.verification) {
      expect(verifyDeviceCallback(fromHex(c.body_hex), c.signature, fromHex(c.key, 32)), c.name).toBe(
        c.valid,
      );
    }
    expect(vectors.verification.filter((c) => c.valid)).toHaveLength(1);
  });
});
