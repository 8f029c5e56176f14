import { GameIdParamsSchema, GameStatusSchema, GamesResponseSchema } from './hub.js';
import { defineRoutes, ERRORS, TextSchema } from './route-table.js';
import { ServiceHealthSchema } from './validator.js';

export const hubRoutes = defineRoutes({
  // -------------------------------------------------------------------------------------------
  // Hub
  // -------------------------------------------------------------------------------------------
  listGames: {
    service: 'hub',
    method: 'GET',
    url: '/api/games',
    operationId: 'listGames',
    summary: 'The full game list',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: GamesResponseSchema, ...ERRORS } },
  },
  getGameStatus: {
    service: 'hub',
    method: 'GET',
    url: '/api/status/:gameId',
    operationId: 'getGameStatus',
    summary: 'Whether a game is online (HEAD request to its URL)',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    schema: { params: GameIdParamsSchema, response: { 200: GameStatusSchema, ...ERRORS } },
  },
  getHubHealth: {
    service: 'hub',
    method: 'GET',
    url: '/health',
    operationId: 'getHubHealth',
    summary: 'Liveness of the hub',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    schema: { response: { 200: ServiceHealthSchema, ...ERRORS } },
  },
  getSitemap: {
    service: 'hub',
    method: 'GET',
    url: '/sitemap.xml',
    operationId: 'getSitemap',
    summary: 'The sitemap (XML, not JSON)',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    produces: ['application/xml'],
    schema: { response: { 200: TextSchema, ...ERRORS } },
  },
  getRobots: {
    service: 'hub',
    method: 'GET',
    url: '/robots.txt',
    operationId: 'getRobots',
    summary: 'robots.txt (plain text, not JSON)',
    tags: ['hub'],
    auth: 'none',
    version: 'any',
    produces: ['text/plain'],
    schema: { response: { 200: TextSchema, ...ERRORS } },
  },
});
