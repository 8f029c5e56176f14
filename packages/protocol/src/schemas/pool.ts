import Type, { type Static } from 'typebox';
import {
  AmountSchema,
  CoordSchema,
  Hex32Schema,
  nullable,
  PublicKeyHexSchema,
  SafeUintSchema,
  TokenSymbolSchema,
  UnixSecondsSchema,
  withDescription,
} from './common.js';
import { HexSubmitResultSchema } from './hexchain.js';

/**
 * Mining pool schemas (docs/protocol.md sections 4.13 to 4.16): a share's result, a pool
 * block and a member's statistics. A share is sent as a HexSubmitRequest to
 * POST /api/hexchain/pool/share.
 */

const Count = (description: string) => withDescription(SafeUintSchema, description);

export const ShareDifficultySchema = withDescription(
  SafeUintSchema,
  'A share difficulty: expected hashes per share, in [16, block difficulty]; the share target is floor((2^256 - 1) / share_difficulty).',
);

export const PoolShareResultSchema = Type.Object(
  {
    accepted: Type.Literal(true, { description: 'Always true; refused shares are error responses.' }),
    kind: Type.Enum(['share', 'block'], {
      type: 'string',
      description:
        'share: counted in the PPLNS window; block: it also met the block target and was accepted for the pool.',
    }),
    share_difficulty: withDescription(
      ShareDifficultySchema,
      'The difficulty this share was credited with (its weight in the window).',
    ),
    next_share_difficulty: withDescription(
      ShareDifficultySchema,
      "The member's share difficulty for challenges issued from now on (vardiff).",
    ),
    pow_hash: withDescription(Hex32Schema, 'The share hash.'),
    block: nullable(HexSubmitResultSchema, 'The accepted block when kind is block; null otherwise.'),
  },
  { title: 'PoolShareResult', description: 'POST /api/hexchain/pool/share response.' },
);
export type PoolShareResult = Static<typeof PoolShareResultSchema>;

export const PoolBlockSchema = Type.Object(
  {
    block_hash: withDescription(Hex32Schema, 'The block.'),
    coord: withDescription(CoordSchema, 'Its lattice cell.'),
    height: Count('Its height.'),
    finder: withDescription(PublicKeyHexSchema, 'The member whose share was the block.'),
    reward: withDescription(AmountSchema, 'The block reward, in PTM.'),
    fee: withDescription(AmountSchema, 'The pool fee kept from it, in PTM.'),
    window: Count('The PPLNS window N the reward was split over, in difficulty units.'),
    payees: Count('How many members were paid.'),
    found_at: withDescription(UnixSecondsSchema, 'When it was accepted.'),
  },
  { title: 'PoolBlock', description: 'A block found by the pool and paid out by PPLNS.' },
);
export type PoolBlock = Static<typeof PoolBlockSchema>;

export const PoolMemberSchema = Type.Object(
  {
    pubkey: withDescription(PublicKeyHexSchema, 'The key.'),
    member: Type.Boolean({ description: 'Whether the key is a member now.' }),
    stake: withDescription(AmountSchema, 'Stake held by the pool for it, in PTM (0 when not a member).'),
    joined_at: nullable(UnixSecondsSchema, 'When it joined (null when not a member).'),
    share_difficulty: nullable(
      ShareDifficultySchema,
      'Its share difficulty for new challenges (null before its first pooled challenge).',
    ),
    shares_accepted: Count('Shares accepted (including blocks).'),
    shares_stale: Count('Valid shares that came after their challenge expired or their cell was taken.'),
    shares_rejected: Count('Shares refused as invalid (forged, below target, duplicate...).'),
    blocks_found: Count('Pool blocks this member found.'),
    last_share_at: nullable(UnixSecondsSchema, 'When its last share was accepted.'),
    window_weight: Count(
      'Its weight in the current PPLNS window, in difficulty units at the current block difficulty (its score x D).',
    ),
    estimated_payout: withDescription(
      AmountSchema,
      'What it would be paid if the pool found a block now (PPLNS over the current window), in PTM.',
    ),
    paid_total: withDescription(AmountSchema, 'Everything paid to it by pool_payout entries, in PTM.'),
    token: withDescription(TokenSymbolSchema, 'PTM.'),
  },
  { title: 'PoolMember', description: 'GET /pool/members/:pubkey: a pool member and its earnings.' },
);
export type PoolMember = Static<typeof PoolMemberSchema>;
