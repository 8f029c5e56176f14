/**
 * Server-Sent Events without I/O: the hub a server fans events out with (a bounded replay ring
 * for Last-Event-ID resume, heartbeats, a bounded buffer per subscriber) and the incremental
 * parser a client reads a stream with. The validator's GET /api/hexchain/events and the status
 * proxy's re-served stream are both an `SseHub`; the SDK's event iterator uses `SseParser`.
 * (docs/protocol.md "Event stream").
 */

/** Where a hub writes one subscriber's stream: a Node `ServerResponse` fits as it is. */
export interface SseSink {
  write(chunk: string): unknown;
  /** Bytes queued and not yet taken by the socket. */
  readonly writableLength: number;
  /** Ends the stream now (a slow reader is dropped this way). */
  destroy(): void;
}

/** One message of an event stream. */
export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

export interface SseHubOptions {
  /** Events kept for resume (default 4096). */
  readonly capacity?: number;
  /** A subscriber whose unsent bytes exceed this is disconnected (default 1 MiB). */
  readonly maxBufferedBytes?: number;
  /** A `: heartbeat` comment this often, ms (default 15000; 0: none). */
  readonly heartbeatMs?: number;
  /** The `retry:` the stream advises for reconnects, ms (default 2000). */
  readonly retryMs?: number;
  /** Most subscribers at once (default 10000); `subscribe` returns undefined beyond. */
  readonly maxSubscribers?: number;
  /**
   * Most subscribers one client may hold at once (default: no cap of its own): the client is
   * the key given to `subscribe`, a client address or, behind a trusted proxy, the client it
   * forwards for. Keeps one client from taking every slot of `maxSubscribers`.
   */
  readonly maxSubscribersPerClient?: number;
  /** The id prefix of this hub's events (default: random); ids are `<epoch>-<seq>`. */
  readonly epoch?: string;
}

/** Why a Last-Event-ID could not be resumed (the stream then starts with a `reset` event). */
export type ResumeGap = 'unknown_event_id' | 'event_id_too_old';

interface Entry {
  readonly id: string;
  readonly seq: number | undefined;
  readonly frame: string;
}

interface Subscriber {
  readonly sink: SseSink;
  readonly client: string | undefined;
  open: boolean;
}

/** Whether a new subscriber would be taken: `full` (every slot held), `client_full` (its client's). */
export type SseAdmission = 'ok' | 'full' | 'client_full';

/**
 * The refusal a server answers a stream it cannot take with (docs/protocol.md 4.12): every slot
 * held, `service_unavailable` (503, retry later); the client's own share held,
 * `too_many_streams` (429: close one of its streams first).
 */
export function sseRefusal(
  admission: Exclude<SseAdmission, 'ok'>,
  limits: { readonly total: number; readonly perClient: number },
): {
  readonly code: 'service_unavailable' | 'too_many_streams';
  readonly message: string;
  readonly details: Readonly<Record<string, number>>;
} {
  if (admission === 'full') {
    return {
      code: 'service_unavailable',
      message: `the event stream has its maximum of ${limits.total} subscribers; retry later`,
      details: { max_streams: limits.total },
    };
  }
  return {
    code: 'too_many_streams',
    message: `this client already holds ${limits.perClient} event streams, the most one client may; close one first`,
    details: { max_streams_per_client: limits.perClient },
  };
}

export interface SseHubStats {
  readonly subscribers: number;
  /** Subscribers disconnected for reading too slowly, since the hub started. */
  readonly dropped: number;
  readonly published: number;
  readonly oldestId: string | null;
  readonly lastId: string | null;
}

/**
 * The response headers of an event stream: no caching or transformation on the way, and no
 * buffering by a reverse proxy (nginx reads `x-accel-buffering`), so events arrive as sent.
 */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** The frame of one event: `id:`, `event:` and one `data:` line per line of data. */
export function formatSse(message: SseMessage): string {
  const id = message.id === undefined ? '' : `id: ${message.id}\n`;
  const data = message.data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('');
  return `${id}event: ${message.event}\n${data}\n`;
}

function parseId(id: string): { epoch: string; seq: number } | undefined {
  const dash = id.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const seq = Number(id.slice(dash + 1));
  return Number.isSafeInteger(seq) && seq >= 0 ? { epoch: id.slice(0, dash), seq } : undefined;
}

