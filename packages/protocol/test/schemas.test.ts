import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ERROR_CODES } from '../src/error-codes.js';
import * as schemas from '../src/schemas/index.js';
import {
  AdminConfigRequestSchema,
  AmountSchema,
  type Challenge,
  ChallengeRequestSchema,
  ChallengeSchema,
  CoordParamsSchema,
  CoordSchema,
  ErrorResponseSchema,
  HexChallengeSchema,
  HexSubmitRequestSchema,
  LedgerPageSchema,
  LockPeriodDaysSchema,
  PriceSchema,
  type Proof,
  ProofSchema,
  ROUTE_LIST,
  ROUTES,
  type RouteBody,
  type RouteParams,
  type RouteReply,
  routesOf,
  SignatureBytesSchema,
  SignedAmountSchema,
  SlotHashSchema,
  type SubmitRequest,
  SubmitRequestSchema,
  type SubmitResult,
  SubmitResultSchema,
  TokenSymbolSchema,
  WalletAddressSchema,
} from '../src/schemas/index.js';

const HASH = 'ab'.repeat(32);
const KEY = 'cd'.repeat(32);

function check(schema: TSchema, value: unknown): boolean {
  return Compile(schema).Check(value);
}

const challenge: Challenge = {
  challenge_id: 'c_01HZX3',
  id: 'c_01HZX3',
  hash: HASH,
  version: '4.0',
  slot: 123_456,
  slot_hash: '5Hd8kq3',
  device_type: 'native',
  operation_type: 'matmul',
  activation: 'relu',
  input_tensor: { shape: [2, 2], dtype: 'int8', data: [1, -2, 127, -128] },
  weight_shape: [2, 2],
  difficulty: 4,
  mml_threshold: 0.5,
  mml_threshold_q16: 32768,
  path_distance_max: 12,
  path_target: '00ff00ff00ff00ff',
  target_nonce: 16,
  expected_iterations: 16,
  issued_at: 1_767_225_600,
  expires_at: 1_767_225_660,
};

const proof: Proof = {
  challenge_id: 'c_01HZX3',
  challenge_hash: HASH,
  tensor_result_hash: HASH,
  mml_score: 0.25,
  path_signature: '00ff00ff00ff00fe',
  path_distance: 1,
  computation_nonce: 42,
  computation_hash: HASH,
  miner_pubkey: KEY,
};

/** Every exported `XxxSchema` value. */
const ALL_SCHEMAS = Object.entries(schemas as Record<string, unknown>).filter(
  (entry): entry is [string, TSchema] => entry[0].endsWith('Schema') && typeof entry[1] === 'object',
);

type JsonSchema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  maxLength?: number;
  maxItems?: number;
};

/** Visits every sub-schema with its JSON path. */
function walk(schema: JsonSchema, path: string, visit: (s: JsonSchema, path: string) => void): void {
  visit(schema, path);
  for (const [key, sub] of Object.entries(schema.properties ?? {})) walk(sub, `${path}.${key}`, visit);
  for (const sub of Object.values(schema.patternProperties ?? {})) walk(sub, `${path}[*]`, visit);
  if (schema.items) walk(schema.items, `${path}[]`, visit);
  for (const [i, sub] of (schema.anyOf ?? []).entries()) walk(sub, `${path}|${i}`, visit);
}

describe('schemas', () => {
  it('compiles every exported schema', () => {
    expect(ALL_SCHEMAS.length).toBeGreaterThan(80);
    for (const [name, schema] of ALL_SCHEMAS) {
      expect(() => Compile(schema), name).not.toThrow();
    }
  });

  it('serializes every schema to plain JSON Schema', () => {
    for (const [name, schema] of ALL_SCHEMAS) {
      const json = JSON.stringify(schema);
      expect(json.includes('"~'), name).toBe(false);
    }
  });

  it('gives every object property a description', () => {
    const missing: string[] = [];
    for (const [name, schema] of ALL_SCHEMAS) {
      walk(schema as JsonSchema, name, (s, path) => {
        for (const [key, sub] of Object.entries(s.properties ?? {})) {
          if (!sub.description) missing.push(`${path}.${key}`);
        }
      });
    }
    expect(missing).toEqual([]);
  });

  it('bounds every string and array a client can send', () => {
    const unbounded: string[] = [];
    for (const route of ROUTE_LIST) {
      for (const part of ['body', 'querystring', 'params'] as const) {
        const schema = route.schema[part];
        if (!schema) continue;
        walk(schema as JsonSchema, `${route.operationId}.${part}`, (s, path) => {
          const boundedByValue = s.enum !== undefined || s.const !== undefined;
          if (s.type === 'string' && s.maxLength === undefined && !boundedByValue) unbounded.push(path);
          if (s.type === 'array' && s.maxItems === undefined) unbounded.push(path);
        });
      }
    }
    expect(unbounded).toEqual([]);
  });

  it('accepts and ignores unknown properties in requests', () => {
    expect(check(ChallengeRequestSchema, { slot: 1, slot_hash: 'abc', legacy_field: true })).toBe(true);
  });
});

