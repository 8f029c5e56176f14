import type { HexEvent } from '@tensormine/protocol';
import type { Validator } from '@tensormine/validator';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { waitFor, within } from '../../../test-support/wait.ts';
import { Signer, solveWork, type TensormineClient } from '../src/index.js';
import { client, startValidator } from './helpers.js';

/** The push channel: GET /api/hexchain/events through the SDK's async iterator. */

async function mineOne(c: TensormineClient, signer: Signer): Promise<string> {
  const work = await c.getWork();
  const solution = solveWork(work, signer, { maxIterations: 2_000_000 });
  if (solution === undefined) throw new Error('no solution');
  const { result } = await c.submitWork(work, solution);
  return (result as { block_hash: string }).block_hash;
}

/** Resolves once `validator`'s event stream has `count` subscribers: what a stream opened waits for. */
function subscribed(validator: Validator, count = 1): Promise<void> {
  return waitFor(() => validator.events.size >= count, `${count} subscriber(s) on the event stream`);
}

/** A registered miner listens to the event stream, mines one block, hears it, and disconnects. */
async function oneBlockHeard(options: Parameters<typeof startValidator>[0] = {}) {
  const { url, validator } = await startValidator(options);
  const signer = Signer.generate();
  const c = client({ url, signer, protocol: '4.1' });
  await c.miners.register();
  const it = c.hexchain.events();
  const next = it.next();
  await subscribed(validator);
  const hash = await mineOne(c, signer);
  const event = (await next).value as HexEvent;
  await it.return(undefined); // disconnect
  return { c, signer, hash, event };
}

/** Takes events from an iterator until `count` arrived (or fails after the wait bound). */
async function take(it: AsyncIterator<HexEvent>, count: number): Promise<HexEvent[]> {
  const out: HexEvent[] = [];
  while (out.length < count) {
    const next = await within(it.next(), `event ${out.length + 1} of ${count}`);
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

describe('hexchain.events()', () => {
  it('yields each accepted block with an id, after its commit', async () => {
    const { url, validator } = await startValidator();
    const signer = Signer.generate();
    const c = client({ url, signer, protocol: '4.1' });
    await c.miners.register();
    const controller = new AbortController();
    const it = c.hexchain.events({ signal: controller.signal });
    const first = it.next(); // opens the stream
    await subscribed(validator);
    const hashes = [await mineOne(c, signer), await mineOne(c, signer)];
    const events = [(await first).value as HexEvent, ...(await take(it, 1))];
    expect(events.map((e) => e.event)).toEqual(['block', 'block']);
    expect(events.map((e) => (e.event === 'block' ? e.data.block.block_hash : ''))).toEqual(hashes);
    const status = await c.hexchain.status();
    const last = events[1]!;
    if (last.event !== 'block') throw new Error('expected a block');
    expect(last.data).toMatchObject({
      height: 2,
      occupied: status.occupied,
      frontier_size: status.frontier_size,
    });
    expect(events[0]!.id).not.toBe(events[1]!.id);
    controller.abort();
    expect((await it.next()).done).toBe(true);
  });

  it('resumes after a disconnect with Last-Event-ID and loses no event', async () => {
    const { c, signer, hash: h1, event: e1 } = await oneBlockHeard();
    // Blocks accepted while nobody listens.
    const missed = [await mineOne(c, signer), await mineOne(c, signer), await mineOne(c, signer)];
    const it2 = c.hexchain.events({ lastEventId: e1.id });
    const resumed = await take(it2, 3);
    await it2.return(undefined);
    expect(e1.event === 'block' && e1.data.block.block_hash).toBe(h1);
    expect(resumed.map((e) => (e.event === 'block' ? e.data.block.block_hash : e.event))).toEqual(missed);
  });

  it('starts with a reset event when the id cannot be resumed', async () => {
    const { c, signer, event: first } = await oneBlockHeard({ events: { capacity: 2 } });
    for (let i = 0; i < 3; i++) await mineOne(c, signer); // the ring keeps 2: the first is gone
    const it2 = c.hexchain.events({ lastEventId: first.id });
    const [reset] = await take(it2, 1);
    expect(reset).toMatchObject({ event: 'reset', data: { reason: 'event_id_too_old' } });
    await it2.return(undefined);
    const it3 = c.hexchain.events({ lastEventId: 'other-7' });
    const [unknown] = await take(it3, 1);
    await it3.return(undefined);
    expect(unknown).toMatchObject({
      event: 'reset',
      data: { reason: 'unknown_event_id', oldest_id: expect.any(String) },
    });
  });

  it('sends heartbeats, retry and difficulty events as text/event-stream', async () => {
    const { url, validator } = await startValidator({ events: { heartbeatMs: 50 } });
    const res = await request(`${url}/api/hexchain/events`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    const chunks: string[] = [];
    const reading = (async () => {
      for await (const chunk of res.body) {
        chunks.push(chunk.toString());
        if (chunks.join('').includes('event: difficulty')) break;
      }
    })();
    await waitFor(() => chunks.join('').includes(': heartbeat\n\n'), 'a heartbeat');
    const admin = await request(`${url}/admin/config`, {
      method: 'POST',
      headers: { authorization: `Bearer ${validator.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ hexchain_difficulty: 512 }),
    });
    expect(admin.statusCode, await admin.body.text()).toBe(200);
    await reading;
    const text = chunks.join('');
    expect(text.startsWith('retry: 2000\n\n')).toBe(true);
    expect(text).toContain(': heartbeat\n\n');
    expect(text).toMatch(/id: [a-z0-9]+-1\nevent: difficulty\ndata: \{"from":256,"to":512,"at":\d+\}\n\n/);
  });
});
