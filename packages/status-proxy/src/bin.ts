#!/usr/bin/env node
/**
 * status-proxy: the status proxy and live lattice dashboard in front of one or more validators.
 *
 *   status-proxy --validator http://127.0.0.1:8420 [--validator URL ...] [--port 8430] [--host 127.0.0.1] [--cache-ms 1000]
 *                [--rate-limit-per-second 20] [--rate-limit-burst 60] [--upstream-per-second 5] ... [--trust-proxy LIST]
 *                [--callback-key-file PATH] [--device-callbacks private|all|off]
 *
 * Environment: TENSORMINE_VALIDATOR_URLS (comma-separated), TENSORMINE_STATUS_PORT, TENSORMINE_STATUS_HOST,
 * TENSORMINE_STATUS_METRICS_PORT, TENSORMINE_STATUS_METRICS_HOST, TENSORMINE_STATUS_METRICS_TOKEN,
 * and TENSORMINE_STATUS_<LIMIT> for each limit (docs/status-proxy.md).
 */
import { parseArgs } from 'node:util';
import { describeMetrics, trustedProxies } from '@tensormine/service-kit';
import { watchNpmStopSignals } from '@tensormine/service-kit/npm-signals';
import { ConfigError, metricsSettings, resolveSettings } from '@tensormine/service-kit/settings';
import { loadCallbackKey } from './devices.js';
import { type CreateStatusProxyOptions, createStatusProxy, STATUS_PROXY_LIMITS } from './proxy.js';

/** The limits, as flags: [flag, option, environment variable, meaning]. */
const LIMIT_FLAGS: readonly [string, keyof typeof STATUS_PROXY_LIMITS, string, string][] = [
  [
    'rate-limit-per-second',
    'rateLimitPerSecond',
    'RATE_LIMIT_PER_SECOND',
    'requests per second per client address',
  ],
  ['rate-limit-burst', 'rateLimitBurst', 'RATE_LIMIT_BURST', 'request burst per client address'],
  [
    'upstream-per-second',
    'upstreamPerSecond',
    'UPSTREAM_PER_SECOND',
    'requests per second per client address that reach a validator (cache misses, challenges, submissions)',
  ],
  ['upstream-burst', 'upstreamBurst', 'UPSTREAM_BURST', 'their burst per client address'],
  [
    'upstream-total-per-second',
    'upstreamTotalPerSecond',
    'UPSTREAM_TOTAL_PER_SECOND',
    'the same, for all clients together',
  ],
  [
    'upstream-total-burst',
    'upstreamTotalBurst',
    'UPSTREAM_TOTAL_BURST',
    'their burst for all clients together',
  ],
  ['event-streams', 'eventStreams', 'EVENT_STREAMS', 'open event streams in all'],
  [
    'event-streams-per-address',
    'eventStreamsPerAddress',
    'EVENT_STREAMS_PER_ADDRESS',
    'open event streams per client address',
  ],
];

const LIMIT_USAGE = LIMIT_FLAGS.map(
  ([flag, option, env, meaning]) =>
    `  --${`${flag} N`.padEnd(32)} ${meaning}; env TENSORMINE_STATUS_${env}, default ${STATUS_PROXY_LIMITS[option]}`,
).join('\n');

const USAGE = `usage: status-proxy [options]

  --validator URL    a validator to read from (repeat for failover, in order); env TENSORMINE_VALIDATOR_URLS (comma-separated), default http://127.0.0.1:8420
  --port N           the port to listen on; env TENSORMINE_STATUS_PORT, default 8430 (0: any free port)
  --host HOST        the address to listen on; env TENSORMINE_STATUS_HOST, default 127.0.0.1
  --cache-ms N       how long read answers are cached, ms (default 1000; 0: none)
  --metrics-port N   serve GET /metrics (Prometheus) on a listener of its own at this port; env TENSORMINE_STATUS_METRICS_PORT, default off
  --metrics-host H   the address of that listener; env TENSORMINE_STATUS_METRICS_HOST, default 127.0.0.1
  --metrics-token T  the bearer token /metrics asks for (16+ characters; alone: /metrics on --port); env TENSORMINE_STATUS_METRICS_TOKEN
${LIMIT_USAGE}
  --trust-proxy LIST reverse proxies in front of this one whose X-Forwarded-For is believed (addresses or CIDR ranges, comma-separated); env TENSORMINE_STATUS_TRUST_PROXY, default none
  --callback-key-file PATH
                     the key that signs callbacks to the boards behind the proxy (created when missing;
                     default: a new key at each start, which boards learn again within 10 minutes)
  --device-callbacks private|all|off
                     which board addresses are called back (default private: a LAN)
  --help             this text

The dashboard is at the printed URL; the JSON routes are in docs/api.md (Status proxy).`;

