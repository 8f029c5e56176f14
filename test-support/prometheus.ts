import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { freePort } from './ports.ts';
import { SERVICE_START_TIMEOUT_MS } from './timeouts.ts';

/**
 * Debian's Prometheus for the tests of the services' /metrics (`.ci/run` installs the
 * `prometheus` package, which brings `promtool`): `expectPromtoolClean` runs `promtool check
 * metrics` on an exposition, `startPrometheus` runs a server on a free port with a generated
 * scrape configuration, `recordingRelay` stands between it and a target and keeps every
 * exposition it passed on (what the service reported, scrape by scrape).
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
  /**
   * The samples Prometheus stored for one series (a range selector, e.g. `name{labels}[10m]`),
   * oldest first; [] while there is none.
   */
  samples(rangeQuery: string): Promise<number[]>;
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
    async samples(rangeQuery) {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(rangeQuery)}`)) as {
        result: { values: [number, string][] }[];
      };
      if (data.result.length > 1) throw new Error(`${rangeQuery}: ${data.result.length} series`);
      return (data.result[0]?.values ?? []).map(([, v]) => Number(v));
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

export interface RecordingRelay {
  /** host:port, the address to scrape instead of the target's. */
  readonly address: string;
  /** Every exposition passed on to the scraper, in order. */
  readonly expositions: readonly string[];
  close(): Promise<void>;
}

/**
 * An HTTP relay in front of `target` (a base URL): GET /metrics is fetched from the target and
 * passed on unchanged, and the body is kept. What Prometheus stored for a series that moves with
 * time (a gauge over a window) can then be compared exactly with what the service answered to
 * the very scrapes Prometheus made.
 */
export async function recordingRelay(target: string): Promise<RecordingRelay> {
  const expositions: string[] = [];
  const server = createHttpServer((req, res) => {
    fetch(`${target}${req.url ?? '/'}`, {
      headers: req.headers.authorization ? { authorization: req.headers.authorization } : {},
    })
      .then(async (upstream) => {
        const body = await upstream.text();
        res.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'text/plain',
        });
        res.end(body, () => {
          if (upstream.status === 200) expositions.push(body);
        });
      })
      .catch((error: Error) => {
        res.writeHead(502).end(error.message);
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    expositions,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The value of `series` (its name and labels exactly as exposed) in an exposition; undefined if absent. */
export function exposedValue(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Whether `part` appears in `whole` in the same order (not necessarily next to each other). */
export function isSubsequence(part: readonly number[], whole: readonly number[]): boolean {
  let i = 0;
  for (const x of whole) if (i < part.length && Object.is(x, part[i])) i++;
  return i === part.length;
}
