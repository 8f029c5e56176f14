import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { MiningEngine } from '../src/engine.js';
import type { FoundResult } from '../src/found.js';
import { Journal } from '../src/journal.js';
import type { DropReporter } from '../src/miner/drops.js';
import { ShareQueue } from '../src/miner/share-queue.js';
import {
  Miner,
  type MinerLogEvent,
  type MinerOptions,
  POOL_MAX_IN_FLIGHT,
  POOL_QUEUE_MAX,
} from '../src/miner.js';
import { POOL, type SubmitOutcome, type WorkSource } from '../src/work-source.js';
import { cleanup, FakeSource, KEY, testKey, waitFor } from './helpers.js';
import { register, testValidator, ValidatorSource } from './validator-source.js';

async function tempJournal(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tensormine-miner-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'journal.jsonl');
}

/** A started Miner on a 2-thread CPU engine, with its log events collected. */
async function startMiner(
  source: WorkSource,
  options: Partial<MinerOptions> = {},
): Promise<{ miner: Miner; events: MinerLogEvent[]; engine: MiningEngine }> {
  const engine = new MiningEngine({ threads: 2 });
  const miner = new Miner({ source, backends: [engine], retryDelayMs: 50, maxRetryDelayMs: 200, ...options });
  const events: MinerLogEvent[] = [];
  miner.on('log', (e) => events.push(e));
  cleanup(() => miner.stop());
  await miner.start();
  return { miner, events, engine };
}

const ofType = <T extends MinerLogEvent['type']>(events: MinerLogEvent[], type: T) =>
  events.filter((e): e is Extract<MinerLogEvent, { type: T }> => e.type === type);

async function journalLines(path: string): Promise<{ found: FoundResult }[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { found: FoundResult });
}

