import {
  CoordParamsSchema,
  HexBlockSchema,
  HexChallengeRequestSchema,
  HexChallengeSchema,
  HexStatusSchema,
  HexSubmitRequestSchema,
  HexSubmitResultSchema,
  LatticePageSchema,
  LatticeQuerySchema,
} from './hexchain.js';
import { HexEventStreamSchema, HexEventsQuerySchema } from './hexchain-events.js';
import { defineRoutes, ERRORS } from './route-table.js';

export const hexchainRoutes = defineRoutes({
  // -------------------------------------------------------------------------------------------
  // Validator: v4.1 hexchain
  // -------------------------------------------------------------------------------------------
  hexChallenge: {
    service: 'validator',
    method: 'POST',
    url: '/api/hexchain/challenge',
    operationId: 'hexChallenge',
    summary: 'Issue a lattice challenge: a free coordinate, its parents and the target',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { body: HexChallengeRequestSchema, response: { 200: HexChallengeSchema, ...ERRORS } },
  },
  hexSubmit: {
    service: 'validator',
    method: 'POST',
    url: '/api/hexchain/submit',
    operationId: 'hexSubmit',
    summary: 'Submit a block for a challenge; the first valid block at a coordinate wins',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { body: HexSubmitRequestSchema, response: { 200: HexSubmitResultSchema, ...ERRORS } },
  },
  hexStatus: {
    service: 'validator',
    method: 'GET',
    url: '/api/hexchain/status',
    operationId: 'hexStatus',
    summary: 'Lattice state: occupancy, depths, difficulty, target',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { response: { 200: HexStatusSchema, ...ERRORS } },
  },
  hexLattice: {
    service: 'validator',
    method: 'GET',
    url: '/api/hexchain/lattice',
    operationId: 'hexLattice',
    summary: 'All blocks, one page at a time',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { querystring: LatticeQuerySchema, response: { 200: LatticePageSchema, ...ERRORS } },
  },
  hexBlock: {
    service: 'validator',
    method: 'GET',
    url: '/api/hexchain/lattice/:q/:r/:s',
    operationId: 'hexBlock',
    summary: 'The block at a coordinate (block_not_found when free)',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    schema: { params: CoordParamsSchema, response: { 200: HexBlockSchema, ...ERRORS } },
  },
  hexEvents: {
    service: 'validator',
    method: 'GET',
    url: '/api/hexchain/events',
    operationId: 'hexEvents',
    summary:
      'Server-Sent Events of accepted blocks, retargets and difficulty changes (resume with Last-Event-ID)',
    tags: ['hexchain'],
    auth: 'none',
    version: '4.1',
    produces: ['text/event-stream'],
    schema: { querystring: HexEventsQuerySchema, response: { 200: HexEventStreamSchema, ...ERRORS } },
  },
});
