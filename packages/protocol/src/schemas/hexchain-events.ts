import Type, { type Static } from 'typebox';
import { nullable, SafeUintSchema, UnixSecondsSchema, withDescription } from './common.js';
import { HexBlockSchema } from './hexchain.js';

/**
 * The v4.1 push channel, GET /api/hexchain/events (Server-Sent Events, docs/protocol.md
 * "Event stream"). Each SSE message has an `id:` (resume with Last-Event-ID), an `event:` name
 * below and one line of JSON `data:` matching the schema of that name.
 */

const Count = (description: string) => withDescription(SafeUintSchema, description);

/** The event names of the stream, in the order they are documented. */
export const HEX_EVENT_NAMES = ['block', 'retarget', 'difficulty', 'reset'] as const;
export type HexEventName = (typeof HEX_EVENT_NAMES)[number];

export const HexBlockEventSchema = Type.Object(
  {
    height: Count('Acceptance order of the block (1 for the first mined block).'),
    block: HexBlockSchema,
    occupied: Count('Occupied coordinates after this block (genesis included).'),
    frontier_size: Count('Free coordinates adjacent to a block after this block.'),
    max_depth: Count('Greatest depth in the lattice after this block.'),
    blocks_until_retarget: Count('Blocks still to be accepted before the next retarget.'),
  },
  {
    title: 'HexBlockEvent',
    description:
      'event: block. A block was accepted (after its transaction committed): work on its coordinate is stale.',
  },
);
export type HexBlockEvent = Static<typeof HexBlockEventSchema>;

export const HexRetargetEventSchema = Type.Object(
  {
    height: Count('Height of the block that closed the retarget window.'),
    from: Count('Difficulty before.'),
    to: Count('Difficulty from now on (may equal from when the pace was on target).'),
    at: withDescription(UnixSecondsSchema, 'When the retarget happened.'),
  },
  {
    title: 'HexRetargetEvent',
    description:
      'event: retarget. The retarget rule ran at the end of a window (every RETARGET_WINDOW_BLOCKS blocks); sent right after the block event of that height.',
  },
);
export type HexRetargetEvent = Static<typeof HexRetargetEventSchema>;

export const HexDifficultyEventSchema = Type.Object(
  {
    from: Count('Difficulty before.'),
    to: Count('Difficulty from now on.'),
    at: withDescription(UnixSecondsSchema, 'When it changed.'),
  },
  {
    title: 'HexDifficultyEvent',
    description:
      'event: difficulty. An operator changed the difficulty (POST /admin/config hexchain_difficulty); new challenges use it.',
  },
);
export type HexDifficultyEvent = Static<typeof HexDifficultyEventSchema>;

export const HexResetEventSchema = Type.Object(
  {
    reason: Type.Union([Type.Literal('unknown_event_id'), Type.Literal('event_id_too_old')], {
      description:
        'unknown_event_id: the Last-Event-ID is not from this stream (another validator or an earlier run); event_id_too_old: the events after it no longer fit the replay buffer.',
    }),
    oldest_id: nullable(
      Type.String({ maxLength: 64, description: 'An event id.' }),
      'The oldest event id still in the replay buffer; null when it is empty.',
    ),
  },
  {
    title: 'HexResetEvent',
    description:
      'event: reset. Sent first when a Last-Event-ID cannot be resumed: events may have been missed, so re-read GET /api/hexchain/status and the lattice, then follow the live events that come next.',
  },
);
export type HexResetEvent = Static<typeof HexResetEventSchema>;

/** One decoded event of the stream. */
export type HexEvent =
  | { readonly id: string; readonly event: 'block'; readonly data: HexBlockEvent }
  | { readonly id: string; readonly event: 'retarget'; readonly data: HexRetargetEvent }
  | { readonly id: string; readonly event: 'difficulty'; readonly data: HexDifficultyEvent }
  | { readonly id: string; readonly event: 'reset'; readonly data: HexResetEvent };

/** The schema of each event's data, by name. */
export const HEX_EVENT_SCHEMAS = {
  block: HexBlockEventSchema,
  retarget: HexRetargetEventSchema,
  difficulty: HexDifficultyEventSchema,
  reset: HexResetEventSchema,
} as const;

export const HexEventsQuerySchema = Type.Object(
  {
    last_event_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Resume after this event id, for clients that cannot set the Last-Event-ID header (the header wins when both are given).',
      }),
    ),
  },
  { title: 'HexEventsQuery', description: 'GET /api/hexchain/events query.' },
);
export type HexEventsQuery = Static<typeof HexEventsQuerySchema>;

export const HexEventStreamSchema = Type.String({
  maxLength: 1_000_000,
  description:
    'A text/event-stream that stays open: `retry:` once, then per event `id:`, `event:` (block, retarget, difficulty, reset) and one `data:` line of JSON (HexBlockEvent, HexRetargetEvent, HexDifficultyEvent, HexResetEvent), and a `: heartbeat` comment every 15 s when idle. A reader that falls more than 1 MiB behind is disconnected; reconnect with Last-Event-ID.',
});
