import Type, { type Static } from 'typebox';
import { LATTICE_RADIUS_MAX } from '../hexchain/constants.js';
import {
  AmountSchema,
  CoordSchema,
  CursorSchema,
  Hex32Schema,
  IdSchema,
  nullable,
  PageLimitSchema,
  PublicKeyHexSchema,
  pageProperties,
  SafeUintSchema,
  SignatureBytesSchema,
  SlotHashSchema,
  TokenSymbolSchema,
  UnixSecondsSchema,
  withDescription,
} from './common.js';

/** v4.1 hexchain schemas: the lattice challenge, block submission, lattice state and records. */

const Count = (description: string) => withDescription(SafeUintSchema, description);

export const HexChallengeRequestSchema = Type.Object(
  {
    slot: withDescription(SafeUintSchema, 'The chain slot height the miner works on.'),
    slot_hash: withDescription(SlotHashSchema, 'The hash of that slot.'),
    miner_pubkey: Type.Optional(
      withDescription(
        PublicKeyHexSchema,
        'The miner that will mine the block. Optional; when given it must be registered (miner_not_registered) and the challenge is reserved for it.',
      ),
    ),
  },
  { title: 'HexChallengeRequest', description: 'POST /api/hexchain/challenge body.' },
);
export type HexChallengeRequest = Static<typeof HexChallengeRequestSchema>;

export const HexChallengeParentSchema = Type.Object(
  {
    coord: withDescription(CoordSchema, 'The neighbouring coordinate.'),
    block_hash: withDescription(
      Hex32Schema,
      'Hash of the block at that coordinate; committed through parents_root in the challenge hash, which the new block header contains.',
    ),
    depth: Count('Depth of that block.'),
  },
  { title: 'HexChallengeParent', description: 'An occupied neighbour of the target coordinate.' },
);
export type HexChallengeParent = Static<typeof HexChallengeParentSchema>;

export const HexChallengeSchema = Type.Object(
  {
    id: withDescription(IdSchema, 'Unique challenge identifier; the submission echoes it as challenge_id.'),
    coord: withDescription(CoordSchema, 'The free lattice coordinate the block must occupy.'),
    slot: withDescription(SafeUintSchema, 'The slot from the request.'),
    version: Type.Literal('4.1', { description: 'Protocol version of this challenge.' }),
    slot_hash: withDescription(SlotHashSchema, 'The slot hash from the request.'),
    challenge_hash: withDescription(Hex32Schema, 'Hash of the challenge, committed in the block header.'),
    target: withDescription(
      Hex32Schema,
      'The proof-of-work target as a 256-bit big-endian number in 64 hex digits: pow_hash, read big-endian, must be at or below it.',
    ),
    difficulty: Count('Expected number of hashes to find one block at this target.'),
    parents: Type.Array(HexChallengeParentSchema, {
      minItems: 1,
      maxItems: 6,
      description: 'The occupied neighbours of coord (1 to 6), whose block hashes the header commits.',
    }),
    depth: Count('The depth the block will get: 1 + the greatest depth among parents.'),
    header_version: Type.Integer({
      minimum: 0,
      maximum: 0xffff_ffff,
      description:
        'The u32 version field of the block header the miner must hash (0x00040100 = 262400 for v4.1).',
    }),
    issued_at: withDescription(UnixSecondsSchema, 'When the challenge was issued (Unix seconds).'),
    expires_at: withDescription(
      UnixSecondsSchema,
      'After this time (Unix seconds) submissions are rejected (challenge_expired).',
    ),
    share_difficulty: Type.Optional(
      withDescription(
        SafeUintSchema,
        "Pool members only (challenge requested with the member's miner_pubkey while the pool is on): the member's share difficulty for this challenge (vardiff).",
      ),
    ),
    share_target: Type.Optional(
      withDescription(
        Hex32Schema,
        'Pool members only: floor((2^256 - 1) / share_difficulty) in 64 hex digits; every hash at or below it is a share for POST /api/hexchain/pool/share.',
      ),
    ),
  },
  { title: 'HexChallenge', description: 'A v4.1 lattice challenge (POST /api/hexchain/challenge response).' },
);
export type HexChallenge = Static<typeof HexChallengeSchema>;

