import { RETARGET_WINDOW_BLOCKS, SSE_HEADERS, type SseHub, sseRefusal } from '@tensormine/protocol';
import { addressKey } from '@tensormine/service-kit';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { BlockRecord, DifficultyWrite } from '../../store/types.js';
import type { LatticeState } from './lattice-state.js';
import { blockToWire } from './wire.js';

/**
 * The event stream of the hexchain (GET /api/hexchain/events): accepted blocks, retargets and
 * difficulty changes, published after their commit (docs/protocol.md section 4).
 */

/**
 * GET /api/hexchain/events: subscribes the caller to `events` (resuming after Last-Event-ID).
 * A client coming from a node that is ahead of this one (an id of this stream beyond what this
 * node has published) waits for `catchUp` first, so that it resumes instead of being reset.
 */
export function eventHandlers(events: SseHub, catchUp: () => Promise<void>) {
  return routeHandlers({
    async hexEvents(request) {
      const header = request.raw.headers['last-event-id'];
      const lastEventId = typeof header === 'string' ? header : request.query.last_event_id;
      const ahead = lastEventId === undefined ? undefined : /^(.+)-([0-9]{1,15})$/.exec(lastEventId);
      if (
        ahead !== null &&
        ahead !== undefined &&
        ahead[1] === events.epoch &&
        Number(ahead[2]) > events.seq
      ) {
        await catchUp();
      }
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
 * The id of the event of a chain version (docs/protocol.md "Event stream"): `<epoch>-<version>`,
 * where the epoch names the database (its genesis time) and the version counts the chain's
 * writes (blocks and difficulty writes: height + difficulty writes) up to and including the
 * event's. Every node publishes the same events in the same order under the same ids, so a
 * client resumes on any node.
 */
export function eventId(epoch: string, version: number): string {
  return `${epoch}-${version}`;
}

/** The event epoch of a database: its genesis time, base 36 (no `-`). */
export function eventEpoch(genesisTimeMs: bigint): string {
  return `g${genesisTimeMs.toString(36)}`;
}

/** Publishes an accepted block, once it is in the in-memory lattice, under `id`. */
export function publishBlock(events: SseHub, state: LatticeState, block: BlockRecord, id: string): void {
  const lattice = state.lattice;
  events.publish(
    'block',
    {
      height: block.height,
      block: blockToWire(block),
      occupied: lattice.size,
      frontier_size: lattice.frontierSize,
      max_depth: state.maxDepth,
      blocks_until_retarget: RETARGET_WINDOW_BLOCKS - (lattice.height % RETARGET_WINDOW_BLOCKS),
    },
    id,
  );
}

/**
 * Publishes a difficulty write under `id`: a retarget (also when the difficulty stayed), or an
 * admin change that changed it. `configured` stands for a null `previous`.
 */
export function publishDifficultyWrite(
  events: SseHub,
  write: DifficultyWrite,
  configured: bigint,
  id: string,
): void {
  const from = Number(write.previous ?? configured);
  const to = Number(write.value);
  const at = Math.floor(write.atMs / 1000);
  if (write.kind === 'retarget') events.publish('retarget', { height: write.height, from, to, at }, id);
  else if (from !== to) events.publish('difficulty', { from, to, at }, id);
}
