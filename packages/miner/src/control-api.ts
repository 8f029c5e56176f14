import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeviceUnitInfo } from './device.js';
import { MinerError } from './errors.js';
import type { HashrateWindows } from './hashrate.js';
import type { DeviceOutcomes, MinerStats } from './miner.js';

/**
 * The local control API (off by default): node:http on a loopback address, every request
 * authorised by `Authorization: Bearer <token>`. Monitoring uses the AxeOS field names that
 * dashboards read; see the README for the full table.
 *
 *   GET  /api/system/info   the summary (alias: GET /api/summary)
 *   POST /api/pause         pause every device
 *   POST /api/resume        resume
 */

/** What the API reads and drives: a Miner fits (the CLI may wrap one). */
export interface ControlTarget {
  stats(): MinerStats;
  pause(): void;
  resume(): void;
}

export interface ControlApiOptions {
  readonly target: ControlTarget;
  /** The bearer token, at least 16 characters. */
  readonly token: string;
  /** A loopback address (default 127.0.0.1). */
  readonly host?: string;
  /** Default 0: any free port (read it from `url`). */
  readonly port?: number;
  /** The software version reported as `version`. */
  readonly version?: string;
}

export interface ControlApi {
  /** The base URL, e.g. http://127.0.0.1:4048. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const GIGA = 1e9;

/**
 * Starts the control API.
 * @throws MinerError `invalid_option` for a short token or a non-loopback host.
 */
export async function startControlApi(options: ControlApiOptions): Promise<ControlApi> {
  if (typeof options.token !== 'string' || options.token.length < 16) {
    throw new MinerError(
      'invalid_option',
      `control API token: expected at least 16 characters, got ${options.token?.length ?? 0}`,
    );
  }
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host) && !host.startsWith('127.')) {
    throw new MinerError('invalid_option', `control API host: expected a loopback address, got ${host}`);
  }
  const expected = digest(options.token);
  const server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      send(res, 500, { code: 'internal_error', message: (error as Error).message });
    }
  });

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    if (!match || !timingSafeEqual(digest(match[1]!.trim()), expected)) {
      res.setHeader('www-authenticate', 'Bearer');
      send(res, 401, { code: 'unauthorized', message: 'expected Authorization: Bearer <control API token>' });
      return;
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const route = ROUTES[path];
    if (route === undefined) {
      send(res, 404, { code: 'not_found', message: `no route ${path}` });
      return;
    }
    if (req.method !== route.method) {
      res.setHeader('allow', route.method);
      send(res, 405, {
        code: 'method_not_allowed',
        message: `${path} takes ${route.method}, got ${req.method}`,
      });
      return;
    }
    req.resume();
    if (route.action === 'info') {
      send(res, 200, systemInfo(options.target.stats(), options.version));
    } else if (route.action === 'pause') {
      options.target.pause();
      send(res, 200, { paused: true });
    } else {
      options.target.resume();
      send(res, 200, { paused: false });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${urlHost}:${port}`, port, close: () => closeServer(server) };
}

const ROUTES: Readonly<Record<string, { method: 'GET' | 'POST'; action: 'info' | 'pause' | 'resume' }>> = {
  '/api/system/info': { method: 'GET', action: 'info' },
  '/api/summary': { method: 'GET', action: 'info' },
  '/api/pause': { method: 'POST', action: 'pause' },
  '/api/resume': { method: 'POST', action: 'resume' },
};

/** The GET /api/system/info body: AxeOS fields (GH/s like AxeOS), then ours (H/s). */
export function systemInfo(stats: MinerStats, version?: string): Record<string, unknown> {
  const gh = (v: number | undefined) => (v === undefined ? null : v / GIGA);
  const h = stats.hashrate;
  return {
    // AxeOS names and units.
    hashRate: gh(h['10s']),
    hashRate_1m: gh(h['60s']),
    hashRate_10m: gh(h['10m']),
    hashRate_1h: gh(h['1h']),
    expectedHashrate: gh(stats.expectedHashrate),
    sharesAccepted: stats.accepted,
    sharesRejected: stats.rejected,
    sharesRejectedReasons: stats.rejectedReasons.map((r) => ({ message: r.code, count: r.count })),
    bestDiff: stats.bestDifficulty ?? 0,
    bestSessionDiff: stats.bestDifficulty ?? 0,
    uptimeSeconds: stats.uptimeSeconds,
    // Ours.
    version: version ?? null,
    protocolVersion: stats.job?.protocolVersion ?? null,
    validatorUrl: stats.validatorUrl ?? null,
    paused: stats.paused,
    connected: stats.connected,
    hashrateUnit: 'H/s',
    hashrate: windows(h),
    job: stats.job
      ? {
          challengeId: stats.job.challengeId,
          difficulty: stats.job.difficulty,
          expiresAt: new Date(stats.job.expiresAtMs).toISOString(),
        }
      : null,
    latencyMs: { last: stats.lastLatencyMs ?? null, average: stats.averageLatencyMs ?? null },
    journalPending: stats.journalSize,
    devices: stats.devices.map((d) => ({
      id: d.id,
      kind: d.kind,
      state: d.state,
      hashrate: windows(d.hashrate.total),
      workers: d.hashrate.workers.map(windows),
      totalHashes: d.totalHashes,
      expectedHashrate: d.expectedHashrate ?? null,
      lastFoundAt: d.lastFoundAtMs === undefined ? null : new Date(d.lastFoundAtMs).toISOString(),
      sharesAccepted: d.accepted,
      sharesRejected: d.rejected,
      sharesRejectedReasons: d.rejectedReasons.map((r) => ({ message: r.code, count: r.count })),
      ...(d.units === undefined ? {} : { boards: d.units.map((u) => unitInfo(u, gh)) }),
    })),
  };
}

/**
 * One board of a device (the serial fleet): AxeOS names where AxeOS has them (hashRate in
 * GH/s, sharesAccepted, sharesRejected, sharesRejectedReasons), cgminer's hardware errors
 * (results the reference verifier rejected), then the link's counters.
 */
function unitInfo(
  u: DeviceUnitInfo & DeviceOutcomes,
  gh: (v: number | undefined) => number | null,
): Record<string, unknown> {
  return {
    id: u.id,
    kind: u.kind,
    chipId: u.chipId ?? null,
    port: u.port ?? null,
    firmware: u.firmware ?? null,
    board: u.board ?? null,
    state: u.state,
    hashRate: gh(u.hashrate['10s']),
    hashRate_1m: gh(u.hashrate['60s']),
    expectedHashrate: gh(u.expectedHashrate),
    sharesAccepted: u.accepted,
    sharesRejected: u.rejected,
    sharesRejectedReasons: u.rejectedReasons.map((r) => ({ message: r.code, count: r.count })),
    hardwareErrors: u.counters.hardwareErrors,
    hashrate: windows(u.hashrate),
    totalHashes: u.totalHashes,
    found: u.counters.found,
    crcErrors: u.counters.crcErrors,
    resyncs: u.counters.resyncs,
    retransmissions: u.counters.retransmissions,
    reboots: u.counters.reboots,
    linkLosses: u.counters.linkLosses,
    lastFoundAt: u.lastFoundAtMs === undefined ? null : new Date(u.lastFoundAtMs).toISOString(),
  };
}

function windows(w: HashrateWindows): Record<string, number | null> {
  return {
    '10s': w['10s'] ?? null,
    '60s': w['60s'] ?? null,
    '15m': w['15m'] ?? null,
    '10m': w['10m'] ?? null,
    '1h': w['1h'] ?? null,
    max: w.max ?? null,
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}
