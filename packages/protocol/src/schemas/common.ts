import Type, { type Static, type TArray, type TSchema } from 'typebox';
import { LATTICE_RADIUS_MAX } from '../hexchain/constants.js';
import { DEVICE_TYPE_INPUTS, DEVICE_TYPES } from '../tensor/devices.js';
import { TOKEN_SYMBOL_PATTERN } from '../tokens.js';

/**
 * Wire primitives shared by every schema. Each one is exported as a schema (`XxxSchema`) and,
 * unless the package already defines that domain type (TokenSymbol, DeviceType, Coord), as its
 * static type (`Xxx`). Object fields use `withDescription(Primitive, '...')` so that every field
 * carries its own description into the OpenAPI document while keeping the primitive's checks.
 *
 * Conventions (docs/wire.md): timestamps are Unix seconds; durations are seconds unless the
 * field name ends in `_ms`; token amounts and prices are decimal strings; hashes and public keys
 * are lowercase hex; signatures in bodies are arrays of 64 byte integers.
 */

/**
 * A copy of `schema` with its own `description` (and optional extra annotations). The copy keeps
 * TypeBox's non-enumerable metadata, so its static type and runtime checks are those of `schema`.
 */
export function withDescription<T extends TSchema>(
  schema: T,
  description: string,
  annotations?: Record<string, unknown>,
): T {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as T;
  Object.assign(copy, annotations, { description });
  return copy;
}

/** Largest integer that JSON numbers carry exactly: 2^53 - 1. */
export const MAX_SAFE_UINT = Number.MAX_SAFE_INTEGER;
/** Largest page a listing returns. */
export const MAX_PAGE_LIMIT = 500;
/** Page size when `limit` is omitted. */
export const DEFAULT_PAGE_LIMIT = 100;

export const AMOUNT_PATTERN = '^(0|[1-9][0-9]*)(\\.[0-9]+)?$';
export const SIGNED_AMOUNT_PATTERN = '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$';
export const PRICE_PATTERN = '^(0|[1-9][0-9]*)(\\.[0-9]{1,18})?$';
export const ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$';
export const URL_PATTERN = '^https?://[^\\s]+$';

// ---------------------------------------------------------------------------------------------
// Hex, keys, signatures
// ---------------------------------------------------------------------------------------------

export const Hex32Schema = Type.String({
  pattern: '^[0-9a-f]{64}$',
  minLength: 64,
  maxLength: 64,
  description: '32 bytes as 64 lowercase hex digits.',
  examples: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
});
export type Hex32 = Static<typeof Hex32Schema>;

export const PublicKeyHexSchema = Type.String({
  pattern: '^[0-9a-f]{64}$',
  minLength: 64,
  maxLength: 64,
  description: 'An ed25519 public key: 32 bytes as 64 lowercase hex digits.',
  examples: ['d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'],
});
export type PublicKeyHex = Static<typeof PublicKeyHexSchema>;

/**
 * The pattern of a module account: `@` and a lowercase name, optionally `:` and a qualifier
 * (`@stake`, `@reserve`, `@fees`, `@vault`, `@market`, `@pool`, `@pool:rewards`, `@pool:fees`,
 * `@swap:PTM/USDC`). Module accounts hold the economy's own funds; they can never be keys.
 */
export const MODULE_ACCOUNT_PATTERN = '^@[a-z][a-z0-9_]{0,31}(:[A-Za-z0-9_/-]{1,40})?$';

export const AccountSchema = Type.String({
  pattern: `^([0-9a-f]{64}|${MODULE_ACCOUNT_PATTERN.slice(1, -1)})$`,
  minLength: 2,
  maxLength: 74,
  description:
    "A ledger account: an ed25519 public key (64 lowercase hex digits), or a module account holding the economy's own funds: `@` and a lowercase name, optionally `:` and a qualifier (@stake, @reserve, @fees, @vault, @market, @pool, @pool:rewards, @pool:fees, @swap:PTM/USDC).",
  examples: ['d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', '@pool:rewards'],
});
export type Account = Static<typeof AccountSchema>;

export const Hex8Schema = Type.String({
  pattern: '^[0-9a-f]{16}$',
  minLength: 16,
  maxLength: 16,
  description: '8 bytes (64 bits) as 16 lowercase hex digits.',
  examples: ['a3f1c09e5b7d2e48'],
});
export type Hex8 = Static<typeof Hex8Schema>;

export const SignatureHexSchema = Type.String({
  pattern: '^[0-9a-f]{128}$',
  minLength: 128,
  maxLength: 128,
  description: 'An ed25519 signature: 64 bytes as 128 lowercase hex digits.',
});
export type SignatureHex = Static<typeof SignatureHexSchema>;

/** Immutable: a client may pass a `readonly number[]`. */
export const SignatureBytesSchema = Type.Immutable(
  Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), {
    minItems: 64,
    maxItems: 64,
    description: 'An ed25519 signature as an array of exactly 64 byte integers (0..255).',
  }),
);
export type SignatureBytes = Static<typeof SignatureBytesSchema>;

