import {
  RETARGET_WINDOW_BLOCKS,
  SSE_HEADERS,
  type SseHub,
  shouldRetarget,
  sseRefusal,
} from '@tensormine/protocol';
import { addressKey } from '@tensormine/service-kit';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { BlockRecord } from '../../store/types.js';
import type { LatticeState } from './lattice-state.js';

/**
 * The event stream of the hexchain (GET /api/hexchain/events): accepted blocks, retargets and
 * difficulty changes, published after their commit (docs/protocol.md section 4).
 */

/** GET /api/hexchain/events: subscribes the caller to `events` (resuming after Last-Event-ID). */
export function eventHandlers(events: SseHub) {
  return routeHandlers({
    async hexEvents(request) {
      const header = request.raw.headers['last-event-id'];
      const lastEventId = typeof header === 'string' ? header : request.query.last_event_id;
      // At most eventStreamsPerAddress streams per client address, eventStreams in all.
      const client = addressKey(request.raw.ip);
      const admission = events.admission(client);
      if (admission !== 'ok') {
        const refusal = sseRefusal(admission, events.limits);
        throw new ApiError(refusal.code, refusal.message, refusal.details, {
          'retry-after': admission === 'full' ? '5' : '30',
        });
      }
      const reply = request.reply;
      reply.hijack();
      reply.raw.writeHead(200, SSE_HEADERS);
      const unsubscribe = events.subscribe(reply.raw, lastEventId, client);
      reply.raw.on('close', () => unsubscribe?.());
      return '';
    },
  });
}

/**
 * Publishes an accepted block (and the retarget its height ran, from `old` to `next`) once it
 * is in the in-memory lattice.
 */
export function publishBlock(
  events: SseHub,
  state: LatticeState,
  block: BlockRecord,
  old: bigint,
  next: bigint,
): void {
  const wire = state.block(block.coord);
  if (wire === undefined) return;
  const lattice = state.lattice;
  events.publish('block', {
    height: block.height,
    block: wire,
    occupied: lattice.size,
    frontier_size: lattice.frontierSize,
    max_depth: state.maxDepth,
    blocks_until_retarget: RETARGET_WINDOW_BLOCKS - (lattice.height % RETARGET_WINDOW_BLOCKS),
  });
  if (shouldRetarget(block.height, RETARGET_WINDOW_BLOCKS)) {
    events.publish('retarget', {
      height: block.height,
      from: Number(old),
      to: Number(next),
      at: Math.floor(block.timestampMs / 1000),
    });
  }
}

/** Publishes a difficulty change that no retarget made (an admin change), at `at` Unix seconds. */
export function publishDifficulty(events: SseHub, from: bigint, to: bigint, at: number): void {
  events.publish('difficulty', { from: Number(from), to: Number(to), at });
}
