/**
 * The one Fastify set-up: the error shape of every answer the kit gives (the handler's errors, a
 * service's translation, schema failures, 404, 405, 414, 415, 413, 429), the headers, the raw
 * JSON body, the plugins, and the typed route registration from the protocol's route table.
 */
import type { OperationId } from '@tensormine/protocol';
import type { FastifyInstance } from 'fastify';
import { describe, expect, expectTypeOf, test } from 'vitest';
import {
  ApiError,
  createServiceApp,
  type RouteRequest,
  registerServiceRoutes,
  type ServiceAppOptions,
  type ServiceOperationId,
  type ServiceRouteHandlers,
} from '../src/index.js';

const HEALTH = { status: 'ok' as const, service: 'tensormine-hub', version: '0', uptime_s: 0 };

/** A hub-shaped service: every hub route, with handlers that answer or throw on demand. */
function hubApp(
  options: Partial<ServiceAppOptions> = {},
  handlers: Partial<ServiceRouteHandlers<'hub'>> = {},
) {
  const app = createServiceApp({
    service: 'hub',
    logLevel: 'silent',
    rateLimit: { burst: 1000, perSecond: 1000 },
    now: () => 0,
    ...options,
  });
  const all: ServiceRouteHandlers<'hub'> = {
    listGames: async () => ({ games: [] }),
    getGameStatus: async (request) => {
      if (request.params.gameId === 'missing') throw new ApiError('game_not_found', 'no such game');
      throw new Error('a bug with a secret in its message');
    },
    listAds: async () => ({ ads: [] }),
    getGamePage: async (_request, reply) => reply.type('text/html; charset=utf-8').send('<p>page</p>'),
    getHubHealth: async () => HEALTH,
    getSitemap: async () => '<urlset/>',
    getRobots: async () => 'User-agent: *',
    ...handlers,
  };
  const registered = registerServiceRoutes(app, 'hub', all);
  return { app, registered };
}

