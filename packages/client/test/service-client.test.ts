import { MockAgent } from 'undici';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  createHubClient,
  createServiceClient,
  createStatusClient,
  createTerminalClient,
  type ServiceClient,
  type ServiceOperationId,
} from '../src/index.js';
import { track } from './helpers.js';

/** The generic client of the other services of ROUTES: status proxy, terminal backend, hub. */

const HUB = 'http://hub.test';
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };
const WALLET = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';
const SERVICE_HEALTH = { status: 'ok', service: 'x', version: '0.1.0', uptime_s: 1 };

function mockAgent(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  return track(agent);
}

describe('createServiceClient', () => {
  it('reaches the hub: JSON routes, path parameters and a non-JSON document', async () => {
    const agent = mockAgent();
    const pool = agent.get(HUB);
    pool.intercept({ path: '/api/games' }).reply(
      200,
      {
        games: [
          {
            id: 'hexfall',
            name: 'Hexfall',
            url: 'https://hexfall.test',
            icon: '/icons/h.png',
            category: 'puzzle',
          },
        ],
      },
      JSON_HEADERS,
    );
    pool
      .intercept({ path: '/api/status/hexfall' })
      .reply(200, { id: 'hexfall', status: 'online', checked_at: 1, http_status: 200 }, JSON_HEADERS);
    pool
      .intercept({ path: '/sitemap.xml' })
      .reply(200, '<urlset></urlset>', { headers: { 'content-type': 'application/xml' } });
    const hub = track(createHubClient({ url: HUB, dispatcher: agent, healthCheckIntervalMs: 0 }));
    expect(hub.service).toBe('hub');
    expect((await hub.request('listGames')).games[0]!.name).toBe('Hexfall');
    expect((await hub.request('getGameStatus', { params: { gameId: 'hexfall' } })).status).toBe('online');
    expect(await hub.request('getSitemap')).toBe('<urlset></urlset>');
    expect(hub.routes.map((r) => r.operationId)).toEqual([
      'listGames',
      'getGameStatus',
      'listAds',
      'getGamePage',
      'getHubHealth',
      'getSitemap',
      'getRobots',
    ]);
  });

  it('answers a redirect route (302) with null and checks its query', async () => {
    const agent = mockAgent();
    agent
      .get('http://terminal.test')
      .intercept({ path: `/api/x-auth/authorize?wallet=${WALLET}` })
      .reply(302, '', { headers: { location: 'https://provider.test/oauth' } });
    const terminal = track(createTerminalClient({ url: 'http://terminal.test', dispatcher: agent }));
    expect(await terminal.request('xAuthAuthorize', { query: { wallet: WALLET } })).toBeNull();
    await expect(terminal.request('xAuthAuthorize', { query: { wallet: 'x' } })).rejects.toMatchObject({
      name: 'InvalidInputError',
    });
  });

  it('refuses an operation of another service', async () => {
    const hub = track(createServiceClient('hub', { url: HUB, dispatcher: mockAgent() }));
    // @ts-expect-error: getHealth is a validator operation
    await expect(hub.request('getHealth')).rejects.toThrow(
      'operationId: expected an operation of the hub service, got "getHealth"',
    );
  });

  it('probes each service at its own health route', async () => {
    const agent = mockAgent();
    agent.get('http://s1.test').intercept({ path: '/health' }).reply(200, SERVICE_HEALTH, JSON_HEADERS);
    agent.get('http://s2.test').intercept({ path: '/health' }).reply(200, SERVICE_HEALTH, JSON_HEADERS);
    agent.get('http://t1.test').intercept({ path: '/api/health' }).reply(200, SERVICE_HEALTH, JSON_HEADERS);
    agent.get('http://t2.test').intercept({ path: '/api/health' }).reply(200, SERVICE_HEALTH, JSON_HEADERS);
    const status = track(
      createStatusClient({ urls: ['http://s1.test', 'http://s2.test'], dispatcher: agent }),
    );
    const terminal = track(
      createTerminalClient({ urls: ['http://t1.test', 'http://t2.test'], dispatcher: agent }),
    );
    expect((await status.probe()).every((e) => e.up && e.latencyMs !== undefined)).toBe(true);
    expect((await terminal.probe()).every((e) => e.up && e.latencyMs !== undefined)).toBe(true);
  });

  it('types request() per service', () => {
    expectTypeOf<ServiceOperationId<'hub'>>().toEqualTypeOf<
      'listGames' | 'getGameStatus' | 'listAds' | 'getGamePage' | 'getHubHealth' | 'getSitemap' | 'getRobots'
    >();
    const games = (hub: ServiceClient<'hub'>) => hub.request('listGames');
    expectTypeOf<Awaited<ReturnType<typeof games>>['games'][number]['category']>().toEqualTypeOf<string>();
  });

  it('refuses a bad base URL, naming it', () => {
    expect(() => createHubClient({ url: 'ftp://hub.test' })).toThrow(
      'url: expected an http: or https: URL, got "ftp://hub.test"',
    );
    expect(() => createHubClient({ urls: [] })).toThrow('url: expected a base URL (url or urls), got none');
    expect(() => createHubClient({ urls: [HUB, `${HUB}/`] })).toThrow(
      `urls[1]: expected each URL once, got ${HUB} twice`,
    );
  });
});