describe('primitives', () => {
  it.each(['0', '1', '12.5', '0.000000001', '1000000'])('Amount accepts %s', (amount) => {
    expect(check(AmountSchema, amount)).toBe(true);
  });

  it.each(['1e5', '-1', '01', '1.', '.5', '', ' 1', '1,5', '+1', 'NaN', '1'.repeat(41)])(
    'Amount rejects %j',
    (amount) => {
      expect(check(AmountSchema, amount)).toBe(false);
    },
  );

  it('Amount rejects a number', () => {
    expect(check(AmountSchema, 1)).toBe(false);
  });

  it('SignedAmount accepts a debit and rejects an exponent', () => {
    expect(check(SignedAmountSchema, '-3.25')).toBe(true);
    expect(check(SignedAmountSchema, '7')).toBe(true);
    expect(check(SignedAmountSchema, '-1e5')).toBe(false);
    expect(check(SignedAmountSchema, '--1')).toBe(false);
  });

  it('Price allows at most 18 decimals', () => {
    expect(check(PriceSchema, `0.${'1'.repeat(18)}`)).toBe(true);
    expect(check(PriceSchema, `0.${'1'.repeat(19)}`)).toBe(false);
  });

  it('TokenSymbol is 2 to 10 uppercase letters or digits', () => {
    expect(check(TokenSymbolSchema, 'PTM')).toBe(true);
    expect(check(TokenSymbolSchema, 'USDC')).toBe(true);
    expect(check(TokenSymbolSchema, 'ptm')).toBe(false);
    expect(check(TokenSymbolSchema, 'P')).toBe(false);
    expect(check(TokenSymbolSchema, 'ABCDEFGHIJK')).toBe(false);
  });

  it('SignatureBytes is exactly 64 bytes', () => {
    expect(check(SignatureBytesSchema, Array(64).fill(255))).toBe(true);
    expect(check(SignatureBytesSchema, Array(63).fill(0))).toBe(false);
    expect(check(SignatureBytesSchema, Array(65).fill(0))).toBe(false);
    expect(check(SignatureBytesSchema, [...Array(63).fill(0), 256])).toBe(false);
    expect(check(SignatureBytesSchema, [...Array(63).fill(0), -1])).toBe(false);
    expect(check(SignatureBytesSchema, [...Array(63).fill(0), 1.5])).toBe(false);
  });

  it('SlotHash is 1 to 128 characters of any script, without control characters', () => {
    expect(check(SlotHashSchema, 'a')).toBe(true);
    expect(check(SlotHashSchema, '~'.repeat(128))).toBe(true);
    expect(check(SlotHashSchema, '')).toBe(false);
    expect(check(SlotHashSchema, 'a'.repeat(129))).toBe(false);
    expect(check(SlotHashSchema, 'tab\there')).toBe(false);
    expect(check(SlotHashSchema, 'créneau-✓')).toBe(true);
    expect(check(SlotHashSchema, 'a\u007fb')).toBe(false);
  });

  it('Coord bounds each component but leaves q + r + s = 0 to code', () => {
    expect(check(CoordSchema, { q: 1, r: -1, s: 0 })).toBe(true);
    expect(check(CoordSchema, { q: 1, r: 1, s: 1 })).toBe(true);
    expect(check(CoordSchema, { q: 1_048_577, r: -1_048_577, s: 0 })).toBe(false);
    expect(check(CoordSchema, { q: 0.5, r: -0.5, s: 0 })).toBe(false);
  });

  it('coerces path coordinates given as strings', () => {
    const params = Value.Convert(CoordParamsSchema, { q: '-3', r: '1', s: '2' });
    expect(params).toEqual({ q: -3, r: 1, s: 2 });
    expect(check(CoordParamsSchema, params)).toBe(true);
    expect(check(CoordParamsSchema, Value.Convert(CoordParamsSchema, { q: 'x', r: '1', s: '2' }))).toBe(
      false,
    );
  });

  it('lock periods are 0, 7 and 30 days', () => {
    expect([0, 7, 30].map((d) => check(LockPeriodDaysSchema, d))).toEqual([true, true, true]);
    expect(check(LockPeriodDaysSchema, 14)).toBe(false);
  });

  it('wallet addresses are base58', () => {
    expect(check(WalletAddressSchema, '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T')).toBe(true);
    expect(check(WalletAddressSchema, '0Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T')).toBe(false);
  });
});