export class SseHub {
  readonly epoch: string;
  readonly #capacity: number;
  readonly #maxBuffered: number;
  readonly #retryMs: number;
  readonly #maxSubscribers: number;
  readonly #maxPerClient: number;
  readonly #ring: Entry[] = [];
  readonly #subscribers = new Set<Subscriber>();
  /** Open subscribers per client key (only keys with at least one). */
  readonly #perClient = new Map<string, number>();
  readonly #timer: ReturnType<typeof setInterval> | undefined;
  readonly #listeners = new Set<(event: string, data: unknown) => void>();
  #seq = 0;
  #dropped = 0;
  #published = 0;
  #closed = false;

  constructor(options: SseHubOptions = {}) {
    this.#capacity = options.capacity ?? 4096;
    this.#maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
    this.#retryMs = options.retryMs ?? 2000;
    this.#maxSubscribers = options.maxSubscribers ?? 10_000;
    this.#maxPerClient = options.maxSubscribersPerClient ?? Number.POSITIVE_INFINITY;
    this.epoch = options.epoch ?? Math.floor(Math.random() * 36 ** 8).toString(36);
    const every = options.heartbeatMs ?? 15_000;
    if (every > 0) {
      this.#timer = setInterval(() => this.#broadcast(': heartbeat\n\n'), every);
      this.#timer.unref?.();
    }
  }

  get size(): number {
    return this.#subscribers.size;
  }

  /** True when `subscribe` would refuse a new subscriber. */
  get full(): boolean {
    return this.#closed || this.#subscribers.size >= this.#maxSubscribers;
  }

