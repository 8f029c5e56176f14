import { PubkeyParamsSchema } from './common.js';
import { defineRoutes, ERRORS } from './route-table.js';
import {
  ChallengeRequestSchema,
  ChallengeSchema,
  DeviceRegisterRequestSchema,
  DeviceRegisterResultSchema,
  DevicesQuerySchema,
  DevicesResponseSchema,
  HealthSchema,
  MinerAccountSchema,
  NodeStatusSchema,
  PeersResponseSchema,
  PoolInfoSchema,
  SubmitRequestSchema,
  SubmitResultSchema,
} from './validator.js';

export const validatorRoutes = defineRoutes({
  // -------------------------------------------------------------------------------------------
  // Validator: node
  // -------------------------------------------------------------------------------------------
  getHealth: {
    service: 'validator',
    method: 'GET',
    url: '/health',
    operationId: 'getHealth',
    summary: 'Liveness, version and the protocol versions served',
    tags: ['node'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: HealthSchema, ...ERRORS } },
  },
  getStatus: {
    service: 'validator',
    method: 'GET',
    url: '/status',
    operationId: 'getStatus',
    summary: 'Node configuration and counters (v4.0; superseded by /health and /api/hexchain/status)',
    tags: ['node', 'v4.0'],
    auth: 'none',
    version: '4.0',
    deprecated: true,
    schema: { response: { 200: NodeStatusSchema, ...ERRORS } },
  },
  getPeers: {
    service: 'validator',
    method: 'GET',
    url: '/network/peers',
    operationId: 'getPeers',
    summary: 'Peer validators (empty in local_only mode)',
    tags: ['node'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: PeersResponseSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: v4.0 mining
  // -------------------------------------------------------------------------------------------
  requestChallenge: {
    service: 'validator',
    method: 'POST',
    url: '/challenge',
    operationId: 'requestChallenge',
    summary: 'Issue a v4.0 tensor challenge for a slot (deprecated: use /api/hexchain/challenge)',
    tags: ['v4.0'],
    auth: 'none',
    version: '4.0',
    deprecated: true,
    schema: { body: ChallengeRequestSchema, response: { 200: ChallengeSchema, ...ERRORS } },
  },
  submitProof: {
    service: 'validator',
    method: 'POST',
    url: '/submit',
    operationId: 'submitProof',
    summary: 'Submit a v4.0 proof; the validator recomputes the work (deprecated: use /api/hexchain/submit)',
    tags: ['v4.0'],
    auth: 'none',
    version: '4.0',
    deprecated: true,
    schema: { body: SubmitRequestSchema, response: { 200: SubmitResultSchema, ...ERRORS } },
  },

  // -------------------------------------------------------------------------------------------
  // Validator: miners, devices, pool info
  // -------------------------------------------------------------------------------------------
  getMiner: {
    service: 'validator',
    method: 'GET',
    url: '/miners/:pubkey',
    operationId: 'getMiner',
    summary: 'A miner account: registration, balances, counters',
    tags: ['miners'],
    auth: 'none',
    version: 'any',
    schema: { params: PubkeyParamsSchema, response: { 200: MinerAccountSchema, ...ERRORS } },
  },
  registerDevice: {
    service: 'validator',
    method: 'POST',
    url: '/devices/register',
    operationId: 'registerDevice',
    summary: 'Register (or update) a miner key with its device type and v4.1 callback port',
    tags: ['devices', 'miners'],
    auth: 'signed',
    version: 'any',
    schema: { body: DeviceRegisterRequestSchema, response: { 200: DeviceRegisterResultSchema, ...ERRORS } },
  },
  listDevices: {
    service: 'validator',
    method: 'GET',
    url: '/devices',
    operationId: 'listDevices',
    summary: 'Registered devices (the fleet), with counts per type',
    tags: ['devices'],
    auth: 'none',
    version: 'any',
    schema: { querystring: DevicesQuerySchema, response: { 200: DevicesResponseSchema, ...ERRORS } },
  },
  getPool: {
    service: 'validator',
    method: 'GET',
    url: '/pool',
    operationId: 'getPool',
    summary: 'Pool info: strategy, members, stake, minimum stake, fee, round length',
    tags: ['pool'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: PoolInfoSchema, ...ERRORS } },
  },
});