describe('v4.0 challenge and proof', () => {
  it('accepts a valid challenge response', () => {
    expect(check(ChallengeSchema, challenge)).toBe(true);
  });

  it('keeps id and challenge_id both required', () => {
    const { id: _id, ...withoutId } = challenge;
    expect(check(ChallengeSchema, withoutId)).toBe(false);
  });

  it('accepts mml values that are multiples of 1/65536 in [0, 1]', () => {
    for (const mml of [0, 1, 0.5, 1 / 65536, 65535 / 65536, 12345 / 65536]) {
      expect(check(ProofSchema, { ...proof, mml_score: mml }), String(mml)).toBe(true);
    }
  });

  it('rejects mml values outside [0, 1] or off the 1/65536 grid', () => {
    for (const mml of [-1 / 65536, 1 + 1 / 65536, 0.1, 0.3, 1 / 131072]) {
      expect(check(ProofSchema, { ...proof, mml_score: mml }), String(mml)).toBe(false);
    }
    expect(check(ChallengeSchema, { ...challenge, mml_threshold: 0.1 })).toBe(false);
    expect(check(ChallengeSchema, { ...challenge, mml_threshold_q16: 65537 })).toBe(false);
  });

  it('rejects a proof with a 63-hex-digit hash', () => {
    expect(check(ProofSchema, { ...proof, challenge_hash: HASH.slice(1) })).toBe(false);
    expect(check(ProofSchema, { ...proof, tensor_result_hash: HASH.slice(1) })).toBe(false);
  });

  it('rejects uppercase hex, a short path signature and a distance above 64', () => {
    expect(check(ProofSchema, { ...proof, computation_hash: HASH.toUpperCase() })).toBe(false);
    expect(check(ProofSchema, { ...proof, path_signature: '00ff' })).toBe(false);
    expect(check(ProofSchema, { ...proof, path_distance: 65 })).toBe(false);
  });

  it('rejects a nonce beyond 2^53 - 1 and a negative nonce', () => {
    expect(check(ProofSchema, { ...proof, computation_nonce: Number.MAX_SAFE_INTEGER })).toBe(true);
    expect(check(ProofSchema, { ...proof, computation_nonce: 2 ** 53 })).toBe(false);
    expect(check(ProofSchema, { ...proof, computation_nonce: -1 })).toBe(false);
  });

  it('accepts an envelope with or without a 64-byte signature, and rejects 63 bytes', () => {
    expect(check(SubmitRequestSchema, { proof })).toBe(true);
    expect(check(SubmitRequestSchema, { proof, signature: Array(64).fill(7) })).toBe(true);
    expect(check(SubmitRequestSchema, { proof, signature: Array(63).fill(7) })).toBe(false);
  });

  it('accepts a v4.0 submit result with a 128-hex tx_sig', () => {
    const result: SubmitResult = {
      accepted: true,
      tx_sig: 'ef'.repeat(64),
      challenge_id: 'c_01HZX3',
      miner_pubkey: KEY,
      reward: '1.5',
      token: 'PTM',
      ledger_entry_id: 'l_1',
      accepted_at: 1767225600,
    };
    expect(check(SubmitResultSchema, result)).toBe(true);
    expect(check(SubmitResultSchema, { ...result, tx_sig: 'ef'.repeat(32) })).toBe(false);
  });

  it('defaults a missing device_type to native', () => {
    expect(Value.Default(ChallengeRequestSchema, { slot: 1, slot_hash: 'x' })).toEqual({
      slot: 1,
      slot_hash: 'x',
      device_type: 'native',
    });
  });
});

