import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { formatSse, SseHub, type SseMessage, SseParser, type SseSink, sseRefusal } from '../src/index.js';

/** A sink that keeps what it was written; `drain: false` keeps everything "unsent". */
class FakeSink implements SseSink {
  text = '';
  destroyed = false;
  constructor(private readonly drain = true) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
  get writableLength(): number {
    return this.drain ? 0 : this.text.length;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function parse(text: string): SseMessage[] {
  return new SseParser().push(text);
}

describe('SseHub', () => {
  it('numbers events, replays after a Last-Event-ID, and says when it cannot', () => {
    const hub = new SseHub({ capacity: 3, heartbeatMs: 0, epoch: 'e1' });
    const ids = [1, 2, 3, 4].map((n) => hub.publish('block', { n }));
    expect(ids).toEqual(['e1-1', 'e1-2', 'e1-3', 'e1-4']);
    const resumed = new FakeSink();
    hub.subscribe(resumed, 'e1-2');
    expect(parse(resumed.text).map((m) => [m.id, m.data])).toEqual([
      ['e1-3', '{"n":3}'],
      ['e1-4', '{"n":4}'],
    ]);
    const old = new FakeSink();
    hub.subscribe(old, 'e1-1'); // evicted from the ring of 3
    expect(parse(old.text)).toEqual([
      { id: undefined, event: 'reset', data: '{"reason":"event_id_too_old","oldest_id":"e1-2"}' },
    ]);
    const other = new FakeSink();
    hub.subscribe(other, 'e0-9');
    expect(JSON.parse(parse(other.text)[0]!.data)).toEqual({ reason: 'unknown_event_id', oldest_id: 'e1-2' });
    hub.publish('block', { n: 5 });
    for (const sink of [resumed, old, other]) expect(parse(sink.text).at(-1)?.id).toBe('e1-5');
    hub.close();
  });

  it('drops a subscriber whose unsent bytes pass the bound; the others go on', () => {
    const hub = new SseHub({ heartbeatMs: 0, maxBufferedBytes: 1000 });
    const slow = new FakeSink(false);
    const fast = new FakeSink();
    const unsubscribeSlow = hub.subscribe(slow);
    hub.subscribe(fast);
    for (let i = 0; i < 50; i++) hub.publish('block', { pad: 'x'.repeat(40), i });
    expect(slow.destroyed).toBe(true);
    expect(fast.destroyed).toBe(false);
    expect(hub.stats()).toMatchObject({ subscribers: 1, dropped: 1, published: 50 });
    expect(parse(fast.text)).toHaveLength(50);
    unsubscribeSlow?.(); // the close handler may still run: harmless
    expect(hub.size).toBe(1);
    hub.close();
    expect(fast.destroyed).toBe(true);
  });

  it('refuses subscribers beyond its maximum and writes heartbeats', () => {
    vi.useFakeTimers();
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const hub = new SseHub({ heartbeatMs: 10, maxSubscribers: 1 });
    const sink = new FakeSink();
    expect(hub.subscribe(sink)).toBeTypeOf('function');
    expect(hub.full).toBe(true);
    expect(hub.subscribe(new FakeSink())).toBeUndefined();
    vi.advanceTimersByTime(9);
    expect(sink.text).not.toContain(': heartbeat');
    vi.advanceTimersByTime(1);
    expect(sink.text.match(/: heartbeat\n\n/g)).toHaveLength(1);
    vi.advanceTimersByTime(20);
    expect(sink.text.match(/: heartbeat\n\n/g)).toHaveLength(3);
    hub.close();
  });
});

describe('SseHub per-client cap', () => {
  it('refuses a client beyond its share while others still subscribe, and frees the slot on close or drop', () => {
    const hub = new SseHub({
      heartbeatMs: 0,
      maxSubscribers: 5,
      maxSubscribersPerClient: 2,
      maxBufferedBytes: 100,
    });
    const a1 = hub.subscribe(new FakeSink(), undefined, 'a');
    const slow = new FakeSink(false);
    hub.subscribe(slow, undefined, 'a');
    expect(hub.admission('a')).toBe('client_full');
    expect(hub.subscribe(new FakeSink(), undefined, 'a')).toBeUndefined();
    expect(hub.admission('b')).toBe('ok');
    hub.subscribe(new FakeSink(), undefined, 'b');
    expect(hub.subscribersOf('a')).toBe(2);
    // Closing one of a's streams gives it its slot back; so does a drop for reading slowly.
    a1?.();
    a1?.(); // the close handler may run twice: counted once
    expect(hub.subscribersOf('a')).toBe(1);
    hub.publish('block', { pad: 'x'.repeat(200) });
    expect(slow.destroyed).toBe(true);
    expect(hub.subscribersOf('a')).toBe(0);
    // The global cap still holds, for every client.
    for (const c of ['c', 'c', 'd', 'd']) hub.subscribe(new FakeSink(), undefined, c);
    expect(hub.size).toBe(5);
    expect(hub.admission('e')).toBe('full');
    expect(sseRefusal('full', hub.limits)).toMatchObject({
      code: 'service_unavailable',
      details: { max_streams: 5 },
    });
    expect(sseRefusal('client_full', hub.limits)).toMatchObject({
      code: 'too_many_streams',
      details: { max_streams_per_client: 2 },
    });
    hub.close();
    expect(hub.subscribersOf('c')).toBe(0);
  });
});

describe('SseParser', () => {
  it('parses across chunk boundaries, CRLF and comments, multi-line data and retry', () => {
    const text = `retry: 1500\r\n\r\n: hi\r\n${formatSse({ id: 'a-1', event: 'block', data: 'one\ntwo' })}data: x\n\n`;
    const parser = new SseParser();
    const out: SseMessage[] = [];
    for (const ch of text) out.push(...parser.push(ch));
    expect(out).toEqual([
      { id: 'a-1', event: 'block', data: 'one\ntwo' },
      { id: 'a-1', event: 'message', data: 'x' },
    ]);
    expect(parser.retryMs).toBe(1500);
    expect(parser.lastEventId).toBe('a-1');
  });
});