describe('Miner against a validator in process', () => {
  test('mines hexchain blocks that the validator accepts, and reports each one', async () => {
    const v = await testValidator();
    await register(v, KEY);
    const source = new ValidatorSource(v, KEY);
    const { miner, events } = await startMiner(source);
    await waitFor(() => ofType(events, 'accepted').length >= 3, 'three accepted blocks');
    const accepted = ofType(events, 'accepted').slice(0, 3);
    expect(accepted.map((e) => [e.accepted, e.rejected])).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
    ]);
    for (const e of accepted) {
      expect(e.difficulty).toBe(256);
      expect(e.latencyMs).toBeGreaterThanOrEqual(0);
      expect(e.details).toMatchObject({ accepted: true, token: 'PTM' });
    }
    // One challenge per block: the Miner asked for new work after each result.
    expect(ofType(events, 'job').length).toBeGreaterThanOrEqual(3);
    const stats = miner.stats();
    expect(stats).toMatchObject({
      rejected: 0,
      rejectedReasons: [],
      connected: true,
      validatorUrl: 'inject://validator',
    });
    expect(stats.accepted).toBeGreaterThanOrEqual(3);
    expect(stats.bestDifficulty).toBeGreaterThanOrEqual(256);
    expect(stats.job?.protocolVersion).toBe('4.1');
    expect(stats.devices.map((d) => [d.id, d.kind])).toEqual([['cpu', 'cpu']]);
    const status = (await v.inject({ method: 'GET', url: '/api/hexchain/status' })).json() as {
      occupied: number;
    };
    expect(status.occupied).toBeGreaterThanOrEqual(4); // genesis and the blocks
  });

  test('mines v4.0 proofs that the validator accepts', async () => {
    const v = await testValidator();
    await register(v, KEY);
    const { miner, events } = await startMiner(new ValidatorSource(v, KEY, 'tensor'));
    await waitFor(() => ofType(events, 'accepted').length >= 2, 'two accepted proofs');
    expect(miner.stats().job?.protocolVersion).toBe('4.0');
    expect(miner.stats().rejected).toBe(0);
  });

  test("records a rejection with the validator's error code", async () => {
    const v = await testValidator();
    await register(v, KEY);
    const source = new ValidatorSource(v, KEY);
    source.signer = testKey('someone else');
    const { miner, events } = await startMiner(source);
    await waitFor(() => ofType(events, 'rejected').length >= 2, 'two rejections');
    const [first] = ofType(events, 'rejected');
    expect(first).toMatchObject({ code: 'signature_invalid', accepted: 0, rejected: 1, difficulty: 256 });
    const stats = miner.stats();
    expect(stats.rejectedReasons[0]).toEqual({ code: 'signature_invalid', count: stats.rejected });
    // A definitive rejection is not retried: each rejected result leaves the journal once its
    // answer is in (a result found meanwhile may be journaled and in flight for a moment).
    await waitFor(() => miner.stats().journalSize === 0, 'an empty journal');
  });

  test('keeps a result through an outage in the journal and resubmits it when the validator is back', async () => {
    const v = await testValidator();
    await register(v, KEY);
    const path = await tempJournal();
    const source = new ValidatorSource(v, KEY);
    // The validator goes away as soon as a result is found.
    const submit = source.submit.bind(source);
    let tripped = false;
    source.submit = async (found) => {
      if (!tripped) source.down = tripped = true;
      return submit(found);
    };
    const { events, miner } = await startMiner(source, { journal: path });
    await waitFor(() => ofType(events, 'journaled').length === 1, 'a journaled result');
    const journaled = ofType(events, 'journaled')[0]!.found;
    expect(ofType(events, 'journaled')[0]!.reason).toBe('connect ECONNREFUSED 127.0.0.1:8545');
    expect((await journalLines(path)).map((l) => l.found.id)).toEqual([journaled.id]);
    expect(ofType(events, 'connection-lost')).toHaveLength(1);

    source.down = false;
    await waitFor(
      () => ofType(events, 'accepted').some((e) => e.found.id === journaled.id),
      'the journaled result accepted',
    );
    expect(ofType(events, 'connection-restored')).toHaveLength(1);
    await waitFor(() => ofType(events, 'accepted').length >= 2, 'mining again');
    await miner.stop();
    expect(ofType(events, 'accepted')).toHaveLength(ofType(events, 'found').length);
    expect(await journalLines(path)).toEqual([]);
  });

  test('a new Miner reading the same journal resubmits what a stopped one could not deliver', async () => {
    const v = await testValidator();
    await register(v, KEY);
    const path = await tempJournal();
    // The first miner can fetch work but every submission fails; it is stopped with a result pending.
    const unreachable = new ValidatorSource(v, KEY);
    unreachable.submit = async () => {
      throw new Error('socket hang up');
    };
    const a = await startMiner(unreachable, { journal: path });
    await waitFor(() => ofType(a.events, 'journaled').length >= 1, 'a journaled result');
    await a.miner.stop();
    const pending = (await journalLines(path)).map((l) => l.found.id);
    expect(pending).toContain(ofType(a.events, 'journaled')[0]!.found.id);

    const b = await startMiner(new ValidatorSource(v, KEY), { journal: path });
    expect(ofType(b.events, 'resubmitting')[0]?.count).toBe(pending.length);
    await waitFor(
      () => ofType(b.events, 'accepted').some((e) => e.found.id === pending[0]),
      'the journaled result accepted after the restart',
    );
    // The others (blocks for the same cell, if several were found) are settled one way or the other.
    await waitFor(() => pending.every((id) => !b.miner.journal!.has(id)), 'every journaled result settled');
  });

  test('drops a journaled result whose challenge has expired', async () => {
    const path = await tempJournal();
    const journal = await Journal.open(path);
    const expired = {
      id: 'hx-old/42',
      challengeId: 'hx-old',
      nonce: 42,
      difficulty: 256,
      achievedDifficulty: 300,
      foundAtMs: Date.now() - 200_000,
      expiresAtMs: Date.now() - 80_000,
      device: 'cpu',
      kind: 'hexchain',
      header: '00'.repeat(88),
      submission: {
        challenge_id: 'hx-old',
        block: {
          coord: { q: 1, r: -1, s: 0 },
          pow_hash: '00'.repeat(32),
          nonce: 42,
          miner_pubkey: '00'.repeat(32),
        },
      },
    } satisfies FoundResult;
    await journal.add(expired);
    const source = new FakeSource();
    const { events } = await startMiner(source, { journal: path });
    await waitFor(() => ofType(events, 'expired').length === 1, 'the expired result dropped');
    expect(ofType(events, 'expired')[0]!.found.id).toBe('hx-old/42');
    expect(source.submitted).toEqual([]);
    expect(await journalLines(path)).toEqual([]);
  });
});