export const HexBlockSubmissionSchema = Type.Object(
  {
    coord: withDescription(CoordSchema, "The coordinate; must be the challenge's coord."),
    pow_hash: withDescription(
      Hex32Schema,
      'SHA-256 of the block header with nonce; recomputed by the validator.',
    ),
    nonce: withDescription(SafeUintSchema, 'The nonce that makes pow_hash meet the target.'),
    miner_pubkey: withDescription(
      PublicKeyHexSchema,
      'The registered miner, committed in the header; receives the reward.',
    ),
  },
  { title: 'HexBlockSubmission', description: 'The block in a submission.' },
);
export type HexBlockSubmission = Static<typeof HexBlockSubmissionSchema>;

export const HexSubmitRequestSchema = Type.Object(
  {
    challenge_id: withDescription(IdSchema, 'The challenge this block answers.'),
    block: HexBlockSubmissionSchema,
    signature: Type.Optional(
      withDescription(
        SignatureBytesSchema,
        'ed25519 signature by miner_pubkey over submissionMessage(challenge_id, header). Required by default (signature_required); a validator may accept unsigned blocks from legacy clients, but a signature present is always checked (signature_invalid).',
      ),
    ),
  },
  { title: 'HexSubmitRequest', description: 'POST /api/hexchain/submit body.' },
);
export type HexSubmitRequest = Static<typeof HexSubmitRequestSchema>;

export const HexSubmitResultSchema = Type.Object(
  {
    accepted: Type.Boolean({
      description: 'True: the block was accepted. Rejections are 4xx ErrorResponse bodies.',
    }),
    depth: Count('The depth of the accepted block.'),
    block_hash: withDescription(Hex32Schema, 'Hash of the accepted block (its identity in the lattice).'),
    coord: withDescription(CoordSchema, 'The coordinate the block now occupies.'),
    reward: withDescription(
      AmountSchema,
      "What this block credited to miner_pubkey, in whole units of token: the block reward for a solo block; for a block of the pool (pool work or a member's block, protocol 4.13), the finder's own PPLNS payout (pool.finder_payout), the rest of the block reward going to the other members and the pool fee.",
    ),
    token: withDescription(TokenSymbolSchema, 'The reward token (PTM).'),
    pool: Type.Optional(
      Type.Object(
        {
          reward: withDescription(
            AmountSchema,
            'The block reward, paid to the pool (module account @pool:rewards).',
          ),
          fee: withDescription(AmountSchema, "The pool's fee out of it (to @pool:fees)."),
          finder_payout: withDescription(
            AmountSchema,
            "The finder's own PPLNS payout, rounding remainder included (equal to reward above).",
          ),
          payees: Count('Members paid out of this block (the finder included when it had weight).'),
          window: Count('The PPLNS window, in difficulty units at the block difficulty (protocol 4.15).'),
        },
        {
          description:
            "Present only when the block was the pool's (pool work or a member's block, protocol 4.13), paid by the pool (protocol 4.15): the block reward split by PPLNS.",
        },
      ),
    ),
  },
  { title: 'HexSubmitResult', description: 'POST /api/hexchain/submit response.' },
);
export type HexSubmitResult = Static<typeof HexSubmitResultSchema>;