// ---------------------------------------------------------------------------------------------
// Numbers and time
// ---------------------------------------------------------------------------------------------

export const SafeUintSchema = Type.Integer({
  minimum: 0,
  maximum: MAX_SAFE_UINT,
  description: 'An integer in [0, 2^53 - 1], the range a JSON number carries exactly.',
});
export type SafeUint = Static<typeof SafeUintSchema>;

export const UnixSecondsSchema = Type.Integer({
  minimum: 0,
  maximum: MAX_SAFE_UINT,
  description: 'A point in time as whole seconds since the Unix epoch (UTC). Never milliseconds.',
  examples: [1767225600],
});
export type UnixSeconds = Static<typeof UnixSecondsSchema>;

/** A ratio that is an exact multiple of 1/65536 in [0, 1]: round-trips through JSON exactly. */
export const Q16RatioSchema = Type.Number({
  minimum: 0,
  maximum: 1,
  multipleOf: 1 / 65536,
  description:
    'A ratio in [0, 1] that is an exact multiple of 1/65536 (a 16.16 fixed-point fraction), so its decimal form round-trips through JSON without rounding.',
});
export type Q16Ratio = Static<typeof Q16RatioSchema>;

/** A fraction such as a fee or an annual rate: a number in [0, 1]. */
export const FractionSchema = Type.Number({
  minimum: 0,
  maximum: 1,
  description: 'A fraction in [0, 1], e.g. 0.01 for 1 %. Informative; exact values are decimal strings.',
});
export type Fraction = Static<typeof FractionSchema>;

// ---------------------------------------------------------------------------------------------
// Money
// ---------------------------------------------------------------------------------------------

export const AmountSchema = Type.String({
  pattern: AMOUNT_PATTERN,
  minLength: 1,
  maxLength: 40,
  description:
    'A non-negative token amount as a decimal string in whole token units (no exponent, no sign, no leading zeros). At most as many decimals as the token has (PTM 9, SOL 9, USDC 6); that limit is checked in code (invalid_amount).',
  examples: ['12.5', '0', '0.000000001'],
});
export type Amount = Static<typeof AmountSchema>;

export const SignedAmountSchema = Type.String({
  pattern: SIGNED_AMOUNT_PATTERN,
  minLength: 1,
  maxLength: 41,
  description: 'A token amount that may be negative: an Amount with an optional leading "-" (a debit).',
  examples: ['-3.25', '100'],
});
export type SignedAmount = Static<typeof SignedAmountSchema>;

export const PriceSchema = Type.String({
  pattern: PRICE_PATTERN,
  minLength: 1,
  maxLength: 48,
  description: 'A non-negative price as a decimal string with at most 18 decimals.',
  examples: ['0.042', '1'],
});
export type Price = Static<typeof PriceSchema>;

export const TokenSymbolSchema = Type.String({
  pattern: TOKEN_SYMBOL_PATTERN,
  minLength: 2,
  maxLength: 10,
  description:
    'A token symbol: 2 to 10 uppercase letters or digits. Listed tokens: PTM (mining reward token, 9 decimals), SOL (native coin, 9), USDC (6); others are rejected with unknown_token.',
  examples: ['PTM', 'SOL', 'USDC'],
});

export const TokenAmountSchema = Type.Object(
  {
    token: withDescription(TokenSymbolSchema, 'The token symbol.'),
    amount: withDescription(AmountSchema, 'The amount, in whole units of `token`.'),
  },
  { title: 'TokenAmount', description: 'An amount of one token.' },
);
export type TokenAmount = Static<typeof TokenAmountSchema>;

// ---------------------------------------------------------------------------------------------
// Identifiers and strings
// ---------------------------------------------------------------------------------------------

export const IdSchema = Type.String({
  pattern: ID_PATTERN,
  minLength: 1,
  maxLength: 128,
  description: 'An opaque identifier assigned by the server: 1 to 128 characters from [A-Za-z0-9_-].',
});
export type Id = Static<typeof IdSchema>;

export const DeviceTypeSchema = Type.Enum(DEVICE_TYPES, {
  type: 'string',
  description:
    'The kind of device that mines: native (a CPU process), esp32 or esp8266 (a microcontroller board; challenges are sized for it).',
});

/** A device type in a request: a canonical type or a documented alias (DEVICE_TYPE_ALIASES). */
export const DeviceTypeInputSchema = Type.Enum(DEVICE_TYPE_INPUTS, {
  type: 'string',
  description:
    'The kind of device that mines: native (a CPU process), esp32 or esp8266 (a microcontroller board; challenges are sized for it). Alias accepted on input: cpu (= native); answers name the canonical type.',
});

export const SlotHashSchema = Type.String({
  pattern: '^[^\\x00-\\x1f\\x7f]+$',
  minLength: 1,
  maxLength: 128,
  description:
    'The hash (or any identifier) of the chain slot the miner works on: 1 to 128 characters of any script (no control characters); only SHA-256 of its UTF-8 bytes enters consensus.',
});
export type SlotHash = Static<typeof SlotHashSchema>;

