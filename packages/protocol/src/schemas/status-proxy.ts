import Type, { type Static } from 'typebox';
import {
  CoordSchema,
  Hex32Schema,
  nullable,
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

export const LiveStateSchema = Type.Object(
  {
    mining: Type.Boolean({
      description:
        'True when the validator accepted work in the last few block intervals (someone is mining).',
    }),
    hashrate: Type.Number({
      minimum: 0,
      description:
        'Estimated network hashrate in hashes per second, from recent blocks and their difficulty.',
    }),
    difficulty: withDescription(SafeUintSchema, 'Current hexchain difficulty (expected hashes per block).'),
    last_block: nullable(LastBlockSchema, 'The last accepted block; null before the first.'),
    uptime_s: withDescription(SafeUintSchema, 'Seconds since the status proxy started.'),
    validator_url: withDescription(UrlSchema, 'The validator the proxy reads from.'),
  },
  {
    title: 'LiveState',
    description: 'GET /api/live: the older mining-state summary, kept for old dashboards.',
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
