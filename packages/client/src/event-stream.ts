import { setTimeout as sleep } from 'node:timers/promises';
import { HEX_EVENT_NAMES, type HexEvent, type HexEventName, SseParser } from '@tensormine/protocol';
import { AbortedError, TensormineError, ValidatorError } from './errors.js';
import type { Transport } from './transport.js';

/**
 * GET /api/hexchain/events as an async iterator: one stream at a time on the client's active
 * endpoint, reconnected (with the client's failover) after any break, resumed with
 * Last-Event-ID so that no event is lost while the ring of the server still holds it. When it
 * cannot (a `reset` event), the iterator yields that `reset` and goes on with live events.
 */
export interface EventStreamOptions {
  /** Resume after this event id (e.g. the last one a previous run saw). */
  readonly lastEventId?: string;
  /** Ends the iteration (the loop then returns normally). */
  readonly signal?: AbortSignal;
  /** No byte for this long (heartbeats included) means a dead stream: reconnect (default 45000). */
  readonly idleTimeoutMs?: number;
  /** The first reconnect delay, ms, doubled up to maxReconnectDelayMs (default: the server's `retry:`, else 1000). */
  readonly reconnectDelayMs?: number;
  /** default 30000 */
  readonly maxReconnectDelayMs?: number;
  /** Called each time a stream is open (200 received), with the endpoint serving it. */
  readonly onOpen?: (endpoint: string) => void;
  /** Called on each reconnect attempt after a break (for logs). */
  readonly onReconnect?: (info: {
    readonly attempt: number;
    readonly error: unknown;
    readonly delayMs: number;
  }) => void;
}

const NAMES = new Set<string>(HEX_EVENT_NAMES);

export async function* hexEventStream(
  transport: Transport,
  options: EventStreamOptions = {},
): AsyncGenerator<HexEvent, void, undefined> {
  const controller = new AbortController();
  const outer = options.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) return;
  outer?.addEventListener('abort', onAbort, { once: true });
  const maxDelay = options.maxReconnectDelayMs ?? 30_000;
  let lastEventId = options.lastEventId;
  let serverRetryMs: number | undefined;
  let failures = 0;
  try {
    while (!controller.signal.aborted) {
      let failure: unknown;
      try {
        const { body, endpoint } = await transport.stream(
          'hexEvents',
          {},
          {
            headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
            signal: controller.signal,
            idleTimeoutMs: options.idleTimeoutMs ?? 45_000,
          },
        );
        options.onOpen?.(endpoint);
        const parser = new SseParser();
        const decoder = new TextDecoder();
        for await (const chunk of body) {
          failures = 0;
          for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
            if (!NAMES.has(message.event)) continue;
            let data: unknown;
            try {
              data = JSON.parse(message.data);
            } catch {
              continue;
            }
            if (message.id !== undefined) lastEventId = message.id;
            yield { id: message.id ?? '', event: message.event as HexEventName, data } as HexEvent;
          }
          if (parser.retryMs !== undefined) serverRetryMs = parser.retryMs;
        }
      } catch (error) {
        if (controller.signal.aborted || error instanceof AbortedError) return;
        // A refusal that waiting does not change (no hexchain: 404; bad input: 400) ends it.
        if (
          error instanceof ValidatorError &&
          error.status !== undefined &&
          error.status < 500 &&
          error.status !== 429
        ) {
          throw error;
        }
        if (!(error instanceof TensormineError) && !isStreamError(error)) throw error;
        failure = error;
      }
      if (controller.signal.aborted) return;
      failures++;
      const base = options.reconnectDelayMs ?? serverRetryMs ?? 1000;
      const delayMs = Math.min(maxDelay, base * 2 ** Math.min(failures - 1, 10));
      options.onReconnect?.({ attempt: failures, error: failure, delayMs });
      try {
        await sleep(delayMs, undefined, { signal: controller.signal });
      } catch {
        return;
      }
    }
  } finally {
    outer?.removeEventListener('abort', onAbort);
    controller.abort();
  }
}

/** Errors of a stream that broke after it started (socket closed, body timeout). */
function isStreamError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('UND_ERR') || code.startsWith('E'));
}