describe('Miner work loop', () => {
  test('fetches new work when the source says the work went stale', async () => {
    const source = new FakeSource();
    const { events, engine } = await startMiner(source);
    await waitFor(() => ofType(events, 'job').length === 1, 'a job');
    source.emit('stale', 'lattice moved: (1,-1,0) occupied');
    await waitFor(() => ofType(events, 'job').length === 2, 'a new job');
    expect(ofType(events, 'stale')).toEqual([{ type: 'stale', reason: 'lattice moved: (1,-1,0) occupied' }]);
    expect(engine.job?.challengeId).toBe('fake-2');
  });

  test('fetches new work before the job expires', async () => {
    const source = new FakeSource();
    source.lifetimeMs = 400;
    const { events } = await startMiner(source, { expiryMarginMs: 300 });
    await waitFor(() => ofType(events, 'job').length >= 3, 'jobs replaced on expiry');
  });

  test('retries getWork with backoff and reports the connection', async () => {
    const source = new FakeSource();
    source.failures = 3;
    const { events, miner } = await startMiner(source);
    await waitFor(() => ofType(events, 'job').length === 1, 'a job');
    expect(ofType(events, 'connection-lost')).toEqual([
      { type: 'connection-lost', url: 'fake://source', reason: 'validator unreachable', retryInMs: 50 },
    ]);
    expect(ofType(events, 'connection-restored')).toHaveLength(1);
    expect(miner.stats().connected).toBe(true);
  });

  test('pause and resume reach every backend', async () => {
    const source = new FakeSource();
    const { miner, engine, events } = await startMiner(source);
    await waitFor(() => engine.state === 'ok', 'mining');
    miner.pause();
    expect(engine.state).toBe('paused');
    expect(miner.stats().paused).toBe(true);
    miner.resume();
    expect(engine.state).toBe('ok');
    expect(ofType(events, 'paused')).toHaveLength(1);
    expect(ofType(events, 'resumed')).toHaveLength(1);
  });

  test('uptime counts from the start and, once stopped, stays at how long it ran', async () => {
    let now = 1_000_000;
    const { miner } = await startMiner(new FakeSource(), { now: () => now });
    now += 5_400;
    expect(miner.stats().uptimeSeconds).toBe(5);
    await miner.stop();
    now += 60_000;
    // The last frame of the terminal UI shows this, not 0.
    expect(miner.stats().uptimeSeconds).toBe(5);
  });

  test('splits the nonce range between backends', async () => {
    const source = new FakeSource();
    const a = new MiningEngine({ id: 'cpu-a', threads: 1 });
    const b = new MiningEngine({ id: 'cpu-b', threads: 1 });
    const miner = new Miner({ source, backends: [a, b] });
    cleanup(() => miner.stop());
    await miner.start();
    await waitFor(() => a.job !== undefined && b.job !== undefined, 'both mining');
    expect([a.job?.nonceStart, a.job?.nonceEnd]).toEqual([0, 2 ** 52]);
    expect([b.job?.nonceStart, b.job?.nonceEnd]).toEqual([2 ** 52, 2 ** 53]);
  });
});

/** A pool source whose answers wait until `open()`: share submissions pile up meanwhile. */
class HeldPoolSource extends FakeSource {
  readonly strategy = POOL;
  private readonly gate = Promise.withResolvers<void>();
  inFlight = 0;
  maxInFlight = 0;
  open(): void {
    this.gate.resolve();
  }
  override async submit(found: FoundResult): Promise<SubmitOutcome> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await this.gate.promise;
    this.inFlight--;
    return super.submit(found);
  }
}