describe('v4.1 hexchain', () => {
  it('accepts a lattice challenge and a submission', () => {
    const hexChallenge = {
      id: 'h_1',
      coord: { q: 1, r: -1, s: 0 },
      slot: 9,
      version: '4.1',
      slot_hash: 'abc',
      challenge_hash: HASH,
      target: `00000fff${'f'.repeat(56)}`,
      difficulty: 1_048_576,
      parents: [{ coord: { q: 0, r: 0, s: 0 }, block_hash: HASH, depth: 0 }],
      depth: 1,
      header_version: 1,
      issued_at: 1_767_225_600,
      expires_at: 1_767_225_900,
    };
    expect(check(HexChallengeSchema, hexChallenge)).toBe(true);
    expect(check(HexChallengeSchema, { ...hexChallenge, target: [0, 0, 15] })).toBe(false);
    const submission = {
      challenge_id: 'h_1',
      block: { coord: { q: 1, r: -1, s: 0 }, pow_hash: HASH, nonce: 77, miner_pubkey: KEY },
    };
    expect(check(HexSubmitRequestSchema, submission)).toBe(true);
    expect(
      check(HexSubmitRequestSchema, {
        challenge_id: 'h_1',
        block: { coord: { q: 1, r: -1, s: 0 }, pow_hash: HASH },
      }),
    ).toBe(false);
  });
});

describe('economy and admin', () => {
  it('ledger amounts may be negative', () => {
    const page = {
      entries: [
        { id: 'e1', type: 'stake', amount: '-10', token: 'PTM', timestamp: 1, pubkey: KEY, ref: 's_1' },
        {
          id: 'e2',
          type: 'mining_reward',
          amount: '1.5',
          token: 'PTM',
          timestamp: 2,
          pubkey: KEY,
          ref: null,
        },
      ],
      next_cursor: null,
    };
    expect(check(LedgerPageSchema, page)).toBe(true);
  });

  it('admin config needs at least one known setting', () => {
    expect(check(AdminConfigRequestSchema, { difficulty: 5 })).toBe(true);
    expect(check(AdminConfigRequestSchema, { pool_strategy: 'pplns', challenge_ttl_s: 60 })).toBe(true);
    expect(check(AdminConfigRequestSchema, {})).toBe(false);
    expect(check(AdminConfigRequestSchema, { unknown: 1 })).toBe(false);
    expect(check(AdminConfigRequestSchema, { difficulty: 25 })).toBe(false);
    expect(check(AdminConfigRequestSchema, { hexchain_difficulty: 15 })).toBe(false);
  });
});

describe('errors', () => {
  it('accepts every code of the ERROR_CODES table and nothing else', () => {
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      const body = { statusCode: status, code, error: 'Error', message: 'm' };
      expect(check(ErrorResponseSchema, body), code).toBe(true);
    }
    expect(
      check(ErrorResponseSchema, { statusCode: 400, code: 'nope', error: 'Bad Request', message: 'm' }),
    ).toBe(false);
    expect(
      check(ErrorResponseSchema, {
        statusCode: 422,
        code: 'mml_above_threshold',
        error: 'Unprocessable Entity',
        message: 'mml_score 0.75 is above mml_threshold 0.5',
        details: { received: 0.75, threshold: 0.5 },
      }),
    ).toBe(true);
  });
});

/** Every endpoint the seed names, by service. */
const SEED_ENDPOINTS: ReadonlyArray<readonly [string, string, string]> = [
  ['validator', 'GET', '/health'],
  ['validator', 'GET', '/status'],
  ['validator', 'POST', '/challenge'],
  ['validator', 'POST', '/submit'],
  ['validator', 'GET', '/miners/:pubkey'],
  ['validator', 'GET', '/pool'],
  ['validator', 'POST', '/devices/register'],
  ['validator', 'GET', '/network/peers'],
  ['validator', 'POST', '/stake'],
  ['validator', 'POST', '/unstake'],
  ['validator', 'POST', '/claim'],
  ['validator', 'GET', '/stake/:pubkey'],
  ['validator', 'POST', '/swap/quote'],
  ['validator', 'POST', '/swap/execute'],
  ['validator', 'GET', '/swap/pools'],
  ['validator', 'POST', '/vault/deposit'],
  ['validator', 'POST', '/vault/withdraw'],
  ['validator', 'GET', '/vault/:pubkey'],
  ['validator', 'GET', '/marketplace/orders'],
  ['validator', 'POST', '/marketplace/order'],
  ['validator', 'GET', '/ledger/entries'],
  ['validator', 'GET', '/pool/status'],
  ['validator', 'POST', '/pool/join'],
  ['validator', 'POST', '/pool/leave'],
  ['validator', 'GET', '/admin/metrics'],
  ['validator', 'POST', '/admin/config'],
  ['validator', 'POST', '/api/hexchain/challenge'],
  ['validator', 'POST', '/api/hexchain/submit'],
  ['validator', 'GET', '/api/hexchain/status'],
  ['validator', 'GET', '/api/hexchain/lattice'],
  ['validator', 'GET', '/api/hexchain/lattice/:q/:r/:s'],
  ['status', 'POST', '/api/hexchain/challenge'],
  ['status', 'POST', '/api/hexchain/submit'],
  ['status', 'GET', '/api/hexchain/status'],
  ['status', 'GET', '/api/hexchain/lattice'],
  ['status', 'GET', '/api/hexchain/lattice/:q/:r/:s'],
  ['status', 'GET', '/api/live'],
  ['terminal', 'GET', '/api/health'],
  ['terminal', 'GET', '/api/x-auth/authorize'],
  ['terminal', 'GET', '/api/x-auth/callback'],
  ['terminal', 'POST', '/api/x-auth/claim'],
  ['terminal', 'POST', '/api/crypto/premium-purchase'],
  ['terminal', 'POST', '/api/crypto/no-ads-purchase'],
  ['hub', 'GET', '/api/games'],
  ['hub', 'GET', '/api/status/:gameId'],
  ['hub', 'GET', '/health'],
];