export const HexStatusSchema = Type.Object(
  {
    occupied: Count('Coordinates occupied by a block.'),
    max_depth: Count('Greatest block depth in the lattice.'),
    depth_distribution: Type.Array(
      Type.Object(
        { depth: Count('A block depth.'), count: Count('Blocks at that depth.') },
        { description: 'Blocks at one depth.' },
      ),
      {
        maxItems: 4096,
        description: 'Number of blocks per depth, ascending depth; depths with no block are left out.',
      },
    ),
    frontier_size: Count('Free coordinates adjacent to at least one block (where challenges are issued).'),
    difficulty: Count('Current difficulty: expected hashes per block.'),
    target: withDescription(Hex32Schema, 'Current target, 256-bit big-endian.'),
    open_challenges: Count(
      'Issued challenges that have not expired (now <= expires_at, in Unix seconds), answered or not.',
    ),
    block_interval_s: Type.Number({
      minimum: 0,
      description: 'Target mean time between blocks in seconds (may be fractional); retargeting aims at it.',
    }),
    blocks_until_retarget: Count('Blocks still to be accepted before the next difficulty adjustment.'),
    last_block_at: nullable(UnixSecondsSchema, 'When the last block was accepted; null before the first.'),
    genesis_hash: withDescription(
      Hex32Schema,
      'Hash of the genesis block at (0, 0, 0) (GENESIS_BLOCK_HASH).',
    ),
  },
  { title: 'HexStatus', description: 'GET /api/hexchain/status: lattice state.' },
);
export type HexStatus = Static<typeof HexStatusSchema>;

export const HexBlockSchema = Type.Object(
  {
    coord: withDescription(CoordSchema, 'The coordinate the block occupies.'),
    block_hash: withDescription(Hex32Schema, 'Hash of the block.'),
    pow_hash: withDescription(
      Hex32Schema,
      'The proof-of-work hash (at or below the target it was mined at).',
    ),
    depth: Count('Depth: 1 + the greatest depth among its parents; 0 for the genesis block.'),
    parents: Type.Array(CoordSchema, {
      minItems: 0,
      maxItems: 6,
      description:
        'Coordinates of the parent blocks, fixed when its challenge was issued and committed through parents_root in the challenge hash the header contains (empty for the genesis block).',
    }),
    miner_pubkey: withDescription(PublicKeyHexSchema, 'The miner that mined it.'),
    nonce: withDescription(SafeUintSchema, 'The nonce of the header.'),
    challenge_id: withDescription(IdSchema, 'The challenge it answered (a fixed id for the genesis block).'),
    slot: withDescription(SafeUintSchema, 'The slot of that challenge.'),
    difficulty: Count('The difficulty (expected hashes) it was mined at.'),
    timestamp: withDescription(UnixSecondsSchema, 'When the validator accepted it (Unix seconds).'),
  },
  { title: 'HexBlock', description: 'A block of the lattice.' },
);
export type HexBlock = Static<typeof HexBlockSchema>;

export const LatticeQuerySchema = Type.Object(
  {
    limit: Type.Optional(PageLimitSchema),
    cursor: Type.Optional(CursorSchema),
  },
  { title: 'LatticeQuery', description: 'GET /api/hexchain/lattice query.' },
);
export type LatticeQuery = Static<typeof LatticeQuerySchema>;

export const LatticePageSchema = Type.Object(
  {
    ...pageProperties(
      'blocks',
      HexBlockSchema,
      'Mined blocks in acceptance (height) order; the genesis block at the origin has no header and is not listed (see genesis_hash in the status).',
    ),
    total: Count('Number of blocks in the whole lattice.'),
  },
  { title: 'LatticePage', description: 'GET /api/hexchain/lattice: one page of all blocks.' },
);
export type LatticePage = Static<typeof LatticePageSchema>;

const PathCoord = (name: string) =>
  Type.Integer({
    minimum: -LATTICE_RADIUS_MAX,
    maximum: LATTICE_RADIUS_MAX,
    description: `Cube coordinate ${name}, a decimal integer in the path (q + r + s must be 0: invalid_coordinate).`,
  });

export const CoordParamsSchema = Type.Object(
  { q: PathCoord('q'), r: PathCoord('r'), s: PathCoord('s') },
  {
    title: 'CoordParams',
    description: 'Path parameters /:q/:r/:s. Path values are strings; the server coerces them to integers.',
  },
);
export type CoordParams = Static<typeof CoordParamsSchema>;
