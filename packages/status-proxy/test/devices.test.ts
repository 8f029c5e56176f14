import { createServer, type IncomingMessage, type Server } from 'node:http';
import {
  buildSubmission,
  type Coord,
  DEVICE_CALLBACK_PATH,
  fromHex,
  generateKeyPair,
  type HexChallenge,
  type KeyPair,
  signRequest,
  solveBlock,
  targetFromHex,
  toHex,
  verifyDeviceCallback,
} from '@tensormine/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { testClock } from '../../../test-support/clock.ts';
import { type Network, startNetwork, until } from './helpers.js';

/** A board: a key and an HTTP server on its callback port that keeps what it receives. */
async function board(): Promise<{
  key: KeyPair;
  port: number;
  received: { req: IncomingMessage; body: Buffer }[];
}> {
  const received: { req: IncomingMessage; body: Buffer }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ req, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"dropped":true}');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { key: generateKeyPair(), port: (server.address() as { port: number }).port, received };
}
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function registerVia(
  url: string,
  key: KeyPair,
  body: Record<string, unknown>,
  extraHeaders: Record<string, string> = {},
) {
  const payload = JSON.stringify({ pubkey: toHex(key.publicKey), device_type: 'esp32', ...body });
  const headers = signRequest({
    method: 'POST',
    path: '/devices/register',
    body: payload,
    secretKey: key.secretKey,
  });
  const res = await fetch(`${url}/devices/register`, {
    method: 'POST',
    headers: { ...headers, ...extraHeaders, 'content-type': 'application/json' },
    body: payload,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function challengeVia(url: string, key: KeyPair): Promise<HexChallenge> {
  const res = await fetch(`${url}/api/hexchain/challenge`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ slot: 1, slot_hash: 'through-the-proxy', miner_pubkey: toHex(key.publicKey) }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as HexChallenge;
}

/** Another miner takes `coord` at the validator directly. */
async function takeCell(net: Network, coord: Coord): Promise<void> {
  const other = generateKeyPair();
  expect((await registerVia(net.validatorUrl, other, { device_type: 'native' })).status).toBe(200);
  for (let i = 0; i < 200; i++) {
    const c = await challengeVia(net.validatorUrl, other);
    if (c.coord.q !== coord.q || c.coord.r !== coord.r) continue;
    const solved = solveBlock({
      challengeHash: fromHex(c.challenge_hash),
      coord: c.coord,
      minerPublicKey: other.publicKey,
      target: targetFromHex(c.target),
      maxIterations: 10_000_000,
    })!;
    const res = await fetch(`${net.validatorUrl}/api/hexchain/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        buildSubmission({
          challengeId: c.id,
          challengeHash: fromHex(c.challenge_hash),
          coord: c.coord,
          nonce: solved.nonce,
          keyPair: other,
        }),
      ),
    });
    expect(res.status).toBe(200);
    return;
  }
  throw new Error('no challenge for the cell');
}

describe('status proxy: callbacks to the boards behind it', () => {
  it('forwards a signed registration byte for byte and calls the board back with its own key', async () => {
    const net = await startNetwork();
    const b = await board();
    const reg = await registerVia(net.proxyUrl, b.key, { port: b.port });
    expect(reg).toMatchObject({ status: 200, body: { registered: true, port: b.port, callbacks: 'on' } });
    // The validator leaves the board to the proxy.
    const listed = (await (await fetch(`${net.validatorUrl}/devices`)).json()) as {
      devices: { pubkey: string; callback: { state: string } }[];
    };
    expect(listed.devices.find((d) => d.pubkey === toHex(b.key.publicKey))?.callback.state).toBe('relayed');

    const work = await challengeVia(net.proxyUrl, b.key);
    await takeCell(net, work.coord);
    await until(() => b.received.length === 1, 20_000, 'the callback');
    const { req, body } = b.received[0]!;
    expect(req.url).toBe(DEVICE_CALLBACK_PATH);
    expect(JSON.parse(body.toString('utf8'))).toMatchObject({
      type: 'work_stale',
      reason: 'block',
      device: toHex(b.key.publicKey),
      challenge_id: work.id,
    });
    const health = (await (await fetch(`${net.proxyUrl}/health`)).json()) as { callback_pubkey: string };
    expect(health.callback_pubkey).toBe(net.proxy.devices.publicKeyHex);
    expect(
      verifyDeviceCallback(body, String(req.headers['x-tm-signature']), fromHex(health.callback_pubkey, 32)),
    ).toBe(true);
    expect(net.proxy.devices.callbacks.health(toHex(b.key.publicKey))).toMatchObject({
      state: 'ok',
      delivered: 1,
    });
  });

  it("passes the validator's refusals through, and changes nothing then", async () => {
    const net = await startNetwork();
    const b = await board();
    const payload = JSON.stringify({ pubkey: toHex(b.key.publicKey), device_type: 'esp32', port: b.port });
    const headers = signRequest({
      method: 'POST',
      path: '/devices/register',
      body: payload,
      secretKey: b.key.secretKey,
    });
    const tampered = await fetch(`${net.proxyUrl}/devices/register`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: payload.replace('esp32', 'native'),
    });
    expect(tampered.status).toBe(401);
    expect(await tampered.json()).toMatchObject({ code: 'signature_invalid' });
    expect(net.proxy.devices.callbacks.knows(toHex(b.key.publicKey))).toBe(false);
    const unsigned = await fetch(`${net.proxyUrl}/devices/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
    expect(unsigned.status).toBe(401);
    const broken = await fetch(`${net.proxyUrl}/devices/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"pubkey":',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ code: 'invalid_json' });
  });

  it('caps the boards with a callback port per address', async () => {
    const net = await startNetwork({ proxy: { deviceCallbacks: { perAddress: 1 } } });
    const [x, y] = [await board(), await board()];
    expect((await registerVia(net.proxyUrl, x.key, { port: x.port })).status).toBe(200);
    const second = await registerVia(net.proxyUrl, y.key, { port: y.port });
    expect(second).toMatchObject({ status: 429, body: { code: 'device_limit_reached' } });
    expect((await registerVia(net.proxyUrl, x.key, { port: x.port })).status).toBe(200); // the same board again
  });

  it('does not call back a board registered through a proxy it does not trust', async () => {
    const net = await startNetwork();
    const z = await board();
    for (const header of [{ 'x-forwarded-for': '192.168.1.9' }, { via: '1.1 nginx' }]) {
      const res = await registerVia(net.proxyUrl, z.key, { port: z.port }, header);
      expect(res).toMatchObject({ status: 200, body: { callbacks: 'off' } });
    }
  });

  it("spends the address's budget of validator requests: a registration past it is refused before the validator", async () => {
    const clock = testClock();
    const net = await startNetwork({ proxy: { upstreamPerSecond: 1, upstreamBurst: 2, now: clock.now } });
    const b = await board();
    const listed = async () =>
      ((await (await fetch(`${net.validatorUrl}/devices`)).json()) as { devices: unknown[] }).devices.length;
    const before = await listed();
    expect((await registerVia(net.proxyUrl, b.key, { port: b.port })).status).toBe(200);
    expect((await registerVia(net.proxyUrl, b.key, { port: b.port })).status).toBe(200);
    const third = await registerVia(net.proxyUrl, generateKeyPair(), { port: b.port });
    expect(third).toMatchObject({ status: 429, body: { code: 'rate_limited' } });
    expect(await listed()).toBe(before + 1);
    clock.advance(1_000); // the bucket refills on the injected clock
    expect((await registerVia(net.proxyUrl, b.key, { port: b.port })).status).toBe(200);
  });
});