/** The seed's wildcard stubs of the terminal backend: at least one route under each. */
const SEED_PREFIXES = ['/api/staking/', '/api/swap/', '/api/vault/'];

describe('ROUTES', () => {
  it('keys every route by its own unique operationId', () => {
    for (const [key, route] of Object.entries(ROUTES)) expect(route.operationId).toBe(key);
    const ids = ROUTE_LIST.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
  });

  it('has one route per service, method and url', () => {
    const keys = ROUTE_LIST.map((r) => `${r.service} ${r.method} ${r.url}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('answers every error with ErrorResponse', () => {
    for (const route of ROUTE_LIST) {
      expect(route.schema.response['4xx'], route.operationId).toBe(ErrorResponseSchema);
      expect(route.schema.response['5xx'], route.operationId).toBe(ErrorResponseSchema);
      expect(route.schema.response[200] ?? route.schema.response[302], route.operationId).toBeDefined();
    }
  });

  it.each(SEED_ENDPOINTS)('serves the seed endpoint %s %s %s', (service, method, url) => {
    expect(ROUTE_LIST.some((r) => r.service === service && r.method === method && r.url === url)).toBe(true);
  });

  it.each(SEED_PREFIXES)('serves read-only terminal data under %s', (prefix) => {
    expect(routesOf('terminal').some((r) => r.method === 'GET' && r.url.startsWith(prefix))).toBe(true);
  });

  it('declares a params schema for every path parameter, and none without', () => {
    for (const route of ROUTE_LIST) {
      const names = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
      const params = route.schema.params as { properties?: Record<string, unknown> } | undefined;
      expect(Object.keys(params?.properties ?? {}).sort(), route.operationId).toEqual(names.sort());
    }
  });

  it('marks the v4.0 mining endpoints deprecated and v4.1 ones current', () => {
    expect(ROUTES.requestChallenge.deprecated).toBe(true);
    expect(ROUTES.submitProof.deprecated).toBe(true);
    expect(ROUTES.getStatus.deprecated).toBe(true);
    expect(ROUTE_LIST.filter((r) => r.version === '4.1').every((r) => r.deprecated !== true)).toBe(true);
  });

  it('requires a signature for every validator POST that acts for a pubkey', () => {
    for (const route of routesOf('validator')) {
      const body = route.schema.body as { properties?: Record<string, unknown> } | undefined;
      if (route.method === 'POST' && body?.properties && 'pubkey' in body.properties) {
        expect(route.auth, route.operationId).toBe('signed');
      }
    }
    expect(
      routesOf('validator')
        .filter((r) => r.url.startsWith('/admin/'))
        .every((r) => r.auth === 'admin'),
    ).toBe(true);
  });

  it('keeps precise schema types for the client', () => {
    expectTypeOf(ROUTES.submitProof.schema.body).toEqualTypeOf<typeof SubmitRequestSchema>();
    expectTypeOf<RouteBody<'submitProof'>>().toEqualTypeOf<SubmitRequest>();
    expectTypeOf<RouteReply<'submitProof'>>().toEqualTypeOf<SubmitResult>();
    expectTypeOf<RouteBody<'getHealth'>>().toEqualTypeOf<undefined>();
    expectTypeOf<RouteParams<'hexBlock'>>().toEqualTypeOf<{ q: number; r: number; s: number }>();
    expectTypeOf<RouteReply<'xAuthAuthorize'>>().toEqualTypeOf<null>();
    expectTypeOf<Static<typeof ProofSchema>['miner_pubkey']>().toEqualTypeOf<string>();
  });
});