export const UrlSchema = Type.String({
  pattern: URL_PATTERN,
  maxLength: 2048,
  description: 'An absolute http(s) URL, at most 2048 characters.',
});
export type Url = Static<typeof UrlSchema>;

export const ProtocolVersionSchema = Type.String({
  pattern: '^[0-9]{1,3}\\.[0-9]{1,3}$',
  maxLength: 7,
  description: 'A protocol version, MAJOR.MINOR, e.g. "4.0" or "4.1".',
});
export type ProtocolVersion = Static<typeof ProtocolVersionSchema>;

// ---------------------------------------------------------------------------------------------
// Lattice coordinates (v4.1)
// ---------------------------------------------------------------------------------------------

const CoordComponent = Type.Integer({ minimum: -LATTICE_RADIUS_MAX, maximum: LATTICE_RADIUS_MAX });

export const CoordSchema = Type.Object(
  {
    q: withDescription(CoordComponent, 'Cube coordinate q, an integer in [-1048576, 1048576].'),
    r: withDescription(CoordComponent, 'Cube coordinate r, an integer in [-1048576, 1048576].'),
    s: withDescription(CoordComponent, 'Cube coordinate s, an integer in [-1048576, 1048576].'),
  },
  {
    title: 'Coord',
    description:
      'A cell of the hexagonal lattice in cube coordinates. q + r + s must equal 0; that rule is checked in code (invalid_coordinate), not by the schema.',
  },
);

// ---------------------------------------------------------------------------------------------
// Pagination
// ---------------------------------------------------------------------------------------------

export const PageLimitSchema = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE_LIMIT,
  default: DEFAULT_PAGE_LIMIT,
  description: 'How many items to return, 1 to 500 (default 100).',
});

export const CursorSchema = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "An opaque cursor from a previous page's next_cursor; omit it for the first page.",
});
export type Cursor = Static<typeof CursorSchema>;

export const NextCursorSchema = Type.Union([CursorSchema, Type.Null()], {
  description: 'Pass as `cursor` to get the next page; null on the last page.',
});

export const PaginationQuerySchema = Type.Object(
  {
    limit: Type.Optional(PageLimitSchema),
    cursor: Type.Optional(CursorSchema),
  },
  { title: 'PaginationQuery', description: 'Query parameters of a paginated listing.' },
);
export type PaginationQuery = Static<typeof PaginationQuerySchema>;

/**
 * The properties of a page envelope: `{ [key]: item[] (at most 500), next_cursor }`. Spread into
 * `Type.Object` and add fields (such as `total`) as needed.
 */
export function pageProperties<const K extends string, T extends TSchema>(
  key: K,
  item: T,
  description: string,
): { [P in K]: TArray<T> } & { next_cursor: typeof NextCursorSchema } {
  return {
    [key]: Type.Array(item, { maxItems: MAX_PAGE_LIMIT, description }),
    next_cursor: NextCursorSchema,
  } as { [P in K]: TArray<T> } & { next_cursor: typeof NextCursorSchema };
}

/** Makes `schema` nullable (`anyOf [schema, null]`) with its own description. */
export function nullable<T extends TSchema>(schema: T, description: string) {
  return Type.Union([schema, Type.Null()], { description });
}

// ---------------------------------------------------------------------------------------------
// Path parameters and headers
// ---------------------------------------------------------------------------------------------

export const PubkeyParamsSchema = Type.Object(
  { pubkey: withDescription(PublicKeyHexSchema, 'The public key, 64 lowercase hex digits.') },
  { title: 'PubkeyParams', description: 'Path parameters of a route addressed by public key.' },
);
export type PubkeyParams = Static<typeof PubkeyParamsSchema>;

/**
 * The headers of a signed request (see src/signed-request.ts). Documented here for OpenAPI and
 * clients; the signature middleware checks them and answers signature_required /
 * signature_invalid / request_expired / request_replayed, so routes do not attach this schema.
 */
export const SignedRequestHeadersSchema = Type.Object(
  {
    'x-tm-pubkey': withDescription(
      PublicKeyHexSchema,
      'The public key the request acts for (64 lowercase hex).',
    ),
    'x-tm-timestamp': Type.String({
      pattern: '^(0|[1-9][0-9]{0,15})$',
      maxLength: 16,
      description:
        'When the request was signed, in MILLISECONDS since the Unix epoch (the one millisecond value on the wire); must be within 60 s of the server clock.',
    }),
    'x-tm-nonce': Type.String({
      pattern: '^[0-9a-f]{32}$',
      minLength: 32,
      maxLength: 32,
      description: 'A random 16-byte nonce, 32 lowercase hex digits; never reused within the replay window.',
    }),
    'x-tm-signature': withDescription(
      SignatureHexSchema,
      'ed25519 signature by x-tm-pubkey over signedRequestMessage (method, path, SHA-256 of the body, timestamp, nonce, public key), 128 lowercase hex.',
    ),
  },
  {
    title: 'SignedRequestHeaders',
    description: 'Headers carried by every operation that acts for a public key (auth: signed).',
  },
);
