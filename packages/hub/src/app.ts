import { existsSync } from 'node:fs';
import fastifyStatic from '@fastify/static';
import type { ServiceHealth } from '@tensormine/protocol';
import {
  ApiError,
  ConfigError,
  createServiceApp,
  registerServiceRoutes,
  type ServiceCreateOptions,
  type ServiceRouteHandlers,
  type SettingSource,
} from '@tensormine/service-kit';
import type { FastifyInstance } from 'fastify';
import { type HubConfig, type HubSettingName, resolveHubConfig } from './config.js';
import { type Directory, loadDirectory } from './directory.js';
import { gamePage } from './pages.js';
import { buildRobots, buildSitemap } from './site.js';
import { StatusProber } from './status.js';

export const HUB_VERSION = '0.1.0';

/** The policy of sitemap.xml: nothing loads; the browser's XML viewer may style the tree. */
const SITEMAP_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'";

/** The http origin of a listening address (an IPv6 host in brackets; any-address as loopback). */
function originOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

export interface CreateHubOptions extends Partial<Record<HubSettingName, unknown>>, ServiceCreateOptions {}

export interface Hub {
  readonly app: FastifyInstance;
  readonly config: HubConfig;
  readonly sources: Readonly<Record<HubSettingName, SettingSource>>;
  readonly directory: Directory;
  readonly prober: StatusProber;
  /**
   * The origin sitemap.xml and robots.txt advertise: the configured public URL, else the
   * address the hub listens on (before listen(): its configured host and port).
   */
  publicUrl(): string;
  listen(options?: { host?: string; port?: number }): Promise<string>;
  close(): Promise<void>;
}

/**
 * Builds the hub: reads and checks the games and ads files, registers the routes of the
 * protocol's route table (service "hub") and the static front end. Not listening yet.
 */
export async function createHub(options: CreateHubOptions = {}): Promise<Hub> {
  const { env, configFile, now = Date.now, logger, ...flags } = options;
  const { config, sources } = resolveHubConfig({
    flags,
    ...(env ? { env } : {}),
    ...(configFile ? { configFile } : {}),
  });
  if (!existsSync(config.staticDir))
    throw new ConfigError(`static directory ${config.staticDir} does not exist`);
  const directory = loadDirectory(config.gamesFile, config.adsFile);
  let onProbe: ((seconds: number, online: boolean) => void) | undefined;
  const prober = new StatusProber({
    timeoutMs: config.statusTimeoutMs,
    cacheMs: config.statusCacheMs,
    concurrency: config.statusConcurrency,
    now,
    onProbe: (seconds, online) => onProbe?.(seconds, online),
  });
  const startedAt = now();
  let listening: string | undefined;
  const publicUrl = () => config.publicUrl ?? listening ?? originOf(config.host, config.port);
  let site: { readonly base: string; readonly sitemap: string; readonly robots: string } | undefined;
  /** The sitemap and robots.txt of the current public URL (built once per URL). */
  const siteFiles = () => {
    const base = publicUrl();
    if (site?.base !== base) {
      site = {
        base,
        sitemap: buildSitemap(base, directory.games, directory.gamesModifiedMs),
        robots: buildRobots(base),
      };
    }
    return site;
  };

  const app = createServiceApp({
    service: 'hub',
    logLevel: config.logLevel,
    rateLimit: { burst: config.rateLimitBurst, perSecond: config.rateLimitPerSecond },
    now,
    logger,
    metrics: { version: HUB_VERSION, ...config },
    // Own scripts only; game icons and ads may come from other https hosts (ads in sandboxed frames).
    headers: {
      'content-security-policy':
        "default-src 'self'; img-src 'self' https: data:; frame-src https:; script-src 'self'; style-src 'self'; frame-ancestors 'self'; base-uri 'none'",
    },
  });

  const probes = app.metrics.histogram({
    name: 'tensormine_hub_status_probe_duration_seconds',
    help: "Status probes of the games' URLs (HEAD), by result (online, offline: an error status, a timeout or no answer); _count is the number of probes",
    labelNames: ['result'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  onProbe = (seconds, online) => probes.observe({ result: online ? 'online' : 'offline' }, seconds);
  app.metrics.counterFrom(
    'tensormine_hub_status_cache_hits_total',
    'Game status asks answered from the cache (or by a probe already in flight) instead of a new probe',
    () => prober.cacheHits,
  );
  app.metrics.gaugeFrom('tensormine_hub_games', 'Games in the directory', () => directory.games.length);

  const gameOf = (gameId: string) => {
    const game = directory.game(gameId);
    if (!game) throw new ApiError('game_not_found', `no game ${JSON.stringify(gameId)} in the directory`);
    return game;
  };

  const handlers: ServiceRouteHandlers<'hub'> = {
    listGames: async () => ({ games: directory.games }),
    getGameStatus: async (request) => prober.status(gameOf(request.params.gameId)),
    listAds: async () => ({ ads: directory.ads }),
    getGamePage: async (request, reply) => {
      const game = gameOf(request.params.gameId);
      reply.type('text/html; charset=utf-8');
      return gamePage(game);
    },
    getHubHealth: async (): Promise<ServiceHealth> => ({
      status: 'ok',
      service: 'tensormine-hub',
      version: HUB_VERSION,
      uptime_s: Math.max(0, Math.floor((now() - startedAt) / 1000)),
    }),
    getSitemap: async (_request, reply) => {
      reply.type('application/xml; charset=utf-8');
      // The pages' policy (no inline styles) would leave Chromium's XML viewer unstyled and
      // garbled; an XML document runs no script, so its viewer may style it.
      reply.header('content-security-policy', SITEMAP_CSP);
      return siteFiles().sitemap;
    },
    getRobots: async (_request, reply) => {
      reply.type('text/plain; charset=utf-8');
      return siteFiles().robots;
    },
  };

  registerServiceRoutes(app, 'hub', handlers);
  await app.register(async (scope) => {
    // The static files refuse a path that leaves the directory (`..`, encoded or not) or names a
    // hidden file with 403: answered as `path_forbidden`, 403, in the one error shape.
    scope.setErrorHandler((error: { statusCode?: number }) => {
      if (error.statusCode === 403) {
        throw new ApiError(
          'path_forbidden',
          "the path leaves the hub's static directory or names a hidden file",
        );
      }
      throw error;
    });
    await scope.register(fastifyStatic, {
      root: config.staticDir,
      index: ['index.html'],
      dotfiles: 'deny',
      cacheControl: true,
      maxAge: 300_000,
    });
  });

  let closed = false;
  return {
    app,
    config,
    sources,
    directory,
    prober,
    publicUrl,
    async listen(o = {}) {
      listening = await app.listen({ host: o.host ?? config.host, port: o.port ?? config.port });
      return listening;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
    },
  };
}
