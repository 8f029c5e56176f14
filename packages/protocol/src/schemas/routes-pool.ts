import { PubkeyParamsSchema } from './common.js';
import { HexSubmitRequestSchema } from './hexchain.js';
import { PoolMemberSchema, PoolShareResultSchema } from './pool.js';
import { defineRoutes, ERRORS } from './route-table.js';

export const poolRoutes = defineRoutes({
  // -------------------------------------------------------------------------------------------
  // Validator: mining pool shares and members (GET /pool, /pool/status, join and leave are in
  // routes-validator.ts and routes-economy.ts)
  // -------------------------------------------------------------------------------------------
  poolShare: {
    service: 'validator',
    method: 'POST',
    url: '/api/hexchain/pool/share',
    operationId: 'poolShare',
    summary: "Submit a share: a v4.1 block header meeting the member's share target",
    tags: ['pool'],
    auth: 'none',
    version: '4.1',
    schema: { body: HexSubmitRequestSchema, response: { 200: PoolShareResultSchema, ...ERRORS } },
  },
  getPoolMember: {
    service: 'validator',
    method: 'GET',
    url: '/pool/members/:pubkey',
    operationId: 'getPoolMember',
    summary: 'A pool member: stake, share difficulty, share counts, estimated and paid earnings',
    tags: ['pool'],
    auth: 'none',
    version: 'any',
    schema: { params: PubkeyParamsSchema, response: { 200: PoolMemberSchema, ...ERRORS } },
  },
});