function fail(message: string): never {
  process.stderr.write(`status-proxy: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function integer(value: string, name: string, min: number, max: number): number {
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    fail(`${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** The metrics settings, as every service takes them (flags > environment > defaults). */
function metricsSettingsOf(values: Record<string, unknown>, env: NodeJS.ProcessEnv) {
  const flags: Record<string, unknown> = {};
  if (values['metrics-port'] !== undefined) flags.metricsPort = values['metrics-port'];
  if (values['metrics-host'] !== undefined) flags.metricsHost = values['metrics-host'];
  if (values['metrics-token'] !== undefined) flags.metricsToken = values['metrics-token'];
  return resolveSettings(metricsSettings('TENSORMINE_STATUS'), { flags, env }).config;
}

async function main(): Promise<void> {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        validator: { type: 'string', multiple: true },
        port: { type: 'string' },
        host: { type: 'string' },
        'cache-ms': { type: 'string' },
        'metrics-port': { type: 'string' },
        'metrics-host': { type: 'string' },
        'metrics-token': { type: 'string' },
        'callback-key-file': { type: 'string' },
        'device-callbacks': { type: 'string' },
        'trust-proxy': { type: 'string' },
        ...Object.fromEntries(LIMIT_FLAGS.map(([flag]) => [flag, { type: 'string' as const }])),
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const env = process.env;
  const validators = (values.validator as string[] | undefined) ??
    env.TENSORMINE_VALIDATOR_URLS?.split(',')
      .map((u) => u.trim())
      .filter((u) => u !== '') ?? ['http://127.0.0.1:8420'];
  for (const url of validators) {
    if (!/^https?:\/\/[^\s]+$/.test(url))
      fail(`--validator: expected an http(s) URL, got ${JSON.stringify(url)}`);
  }
  const port = integer(String(values.port ?? env.TENSORMINE_STATUS_PORT ?? '8430'), '--port', 0, 65535);
  const host = String(values.host ?? env.TENSORMINE_STATUS_HOST ?? '127.0.0.1');
  const cacheMs = integer(String(values['cache-ms'] ?? '1000'), '--cache-ms', 0, 3_600_000);
  let metrics: ReturnType<typeof metricsSettingsOf>;
  try {
    metrics = metricsSettingsOf(values, env);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  const policy = String(values['device-callbacks'] ?? 'private');
  if (policy !== 'private' && policy !== 'all' && policy !== 'off')
    fail(`--device-callbacks: expected private, all or off, got ${JSON.stringify(policy)}`);
  const keyFile = values['callback-key-file'] as string | undefined;
  const limits: Partial<Record<keyof typeof STATUS_PROXY_LIMITS, number>> = {};
  for (const [flag, option, env_] of LIMIT_FLAGS) {
    const value = values[flag] ?? env[`TENSORMINE_STATUS_${env_}`];
    if (value !== undefined) limits[option] = integer(String(value), `--${flag}`, 1, 1_000_000);
  }
  const trust = values['trust-proxy'] ?? env.TENSORMINE_STATUS_TRUST_PROXY;
  let trustProxy: readonly string[] | undefined;
  try {
    trustProxy = trust === undefined ? undefined : trustedProxies(trust, '--trust-proxy');
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  const options: CreateStatusProxyOptions = {
    validators,
    cacheMs,
    logger: { level: 'warn' },
    deviceCallbacks: { policy, ...(keyFile ? { keyPair: loadCallbackKey(keyFile) } : {}) },
    ...limits,
    metrics,
    ...(trustProxy === undefined ? {} : { trustProxy }),
  };
  const proxy = await createStatusProxy(options);
  const url = await proxy.listen({ host, port });
  process.stdout.write(
    `status proxy listening on ${url} (dashboard: ${url}/), validators: ${validators.join(', ')}\n  ${describeMetrics(metrics, url, proxy.app.metrics.listenerUrl)}\n`,
  );
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void proxy.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Under `npm start`: npm's own SIGINT and SIGTERM stop at its shell.
  watchNpmStopSignals(stop);
}

main().catch((error: unknown) => {
  const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
  if (e.code === 'EADDRINUSE') {
    process.stderr.write(
      `status-proxy: port ${e.port} on ${e.address} is already in use; pick another with --port\n`,
    );
    process.exit(1);
  }
  process.stderr.write(`status-proxy: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
