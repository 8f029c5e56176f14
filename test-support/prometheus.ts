import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { SERVICE_START_TIMEOUT_MS } from './timeouts.ts';

/**
 * Debian's Prometheus for the tests of the services' /metrics (`.ci/run` installs the
 * `prometheus` package, which brings `promtool`): `expectPromtoolClean` runs `promtool check
 * metrics` on an exposition, `startPrometheus` runs a server on a free port with a generated
 * scrape configuration.
 */
export const PROMETHEUS_PATH = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
export const PROMTOOL_PATH = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';

/** Runs a program with `input` on stdin; its exit code and its output (stdout and stderr). */
function runWithInput(
  file: string,
  args: readonly string[],
  input: string,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
    child.stdin.end(input);
  });
}

/** `promtool check metrics` finds nothing to say about `exposition` (names, units, help, types). */
export async function expectPromtoolClean(exposition: string): Promise<void> {
  expect(exposition.length).toBeGreaterThan(0);
  const { code, output } = await runWithInput(PROMTOOL_PATH, ['check', 'metrics'], exposition);
  expect(output.trim(), 'promtool check metrics').toBe('');
  expect(code).toBe(0);
}

/** A port free on 127.0.0.1 now (Prometheus takes its address as a flag). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ScrapeTarget {
  readonly job: string;
  /** host:port */
  readonly address: string;
  readonly bearerToken?: string;
}

export interface RunningPrometheus {
  readonly url: string;
  /** The value of an instant query with one series in its answer; undefined while there is none. */
  value(query: string): Promise<number | undefined>;
  /** The number of series an instant query answers (throws on a query Prometheus refuses). */
  count(query: string): Promise<number>;
  /** The targets' scrape health by job (up, down, unknown). */
  health(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/**
 * Starts Prometheus on a free port scraping `targets` every `scrapeInterval`, with its storage
 * in a temporary directory; resolves when it answers /-/ready (within `readyMs`, default the
 * suite's SERVICE_START_TIMEOUT_MS).
 */
export async function startPrometheus(
  targets: readonly ScrapeTarget[],
  options: { scrapeInterval?: string; readyMs?: number } = {},
): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'tensormine-prometheus-'));
  const interval = options.scrapeInterval ?? '1s';
  const config = [
    'global:',
    `  scrape_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    'scrape_configs:',
    ...targets.flatMap((t) => [
      `  - job_name: ${JSON.stringify(t.job)}`,
      ...(t.bearerToken === undefined
        ? []
        : ['    authorization:', `      credentials: ${JSON.stringify(t.bearerToken)}`]),
      '    static_configs:',
      `      - targets: [${JSON.stringify(t.address)}]`,
    ]),
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), `${config}\n`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    PROMETHEUS_PATH,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (chunk) => {
    log = (log + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = performance.now() + (options.readyMs ?? SERVICE_START_TIMEOUT_MS);
  for (;;) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`prometheus exited with ${child.exitCode}: ${log}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) break;
    if (performance.now() > deadline) {
      await close();
      throw new Error(`prometheus did not get ready: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const api = async (path: string) => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: unknown; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    async value(query) {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(query)}`)) as {
        result: { value: [number, string] }[];
      };
      if (data.result.length > 1) throw new Error(`${query}: ${data.result.length} series`);
      const first = data.result[0];
      return first === undefined ? undefined : Number(first.value[1]);
    },
    async count(query) {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(query)}`)) as { result: unknown[] };
      return data.result.length;
    },
    async health() {
      const data = (await api('/api/v1/targets')) as {
        activeTargets: { labels: { job: string }; health: string }[];
      };
      return Object.fromEntries(data.activeTargets.map((t) => [t.labels.job, t.health]));
    },
    close,
  };
}
