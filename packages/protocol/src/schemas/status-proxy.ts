import Type, { type Static } from 'typebox';
import {
  CoordSchema,
  Hex32Schema,
  nullable,
  PublicKeyHexSchema,
  SafeUintSchema,
  UnixSecondsSchema,
  UrlSchema,
  withDescription,
} from './common.js';
import { HexStatusSchema } from './hexchain.js';
import { HealthSchema, PeerSchema } from './validator.js';

/**
 * Status proxy schemas ({status_url}). The proxy forwards /api/hexchain/* to the validator
 * unchanged, so those routes reuse the hexchain schemas; this file holds its own pages.
 */

export const LastBlockSchema = Type.Object(
  {
    coord: withDescription(CoordSchema, 'Where the block sits.'),
    block_hash: withDescription(Hex32Schema, 'Hash of the block.'),
    depth: withDescription(SafeUintSchema, 'Depth of the block.'),
    timestamp: withDescription(UnixSecondsSchema, 'When it was accepted.'),
  },
  { title: 'LastBlock', description: 'The most recently accepted lattice block.' },
);
export type LastBlock = Static<typeof LastBlockSchema>;

export const RecentBlockSchema = Type.Object(
  {
    ...LastBlockSchema.properties,
    height: withDescription(SafeUintSchema, 'Acceptance order of the block.'),
    miner_pubkey: withDescription(PublicKeyHexSchema, 'The miner that mined it.'),
    difficulty: withDescription(SafeUintSchema, 'The difficulty it was mined at.'),
  },
  { title: 'RecentBlock', description: 'A recently accepted block.' },
);
export type RecentBlock = Static<typeof RecentBlockSchema>;

export const LiveStateSchema = Type.Object(
  {
    mining: Type.Boolean({
      description:
        'True when the validator accepted a block in the last 4 target block intervals (someone is mining).',
    }),
    hashrate: Type.Number({
      minimum: 0,
      description:
        'Estimated network hashrate in hashes per second over the time mined: the difficulty (expected hashes) of the last up to 64 blocks, but the first, over the gaps between them, leaving out idle gaps (longer than 20 times the median gap and than 10 s); 0 with fewer than 2 blocks or no elapsed time.',
    }),
    difficulty: withDescription(SafeUintSchema, 'Current hexchain difficulty (expected hashes per block).'),
    last_block: nullable(LastBlockSchema, 'The last accepted block; null before the first.'),
    recent_blocks: Type.Array(RecentBlockSchema, {
      maxItems: 20,
      description: 'The last up to 20 accepted blocks, newest first.',
    }),
    blocks: withDescription(SafeUintSchema, 'Mined blocks in the lattice (the genesis block not counted).'),
    miners_seen: withDescription(SafeUintSchema, 'Distinct miner keys among the mined blocks.'),
    mean_block_time_s: nullable(
      Type.Number({ minimum: 0, description: 'Seconds.' }),
      'Mean time between the last up to 64 blocks, idle gaps left out (as hashrate); null with fewer than 2.',
    ),
    block_interval_s: Type.Number({ minimum: 0, description: 'The target time between blocks, seconds.' }),
    blocks_until_retarget: withDescription(SafeUintSchema, 'Blocks before the next difficulty adjustment.'),
    uptime_s: withDescription(SafeUintSchema, 'Seconds since the status proxy started.'),
    validator_url: withDescription(UrlSchema, 'The validator the proxy reads from now.'),
  },
  {
    title: 'LiveState',
    description: 'GET /api/live: the mining-state summary (the older dashboards read it).',
  },
);
export type LiveState = Static<typeof LiveStateSchema>;

export const DashboardSummarySchema = Type.Object(
  {
    validator: withDescription(HealthSchema, "The validator's GET /health."),
    lattice: withDescription(HexStatusSchema, "The validator's GET /api/hexchain/status."),
    peers: Type.Array(PeerSchema, {
      maxItems: 1000,
      description: "The validator's peers (peer topology view).",
    }),
    generated_at: withDescription(UnixSecondsSchema, 'When the proxy assembled this summary.'),
  },
  {
    title: 'DashboardSummary',
    description: 'GET /api/dashboard: everything the status page shows, in one request.',
  },
);
export type DashboardSummary = Static<typeof DashboardSummarySchema>;

const Column = (description: string, minimum = 0) =>
  Type.Array(Type.Integer({ minimum, maximum: Number.MAX_SAFE_INTEGER }), {
    maxItems: 2_000_000,
    description,
  });

export const DashboardBlocksQuerySchema = Type.Object(
  {
    after: Type.Optional(
      withDescription(SafeUintSchema, 'Only the blocks of a greater height (default 0: every block).'),
    ),
  },
  { title: 'DashboardBlocksQuery', description: 'GET /api/dashboard/blocks query.' },
);
export type DashboardBlocksQuery = Static<typeof DashboardBlocksQuerySchema>;

export const DashboardBlocksSchema = Type.Object(
  {
    height: Column('Height of each block (acceptance order), ascending.'),
    q: Column('Cube coordinate q of each block.', -Number.MAX_SAFE_INTEGER),
    r: Column('Cube coordinate r of each block (s = -q - r).', -Number.MAX_SAFE_INTEGER),
    depth: Column('Depth of each block.'),
    miner: Column('Index of the miner of each block in `miners`.'),
    timestamp: Column('When each block was accepted (Unix seconds).'),
    difficulty: Column('The difficulty each block was mined at.'),
    miners: Type.Array(PublicKeyHexSchema, {
      maxItems: 1_000_000,
      description: 'The miner keys, indexed by the `miner` column.',
    }),
    total: withDescription(SafeUintSchema, 'Mined blocks the proxy knows of.'),
    last_event_id: nullable(
      Type.String({ maxLength: 64, description: 'An event id.' }),
      'The id of the last event these columns include: open GET /api/hexchain/events with it (last_event_id or Last-Event-ID) to miss nothing.',
    ),
  },
  {
    title: 'DashboardBlocks',
    description:
      'GET /api/dashboard/blocks: every mined block in columns (one array per field), compact enough for a page to draw tens of thousands of cells at once.',
  },
);
export type DashboardBlocks = Static<typeof DashboardBlocksSchema>;