describe('pool shares', () => {
  test('shares found while 32 are in flight wait in the queue and are all sent: none is lost', async () => {
    const source = new HeldPoolSource();
    source.difficulty = 4096n;
    const { miner, events } = await startMiner(source);
    // Paused at the share that makes 40 queued, not when a poll next looks: at this share target
    // the workers find hundreds of shares a batch (a batch's results come in one message), so a
    // poll on a busy machine could see thousands queued, beyond the queue's bound. After the pause
    // at most what the workers hold arrives (their batch and 16 messages each: protocol.ts).
    miner.on('log', (e) => {
      if (e.type === 'found' && miner.stats().sharesQueued >= 40) miner.pause();
    });
    await waitFor(() => miner.paused, '40 shares queued behind the 32 in flight');
    expect(miner.stats().sharesQueued).toBeGreaterThanOrEqual(40);
    expect(source.maxInFlight).toBe(POOL_MAX_IN_FLIGHT);
    source.open();
    await waitFor(
      () => miner.stats().sharesQueued === 0 && source.submitted.length === ofType(events, 'found').length,
      'every share found sent',
    );
    expect(source.submitted.length).toBeGreaterThanOrEqual(72);
    expect(new Set(source.submitted.map((f) => f.id)).size).toBe(source.submitted.length);
    expect(miner.stats().sharesDropped).toBe(0);
    expect(ofType(events, 'shares-dropped')).toEqual([]);
  });

  test('beyond the queue bound the oldest share is dropped and reported, and so are those queued at exit', async () => {
    // A bound of 64 (POOL_QUEUE_MAX, 4096, unless told otherwise: below): the same path, without
    // mining and signing 4,128 shares first, which took minutes on a loaded machine.
    const QUEUE = 64;
    const source = new HeldPoolSource();
    // Hundreds of shares a batch on the native kernels, as above: the 97 that fill the queue
    // within the first batches. (At a share difficulty of 16 the workers found tens of thousands
    // a batch: taking them in kept the main thread busy for 11-17 s before the test could see
    // the queue full.)
    source.difficulty = 4096n;
    const { miner, events } = await startMiner(source, { shareQueueMax: QUEUE });
    await waitFor(() => miner.stats().sharesDropped > 0, 'a full queue');
    expect(miner.stats().sharesQueued).toBe(QUEUE);
    const first = ofType(events, 'shares-dropped')[0];
    expect(first).toMatchObject({ type: 'shares-dropped', reason: 'queue-full', queued: QUEUE });
    expect(first?.count).toBe(first?.total);
    await miner.stop(0);
    const drops = ofType(events, 'shares-dropped');
    const last = drops.at(-1);
    expect(last).toMatchObject({ reason: 'stopped', count: QUEUE, queued: 0 });
    // Every drop was reported: the counts add up to the total.
    expect(drops.reduce((sum, e) => sum + e.count, 0)).toBe(miner.stats().sharesDropped);
    expect(last?.total).toBe(miner.stats().sharesDropped);
    source.open();
  });

  test('the share queue holds POOL_QUEUE_MAX shares by default, then drops the oldest', () => {
    const dropped: number[] = [];
    const drops = {
      dropped: (_reason: string, count: number) => dropped.push(count),
    } as unknown as DropReporter;
    const queue = new ShareQueue(drops, () => 0);
    const share = (i: number) => ({ id: `s/${i}`, expiresAtMs: 1 }) as FoundResult;
    for (let i = 0; i < POOL_QUEUE_MAX; i++) queue.push(share(i));
    expect(queue.length).toBe(POOL_QUEUE_MAX);
    expect(dropped).toEqual([]);
    queue.push(share(POOL_QUEUE_MAX));
    expect(queue.length).toBe(POOL_QUEUE_MAX);
    expect(dropped).toEqual([1]);
    const sent: string[] = [];
    queue.drain(
      () => sent.length < 1,
      (f) => sent.push(f.id),
    );
    expect(sent).toEqual(['s/1']); // s/0, the oldest, was the one dropped
    expect(() => new Miner({ source: new FakeSource(), backends: [], shareQueueMax: 0 })).toThrow(
      'shareQueueMax: expected a positive integer, got 0',
    );
  });
});

/**
 * Two validators: the first job comes from A, which goes down as its result is found; every
 * later job comes from B. Results for A's work can only go to A.
 */
class TwoValidators extends FakeSource implements WorkSource {
  readonly from = new Map<string, string>();
  aDown = true;
  attemptsOnA = 0;
  override async getWork() {
    const job = await super.getWork();
    this.url = this.jobs === 1 ? 'http://a' : 'http://b';
    this.from.set(job.challengeId, this.url);
    return job;
  }
  override async submit(found: FoundResult) {
    if (this.endpointOf(found) === 'http://a') {
      this.attemptsOnA++;
      if (this.aDown) return { status: 'unavailable' as const, reason: 'ECONNREFUSED', endpoint: 'http://a' };
    }
    return super.submit(found);
  }
  endpointOf(found: FoundResult): string | undefined {
    return this.from.get(found.challengeId);
  }
}

describe('failover without noise', () => {
  test('a result journaled for a validator that is down waits for it on its back-off; results on the other one raise no connection events', async () => {
    const source = new TwoValidators();
    source.difficulty = 256n;
    const { events, miner } = await startMiner(source, { retryDelayMs: 100, maxRetryDelayMs: 400 });
    await waitFor(() => ofType(events, 'accepted').length >= 30, '30 results accepted on B');
    const lost = ofType(events, 'connection-lost');
    expect(lost).toEqual([
      { type: 'connection-lost', url: 'http://a', reason: 'ECONNREFUSED', retryInMs: 100 },
    ]);
    expect(ofType(events, 'connection-restored')).toEqual([]);
    expect(ofType(events, 'journaled')).toHaveLength(1);
    expect(miner.stats().connected).toBe(true); // B, in use, is up
    // The back-off (100, 200, 400, 400 ... ms), not one attempt per result on B.
    expect(source.attemptsOnA).toBeLessThan(ofType(events, 'accepted').length / 2);
    // A comes back: its result is delivered, one restored event naming it.
    source.aDown = false;
    await waitFor(() => miner.stats().journalSize === 0, 'the journaled result delivered');
    expect(ofType(events, 'connection-restored').map((e) => e.url)).toEqual(['http://a']);
    expect(ofType(events, 'connection-lost')).toHaveLength(1);
  });
});
