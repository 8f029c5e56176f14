import { describe, expect, it } from 'vitest';
import { type FailoverEvent, type RecoveredEvent, Signer, solveWork } from '../src/index.js';
import { client, startValidator } from './helpers.js';

/** Failover between two real validators in process: stop the primary, then bring it back. */

describe('failover between two validators', () => {
  it('moves to the second validator when the first stops, and back when it returns', async () => {
    const first = await startValidator();
    const second = await startValidator();
    const port = Number(new URL(first.url).port);
    const signer = Signer.generate();
    const c = client({ urls: [first.url, second.url], signer });
    const failovers: FailoverEvent[] = [];
    const recovered: RecoveredEvent[] = [];
    c.on('failover', (e) => failovers.push(e));
    c.on('recovered', (e) => recovered.push(e));

    // Each validator keeps its own registrations: register on both.
    await c.miners.register({}, { endpoint: first.url });
    await c.miners.register({}, { endpoint: second.url });
    expect((await c.node.health()).node_id).toBe(first.validator.context.nodeId);

    await first.validator.close();
    // A GET is retried on the second validator; the move is reported.
    expect((await c.node.health()).node_id).toBe(second.validator.context.nodeId);
    expect(failovers.map((f) => [f.from, f.to, f.reason])).toEqual([
      [first.url, second.url, 'network_error'],
    ]);

    // Mining continues on the second validator; the work is submitted where it was issued.
    const work = await c.getWork();
    expect(work.endpoint).toBe(second.url);
    const result = await c.submitWork(work, solveWork(work, signer, { maxIterations: 1_000_000 })!);
    expect(result.endpoint).toBe(second.url);

    // The primary comes back on the same address: the next probe switches back to it.
    const again = await startValidator({}, { port });
    await c.probe();
    expect(recovered.map((r) => [r.endpoint, r.active])).toEqual([[first.url, first.url]]);
    expect((await c.node.health()).node_id).toBe(again.validator.context.nodeId);
  });

  it('sends a POST to the second validator when the first refuses the connection', async () => {
    const first = await startValidator();
    const second = await startValidator();
    const c = client({ urls: [first.url, second.url] });
    await first.validator.close();
    const challenge = await c.hexchain.challenge({ slot: 1, slot_hash: 'slot-1' });
    expect(challenge.version).toBe('4.1');
    expect(c.endpoints().find((e) => e.active)?.url).toBe(second.url);
  });

  it('gets work from the second validator when the first is gone before the first call', async () => {
    const first = await startValidator();
    const second = await startValidator();
    const signer = Signer.generate();
    const c = client({ urls: [first.url, second.url], signer });
    await c.miners.register({}, { endpoint: second.url });
    await first.validator.close();
    const work = await c.getWork();
    expect(work.endpoint).toBe(second.url);
    expect(work.version).toBe('4.1');
  });
});
