import { readFileSync } from 'node:fs';
import type { MinerConfigResult } from '@tensormine/protocol';
import {
  ApiError,
  bearerRefusal,
  createServiceApp,
  registerServiceRoutes,
  type ServiceRouteHandlers,
} from '@tensormine/service-kit';
import { systemInfo } from './control/info.js';
import { registerMinerSeries } from './control/metrics.js';
import { ControlRefusal, type ControlTarget } from './control/target.js';
import { MinerError } from './errors.js';

/**
 * The miner's local control API (off by default; `miner mine --api-port`), AxeOS and xmrig
 * style, served by the service kit from the protocol's route table (service `miner`, in
 * docs/api.md): GET /api/system/info (AxeOS fields), GET and POST /api/config (threads,
 * intensity, kernel, validators, pool), POST /api/system/restart, /api/pause, /api/resume,
 * GET /metrics (Prometheus) and a page at /.
 *
 * Who may do what: reads are open on a loopback address, as AxeOS and cgminer's read-only API
 * are (and answer only Host names of the loopback, against DNS rebinding); every write needs
 * `Authorization: Bearer <token>`; bound to any other address, reads need the token too.
 */
export interface ControlApiOptions {
  readonly target: ControlTarget;
  /** The bearer token of writes (and of reads off the loopback), at least 16 characters. */
  readonly token: string;
  /** Default 127.0.0.1. Another address needs the token for every request. */
  readonly host?: string;
  /** Default 0: any free port (read it from `url`). */
  readonly port?: number;
  /** The software version reported as `version`. */
  readonly version?: string;
}

export interface ControlApi {
  /** The base URL, e.g. http://127.0.0.1:4048 (the page is at `${url}/`). */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const GUARD = { realm: 'tensormine-miner', name: 'control API token', what: 'control API changes' } as const;
const OFF_LOOPBACK_GUARD = {
  ...GUARD,
  what: 'control API requests to a miner listening off the loopback',
} as const;

/** The page and its assets (packages/miner/public/control/). */
const PAGE_DIR = new URL('../public/control/', import.meta.url);
const ASSETS: readonly [path: string, file: string, type: string][] = [
  ['/app.js', 'app.js', 'text/javascript; charset=utf-8'],
  ['/app.css', 'app.css', 'text/css; charset=utf-8'],
];

/**
 * Starts the control API.
 * @throws MinerError `invalid_option` for a token shorter than 16 characters
 */
export async function startControlApi(options: ControlApiOptions): Promise<ControlApi> {
  if (typeof options.token !== 'string' || options.token.length < 16) {
    throw new MinerError(
      'invalid_option',
      `control API token: expected at least 16 characters, got ${options.token?.length ?? 0}`,
    );
  }
  const { target, token } = options;
  const version = options.version ?? '0.0.0';
  const host = options.host ?? '127.0.0.1';
  const loopback = isLoopback(host);
  const app = createServiceApp({
    service: 'miner',
    logLevel: 'silent',
    // The miner's screen is the terminal's.
    logger: false,
    logRequests: false,
    rateLimit: { burst: 300, perSecond: 50 },
    now: Date.now,
    metrics: { version, guardedByService: true },
    headers: {
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'; base-uri 'none'",
    },
  });
  // Every request: the Host (DNS rebinding), then the token where it is needed.
  app.addHook('onRequest', (request, _reply, done) => {
    if (loopback && !isLoopbackHostHeader(request.headers.host)) {
      return done(
        new ApiError(
          'host_not_allowed',
          'this control API listens on the loopback and answers requests for 127.0.0.1, localhost or [::1] only',
        ),
      );
    }
    const read = request.method === 'GET' || request.method === 'HEAD';
    if (!read || !loopback) {
      const refusal = bearerRefusal(request.headers.authorization, token, read ? OFF_LOOPBACK_GUARD : GUARD);
      if (refusal !== undefined) return done(refusal);
    }
    done();
  });
  registerMinerSeries(app.metrics, target);

  /** One change at a time: a second one waits for nothing, it is refused. */
  let changing = false;
  const exclusive = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    if (changing)
      throw new ApiError('miner_setting_refused', `${what}: another change is in progress; try again`);
    changing = true;
    try {
      return await run();
    } catch (error) {
      if (error instanceof ControlRefusal || error instanceof MinerError) {
        throw new ApiError('miner_setting_refused', `${what}: ${error.message}`);
      }
      throw error;
    } finally {
      changing = false;
    }
  };
  const page = readFileSync(new URL('index.html', PAGE_DIR), 'utf8');
  const handlers: ServiceRouteHandlers<'miner'> = {
    getMinerPage: async (_request, reply) => reply.type('text/html; charset=utf-8').send(page),
    getMinerInfo: async () => systemInfo(target.stats(), version),
    getMinerSummary: async () => systemInfo(target.stats(), version),
    getMinerConfig: async () => target.config(),
    setMinerConfig: async (request): Promise<MinerConfigResult> =>
      exclusive('POST /api/config', () => target.configure(request.body)),
    restartMiner: async () =>
      exclusive('restart', async () => {
        await target.restart();
        return { restarted: true as const, config: target.config() };
      }),
    pauseMiner: async () => {
      target.pause();
      return { paused: true };
    },
    resumeMiner: async () => {
      target.resume();
      return { paused: false };
    },
  };
  registerServiceRoutes(app, 'miner', handlers);
  for (const [path, file, type] of ASSETS) {
    const body = readFileSync(new URL(file, PAGE_DIR));
    app.get(path, async (_request, reply) => reply.header('content-type', type).send(body));
  }

  const url = await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: url.replace('://localhost:', '://127.0.0.1:'),
    port,
    close: () => app.close(),
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** A Host header naming the loopback (with or without a port). */
function isLoopbackHostHeader(header: string | undefined): boolean {
  if (header === undefined) return false;
  const name = header.startsWith('[')
    ? header.slice(0, header.indexOf(']') + 1)
    : header.replace(/:\d+$/, '');
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