  /** The most subscribers at once, and per client (Infinity: no cap of its own). */
  get limits(): { readonly total: number; readonly perClient: number } {
    return { total: this.#maxSubscribers, perClient: this.#maxPerClient };
  }

  /** Whether `subscribe(sink, id, client)` would take a new subscriber of `client` now. */
  admission(client?: string): SseAdmission {
    if (this.full) return 'full';
    if (client !== undefined && (this.#perClient.get(client) ?? 0) >= this.#maxPerClient)
      return 'client_full';
    return 'ok';
  }

  /** How many subscribers `client` holds. */
  subscribersOf(client: string): number {
    return this.#perClient.get(client) ?? 0;
  }

  stats(): SseHubStats {
    return {
      subscribers: this.#subscribers.size,
      dropped: this.#dropped,
      published: this.#published,
      oldestId: this.#ring[0]?.id ?? null,
      lastId: this.#ring.at(-1)?.id ?? null,
    };
  }

  /**
   * Sends an event to every subscriber and keeps it for resume. `id` keeps an upstream id (a
   * proxy re-serving another hub's stream); by default the hub numbers the event. Returns its id.
   */
  publish(event: string, data: unknown, id?: string): string {
    const eventId = id ?? `${this.epoch}-${++this.#seq}`;
    const frame = formatSse({ id: eventId, event, data: JSON.stringify(data) });
    this.#ring.push({ id: eventId, seq: parseId(eventId)?.seq, frame });
    if (this.#ring.length > this.#capacity) this.#ring.shift();
    this.#published++;
    this.#broadcast(frame);
    for (const listener of this.#listeners) {
      try {
        listener(event, data);
      } catch {
        // A listener's failure is its own business; the stream goes on.
      }
    }
    return eventId;
  }

  /**
   * Calls `listener` with every event published from now on, in the process (a service that
   * reacts to blocks, as the device callbacks do), after the subscribers got it. Returns the
   * function that removes it.
   */
  listen(listener: (event: string, data: unknown) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Sends an event without an id and without keeping it (e.g. a `reset` to everyone). */
  announce(event: string, data: unknown): void {
    this.#broadcast(formatSse({ id: undefined, event, data: JSON.stringify(data) }));
  }

  /** Forgets the replay ring (the source restarted: old ids cannot be resumed any more). */
  clear(): void {
    this.#ring.length = 0;
  }

  /**
   * The events after `lastEventId`, or why they cannot be given: an id of another epoch, or one
   * older than the ring.
   */
  since(lastEventId: string): { frames: string[] } | { gap: ResumeGap } {
    const at = this.#ring.findIndex((e) => e.id === lastEventId);
    if (at >= 0) return { frames: this.#ring.slice(at + 1).map((e) => e.frame) };
    const parsed = parseId(lastEventId);
    const oldest = this.#ring[0];
    const oldestParsed = oldest === undefined ? undefined : parseId(oldest.id);
    if (parsed !== undefined && oldestParsed !== undefined && parsed.epoch === oldestParsed.epoch) {
      if (parsed.seq < oldestParsed.seq) return { gap: 'event_id_too_old' };
    }
    if (
      parsed !== undefined &&
      oldest === undefined &&
      parsed.epoch === this.epoch &&
      parsed.seq <= this.#seq
    ) {
      return { frames: [] };
    }
    return { gap: 'unknown_event_id' };
  }

  /**
   * Adds a subscriber: writes `retry:`, then the events after `lastEventId` (or a `reset` event
   * when they cannot be resumed), then every new event. `client` counts it against that
   * client's cap. Returns the function that removes it (call it when the connection closes), or
   * undefined when the hub, or the client's share of it, is full, or the hub is closed.
   */
  subscribe(sink: SseSink, lastEventId?: string, client?: string): (() => void) | undefined {
    if (this.admission(client) !== 'ok') return undefined;
    const subscriber: Subscriber = { sink, client, open: true };
    let head = `retry: ${this.#retryMs}\n\n`;
    if (lastEventId !== undefined && lastEventId !== '') {
      const resumed = this.since(lastEventId);
      if ('frames' in resumed) head += resumed.frames.join('');
      else {
        head += formatSse({
          id: undefined,
          event: 'reset',
          data: JSON.stringify({ reason: resumed.gap, oldest_id: this.#ring[0]?.id ?? null }),
        });
      }
    }
    this.#subscribers.add(subscriber);
    if (client !== undefined) this.#perClient.set(client, (this.#perClient.get(client) ?? 0) + 1);
    this.#write(subscriber, head);
    return () => this.#remove(subscriber);
  }

  #remove(subscriber: Subscriber): void {
    subscriber.open = false;
    if (!this.#subscribers.delete(subscriber) || subscriber.client === undefined) return;
    const left = (this.#perClient.get(subscriber.client) ?? 1) - 1;
    if (left <= 0) this.#perClient.delete(subscriber.client);
    else this.#perClient.set(subscriber.client, left);
  }

  /** Ends every stream and stops the heartbeat. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    for (const s of this.#subscribers) {
      s.open = false;
      s.sink.destroy();
    }
    this.#subscribers.clear();
    this.#perClient.clear();
  }

  #broadcast(frame: string): void {
    for (const s of this.#subscribers) this.#write(s, frame);
  }

  #write(subscriber: Subscriber, frame: string): void {
    if (!subscriber.open) return;
    subscriber.sink.write(frame);
    if (subscriber.sink.writableLength > this.#maxBuffered) {
      // A slow reader: drop it rather than hold memory or slow the publisher. It reconnects
      // with its Last-Event-ID and resumes from the ring.
      this.#remove(subscriber);
      this.#dropped++;
      subscriber.sink.destroy();
    }
  }
}

/**
 * Incremental parser of a text/event-stream (the WHATWG rules: `id`, `event`, `data`, `retry`,
 * comments, CR/LF/CRLF line ends). Feed it chunks; it returns the complete messages.
 */
export class SseParser {
  #buffer = '';
  #event = '';
  #data: string[] = [];
  #hasData = false;
  /** The last `retry:` value seen, ms. */
  retryMs: number | undefined;
  /** The last id seen (what a reconnect sends as Last-Event-ID). */
  lastEventId: string | undefined;

  push(chunk: string): SseMessage[] {
    this.#buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.#buffer);
      if (match === null) break;
      // A lone CR at the very end may be the first half of CRLF: wait for more.
      if (match[0] === '\r' && match.index === this.#buffer.length - 1) break;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      const message = this.#line(line);
      if (message !== undefined) out.push(message);
    }
    return out;
  }

  #line(line: string): SseMessage | undefined {
    if (line === '') {
      if (!this.#hasData) {
        this.#event = '';
        return undefined;
      }
      const message = { id: this.lastEventId, event: this.#event || 'message', data: this.#data.join('\n') };
      this.#event = '';
      this.#data = [];
      this.#hasData = false;
      return message;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.#data.push(value);
      this.#hasData = true;
    } else if (field === 'event') this.#event = value;
    else if (field === 'id' && !value.includes('\0')) {
      this.lastEventId = value;
    } else if (field === 'retry' && /^[0-9]+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }
}