describe('createServiceApp', () => {
  test('answers the errors of handlers, schemas and the router in the documented shape', async () => {
    const { app } = hubApp();
    const missing = await app.inject('/api/status/missing');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({
      statusCode: 404,
      code: 'game_not_found',
      error: 'Not Found',
      message: 'no such game',
    });
    // A bug is a 500 whose message is not sent.
    const bug = await app.inject('/api/status/buggy');
    expect(bug.statusCode).toBe(500);
    expect(bug.json()).toMatchObject({ code: 'internal_error' });
    expect(bug.body).not.toContain('secret');
    // The route's schema refuses a bad parameter before the handler runs.
    const invalid = await app.inject('/api/status/UPPER');
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ code: 'validation_failed' });
    expect((await app.inject('/nowhere')).json()).toMatchObject({ statusCode: 404, code: 'not_found' });
    const wrong = await app.inject({ method: 'DELETE', url: '/api/games' });
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers.allow).toBe('GET, HEAD');
    expect(wrong.json()).toMatchObject({ code: 'method_not_allowed', details: { allow: ['GET', 'HEAD'] } });
    const long = await app.inject(`/api/status/${'z'.repeat(300)}`);
    expect(long.statusCode).toBe(414);
    expect(long.json()).toMatchObject({ code: 'uri_too_long' });
    expect(long.body).not.toContain('zzzz');
  });

  test("passes errors through the service's translation (the validator's storage-to-503)", async () => {
    class Busy extends Error {}
    const { app } = hubApp(
      {
        translateError: (error) =>
          error instanceof Busy
            ? new ApiError('service_unavailable', 'busy; send the request again', undefined, {
                'retry-after': '1',
              })
            : error,
      },
      {
        listGames: async () => {
          throw new Busy('database busy');
        },
      },
    );
    const answer = await app.inject('/api/games');
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.json()).toMatchObject({
      code: 'service_unavailable',
      message: 'busy; send the request again',
    });
  });

  test('takes JSON bodies only, up to the limit, and keeps their raw bytes', async () => {
    const app = createServiceApp({
      service: 'validator',
      logLevel: 'silent',
      rateLimit: false,
      now: () => 0,
      bodyLimit: 1024,
    });
    app.post('/echo', async (request) => ({ raw: request.rawBody?.toString('utf8'), body: request.body }));
    const sent = '{ "a" : 1 }';
    const ok = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: sent,
    });
    expect(ok.json()).toEqual({ raw: sent, body: { a: 1 } });
    const text = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'text/plain' },
      payload: 'a',
    });
    expect([text.statusCode, text.json().code]).toEqual([415, 'unsupported_media_type']);
    const broken = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect([broken.statusCode, broken.json().code]).toEqual([400, 'invalid_json']);
    const big = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ a: 'x'.repeat(2000) }),
    });
    expect([big.statusCode, big.json().code]).toEqual([413, 'body_too_large']);
    // A prototype-poisoning body is refused, not merged.
    const poisoned = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"__proto__": {"admin": true}}',
    });
    expect(poisoned.statusCode).toBe(400);
  });

  test('limits each client address, with Retry-After, on the injected clock', async () => {
    let now = 1_000_000;
    const { app } = hubApp({ rateLimit: { burst: 2, perSecond: 1 }, now: () => now });
    expect((await app.inject('/health')).statusCode).toBe(200);
    expect((await app.inject('/health')).statusCode).toBe(200);
    const refused = await app.inject('/health');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ code: 'rate_limited', details: { retry_after_s: 1 } });
    // Another address has its own bucket; time gives tokens back.
    expect((await app.inject({ url: '/health', remoteAddress: '10.0.0.2' })).statusCode).toBe(200);
    now += 1000;
    expect((await app.inject('/health')).statusCode).toBe(200);
  });

  test('puts the security headers and the service headers on every answer, errors included', async () => {
    const { app } = hubApp({ headers: { 'x-tm-node-id': 'node-a' } });
    for (const url of ['/health', '/nowhere', '/api/status/missing']) {
      const answer = await app.inject(url);
      expect(answer.headers['x-content-type-options'], url).toBe('nosniff');
      expect(answer.headers['referrer-policy'], url).toBe('no-referrer');
      expect(answer.headers['x-tm-node-id'], url).toBe('node-a');
    }
  });

  test('runs the service-wide plugins before any route, with the service named', async () => {
    const seen: string[] = [];
    const counted: string[] = [];
    const plugin = (app: FastifyInstance, service: string) => {
      seen.push(service);
      app.addHook('onResponse', (request, _reply, done) => {
        counted.push(request.url);
        done();
      });
      app.get('/metrics', async () => ({ requests: counted.length }));
    };
    const { app } = hubApp({ plugins: [plugin] });
    await app.inject('/health');
    await app.inject('/nowhere');
    expect(seen).toEqual(['hub']);
    expect(counted).toEqual(['/health', '/nowhere']);
    expect((await app.inject('/metrics')).json()).toEqual({ requests: 2 });
  });
});

describe('registerServiceRoutes', () => {
  test('registers every route of the service from the route table, in table order', () => {
    const { registered } = hubApp();
    expect(registered).toEqual([
      'listGames',
      'getGameStatus',
      'listAds',
      'getGamePage',
      'getHubHealth',
      'getSitemap',
      'getRobots',
    ]);
  });

  test('a handler map built around the compiler that misses a route is refused at start', () => {
    const app = createServiceApp({ service: 'hub', logLevel: 'silent', rateLimit: false, now: () => 0 });
    const partial = { listGames: async () => ({ games: [] }) } as unknown as ServiceRouteHandlers<'hub'>;
    expect(() => registerServiceRoutes(app, 'hub', partial)).toThrow('hub: no handler for getGameStatus');
  });

  test('types each handler by its route: params, body and reply, no casts', () => {
    expectTypeOf<ServiceOperationId<'hub'>>().toEqualTypeOf<
      'listGames' | 'getGameStatus' | 'listAds' | 'getGamePage' | 'getHubHealth' | 'getSitemap' | 'getRobots'
    >();
    expectTypeOf<RouteRequest<'getGameStatus'>['params']>().toEqualTypeOf<{ gameId: string }>();
    expectTypeOf<ServiceOperationId<'terminal'>>().toMatchTypeOf<OperationId>();
    expectTypeOf<RouteRequest<'walletChallenge'>['body']>().toMatchTypeOf<{ wallet: string }>();
  });
});
