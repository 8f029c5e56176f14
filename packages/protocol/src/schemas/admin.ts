import Type, { type Static } from 'typebox';
import { MAX_HEX_DIFFICULTY, MIN_HEX_DIFFICULTY } from '../hexchain/target.js';
import { MAX_TENSOR_DIM, MIN_TENSOR_DIM } from '../tensor/devices.js';
import { MAX_DIFFICULTY, MIN_DIFFICULTY } from '../tensor/difficulty.js';
import { SafeUintSchema, withDescription } from './common.js';
import { PoolStrategySchema } from './validator.js';

/**
 * Admin schemas. Every /admin/* route requires `Authorization: Bearer <admin token>` (the token
 * the validator is configured with); a missing or wrong token is answered with 401 unauthorized.
 */

const Count = (description: string) => withDescription(SafeUintSchema, description);

export const AdminMetricsSchema = Type.Object(
  {
    challenges_issued: Count('v4.0 challenges issued over the lifetime of the node (kept across restarts).'),
    proofs_valid: Count('v4.0 proofs accepted over the lifetime of the node (kept across restarts).'),
    proofs_rejected: Count(
      'v4.0 proofs rejected over the lifetime of the node (any reason; kept across restarts).',
    ),
    avg_response_time_ms: Type.Number({
      minimum: 0,
      description: 'Mean handling time of all requests since start, in milliseconds.',
    }),
    uptime_pct: Type.Number({
      minimum: 0,
      maximum: 100,
      description:
        'Percentage (0..100) of the time since the database of this node was first started during which a validator process served from it.',
    }),
    rejections_by_reason: Type.Record(Type.String({ pattern: '^[a-z0-9_]{1,64}$' }), SafeUintSchema, {
      description:
        'Rejected proofs and blocks per error code (keys are ErrorCode values, e.g. "mml_above_threshold"); codes never seen are left out.',
    }),
    blocks_accepted: Count(
      "v4.1 blocks accepted: the chain's height, which counts every accepted block (kept across restarts; in a cluster, the blocks of every node on the database).",
    ),
    requests_total: Count('HTTP requests handled since start.'),
    uptime_s: Count('Seconds since the validator started.'),
    node_id: Type.Optional(
      Type.String({
        maxLength: 128,
        description:
          "The node that answered (as in GET /status). In cluster mode the counters are the network's (shared database); requests_total, avg_response_time_ms, uptime_s and uptime_pct are this node's.",
      }),
    ),
  },
  { title: 'AdminMetrics', description: 'GET /admin/metrics (admin bearer token).' },
);
export type AdminMetrics = Static<typeof AdminMetricsSchema>;

const Difficulty = Type.Integer({
  minimum: MIN_DIFFICULTY,
  maximum: MAX_DIFFICULTY,
  description:
    'v4.0 difficulty for new challenges (1..24): tighter mml_threshold and path tolerance, more iterations.',
});
const MaxTensorDim = Type.Integer({
  minimum: MIN_TENSOR_DIM,
  maximum: MAX_TENSOR_DIM,
  description: 'Largest tensor dimension of a native challenge (4..64); device limits still apply.',
});
const HexchainDifficulty = Type.Integer({
  minimum: Number(MIN_HEX_DIFFICULTY),
  maximum: Number(MAX_HEX_DIFFICULTY),
  description:
    'v4.1 hexchain difficulty (expected hashes per block, >= 16); takes effect for new challenges; the retarget window keeps counting from the last retarget.',
});
const ChallengeTtl = Type.Integer({
  minimum: 10,
  maximum: 3600,
  description: 'Lifetime of new challenges in seconds (10..3600).',
});

const CONFIG_KEYS = [
  'difficulty',
  'max_tensor_dim',
  'pool_strategy',
  'hexchain_difficulty',
  'challenge_ttl_s',
] as const;

export const AdminConfigRequestSchema = Type.Object(
  {
    difficulty: Type.Optional(Difficulty),
    max_tensor_dim: Type.Optional(MaxTensorDim),
    pool_strategy: Type.Optional(PoolStrategySchema),
    hexchain_difficulty: Type.Optional(HexchainDifficulty),
    challenge_ttl_s: Type.Optional(ChallengeTtl),
  },
  {
    title: 'AdminConfigRequest',
    description:
      'POST /admin/config body (admin bearer token): at least one setting; the others keep their values. Applied at once to new challenges, never to issued ones.',
    anyOf: CONFIG_KEYS.map((key) => ({ type: 'object', required: [key] })),
  },
);
export type AdminConfigRequest = Static<typeof AdminConfigRequestSchema>;

export const AdminConfigSchema = Type.Object(
  {
    difficulty: Difficulty,
    max_tensor_dim: MaxTensorDim,
    pool_strategy: PoolStrategySchema,
    hexchain_difficulty: HexchainDifficulty,
    challenge_ttl_s: ChallengeTtl,
  },
  { title: 'AdminConfig', description: 'The effective runtime configuration.' },
);
export type AdminConfig = Static<typeof AdminConfigSchema>;

export const AdminConfigResultSchema = Type.Object(
  {
    applied: Type.Literal(true, {
      description: 'Always true; invalid settings are a 400 error and change nothing.',
    }),
    config: AdminConfigSchema,
  },
  {
    title: 'AdminConfigResult',
    description: 'POST /admin/config response: every effective value after the change.',
  },
);
export type AdminConfigResult = Static<typeof AdminConfigResultSchema>;
