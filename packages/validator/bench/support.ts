/**
 * Helpers of the HTTP bench: servers in child processes (always killed at the end), a
 * promise wrapper around autocannon, a small JSON client and a bounded-concurrency map.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type AutocannonOptions, type AutocannonResult } from 'autocannon';

/** packages/validator: the children run from here, so `--import tsx` resolves. */
export const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface Child {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
}

const children = new Set<ChildProcess>();

/** Last resort: a child still alive when the bench process exits is killed outright. */
process.on('exit', () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * Starts `script` (a TypeScript file, relative to packages/validator) in a child Node process
 * with the source condition, and resolves when it prints "listening on http://127.0.0.1:PORT".
 */
export function startChild(
  name: string,
  script: string,
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<Child> {
  const child = spawn(
    process.execPath,
    ['--conditions=@tensormine/source', '--import', 'tsx', script, ...args],
    { cwd: PACKAGE_DIR, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stderr!.on('data', keep);
  return new Promise<Child>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      fail(new Error(`${name}: not listening after 30 s; output:\n${output}`));
    }, 30_000);
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const onExit = (code: number | null, signal: string | null) => {
      fail(new Error(`${name}: exited (${code ?? signal}) before listening; output:\n${output}`));
    };
    child.once('exit', onExit);
    child.stdout!.on('data', (chunk: Buffer) => {
      keep(chunk);
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve({ name, url: match[1]!, process: child });
      }
    });
  });
}

/** Stops a child: SIGTERM, then SIGKILL if it is still there after 5 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Stops every child this process started. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map(stopChild));
}

/**
 * Runs a bench's `main`, then stops every child it started; a SIGINT or SIGTERM stops them too
 * before exiting (130, 143), so an interrupted bench leaves no server behind.
 */
export function runBench(main: () => Promise<void>): void {
  const onSignal = (signal: NodeJS.Signals) => {
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  main()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(() => stopAll());
}

/**
 * CPU time a process has used so far, all threads, in milliseconds (Linux: the sum of
 * /proc/PID/task/TID/schedstat); undefined where that is not available.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended in between
    }
  }
  return ns / 1e6;
}

/** CPU time of this (the load generator's) process so far, milliseconds. */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Measures the CPU time `pid` and this process spend during `run`. */
export async function withCpu<T>(
  pid: number | undefined,
  run: () => Promise<T>,
): Promise<{ value: T; serverCpuMs: number | undefined; benchCpuMs: number }> {
  const server0 = processCpuMs(pid);
  const bench0 = ownCpuMs();
  const value = await run();
  const server1 = processCpuMs(pid);
  return {
    value,
    serverCpuMs: server0 === undefined || server1 === undefined ? undefined : server1 - server0,
    benchCpuMs: ownCpuMs() - bench0,
  };
}

/** Runs autocannon to completion. */
export function cannon(options: AutocannonOptions): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** Requests per second answered 2xx over a duration-bounded autocannon run. */
export function okPerSecond(result: AutocannonResult): number {
  return result['2xx'] / result.duration;
}

/** One server route of a side-by-side read comparison. */
export interface ReadTarget {
  readonly name: string;
  readonly child: Child;
  /** Path (and query) to GET. */
  readonly path: string;
  /** Index of the target this one is compared with (its ratios); itself when absent. */
  readonly versus?: number;
}

/** What alternateReads() measured of one target, one entry per round. */
export interface ReadSamples {
  readonly rate: number[];
  readonly p50: number[];
  readonly p99: number[];
  /** Server CPU time (all threads of its process) per 2xx answer, microseconds. */
  readonly cpuUs: number[];
  /** Non-2xx answers and connection errors, all rounds. */
  bad: number;
}

/**
 * GETs each target with autocannon in turn, `rounds` times, after a warm-up of each: the
 * neighbours of a shared machine then slow every target alike, and each figure is a median over
 * rounds (readTable). The order turns around every round (A B, B A, A B, ...): no target always
 * runs after the same one (the load generator's garbage and the closing of the previous run's
 * connections fall on the next run). The server's CPU time per answer is measured too.
 */
export async function alternateReads(
  targets: readonly ReadTarget[],
  options: { rounds: number; seconds: number; connections: number; warmupSeconds?: number },
): Promise<ReadSamples[]> {
  for (const t of targets) {
    await cannon({ url: `${t.child.url}${t.path}`, connections: 100, duration: options.warmupSeconds ?? 2 });
  }
  const samples = targets.map((): ReadSamples => ({ rate: [], p50: [], p99: [], cpuUs: [], bad: 0 }));
  for (let round = 0; round < options.rounds; round++) {
    const order = [...targets.keys()];
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const t = targets[i]!;
      // The previous run's connections close before this one opens its own.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { value: r, serverCpuMs } = await withCpu(t.child.process.pid, () =>
        cannon({
          url: `${t.child.url}${t.path}`,
          connections: options.connections,
          duration: options.seconds,
          timeout: 10,
        }),
      );
      const s = samples[i]!;
      s.rate.push(okPerSecond(r));
      s.p50.push(r.latency.p50);
      s.p99.push(r.latency.p99);
      if (serverCpuMs !== undefined) s.cpuUs.push((serverCpuMs * 1000) / r['2xx']);
      s.bad += r.non2xx + r.errors;
      console.log(`  round ${round + 1} ${t.name}: ${fmt(okPerSecond(r))} req/s, p99 ${r.latency.p99} ms`);
    }
  }
  return samples;
}

/** The ratios of a target against the one it is compared with: medians, and per round. */
export function readRatios(
  targets: readonly ReadTarget[],
  samples: readonly ReadSamples[],
  i: number,
): {
  rate: number;
  p99: number;
  cpu: number;
  roundRates: number[];
  roundP99s: number[];
  pairedRate: number;
  pairedP99: number;
} {
  const s = samples[i]!;
  const b = samples[targets[i]!.versus ?? i]!;
  return {
    rate: median(s.rate) / median(b.rate),
    p99: median(s.p99) / median(b.p99),
    cpu: s.cpuUs.length === 0 ? Number.NaN : median(s.cpuUs) / median(b.cpuUs),
    // Round by round (the two ran seconds apart): the spread of the ratio itself.
    roundRates: s.rate.map((x, k) => x / b.rate[k]!),
    roundP99s: s.p99.map((x, k) => x / b.p99[k]!),
    // The median of those: each ratio compares two runs seconds apart, under the same neighbours.
    pairedRate: median(s.rate.map((x, k) => x / b.rate[k]!)),
    pairedP99: median(s.p99.map((x, k) => x / b.p99[k]!)),
  };
}

/** The markdown table of alternateReads(): medians, each round, and the ratios. */
export function readTable(targets: readonly ReadTarget[], samples: readonly ReadSamples[]): string {
  const x = (n: number) => `${n.toFixed(2)}x`;
  const spread = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `rounds ${x(sorted[0]!)} to ${x(sorted.at(-1)!)}, median ${x(median(values))}`;
  };
  return table(
    [
      'server',
      'median req/s',
      'rounds (req/s)',
      'req/s ratio (per round)',
      'p50 ms',
      'p99 ms',
      'p99 ratio (per round)',
      'server CPU us / answer (ratio)',
      'non-2xx + errors',
    ],
    targets.map((t, i) => {
      const s = samples[i]!;
      const own = (t.versus ?? i) === i;
      const r = readRatios(targets, samples, i);
      return [
        t.name,
        fmt(median(s.rate)),
        s.rate.map((v) => fmt(v)).join(', '),
        own ? '1.00x' : `**${x(r.rate)}** (${spread(r.roundRates)})`,
        fmt(median(s.p50), 1),
        fmt(median(s.p99), 1),
        own ? '1.00x' : `**${x(r.p99)}** (${spread(r.roundP99s)})`,
        s.cpuUs.length === 0 ? 'n/a' : `${fmt(median(s.cpuUs), 1)}${own ? '' : ` (${x(r.cpu)})`}`,
        String(s.bad),
      ];
    }),
  );
}

export interface SubmitRun {
  /** Responses with status 200. */
  readonly ok: number;
  /** Every other answer, by status and error code ("422 mml_above_threshold"). */
  readonly rejected: ReadonlyMap<string, number>;
  /** From just before the first connection to the last response, milliseconds. */
  readonly elapsedMs: number;
  /** How many prepared bodies autocannon took (must equal the number prepared). */
  readonly taken: number;
  readonly errors: number;
  readonly timeouts: number;
  /** Latency percentiles of the run, milliseconds. */
  readonly p50: number;
  readonly p99: number;
  /** CPU time the server process spent during the run (undefined off Linux). */
  readonly serverCpuMs: number | undefined;
}

/**
 * POSTs each prepared body exactly once with autocannon (`amount` = the number of bodies,
 * `setupRequest` takes the next one), and times the run to its last response (autocannon's own
 * duration runs on to its next sample tick).
 */
/** A request body, with its own headers when it needs them (a signed request). */
export type Submission =
  | string
  | { readonly body: string; readonly headers: Readonly<Record<string, string>> };

export async function submitAll(
  base: string,
  path: string,
  bodies: readonly Submission[],
  connections: number,
  serverPid: number | undefined,
): Promise<SubmitRun> {
  let next = 0;
  let ok = 0;
  let lastResponseAt = 0;
  const rejected = new Map<string, number>();
  const serverCpu0 = processCpuMs(serverPid);
  const startedAt = performance.now();
  const result = await cannon({
    url: base,
    connections: Math.min(connections, bodies.length),
    amount: bodies.length,
    sampleInt: 100,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          // Past the end (never expected) the last body goes again: it is then a replay,
          // rejected and counted, so an accounting error cannot pass as throughput.
          const item = bodies[Math.min(next, bodies.length - 1)]!;
          next++;
          if (typeof item === 'string') {
            req.body = item;
            return req;
          }
          return { ...req, body: item.body, headers: { ...req.headers, ...item.headers } };
        },
        onResponse: (status, body) => {
          lastResponseAt = performance.now();
          if (status === 200) {
            ok++;
            return;
          }
          let code = '';
          try {
            code = String((JSON.parse(body) as { code?: unknown }).code ?? '');
          } catch {}
          const key = `${status} ${code}`.trim();
          rejected.set(key, (rejected.get(key) ?? 0) + 1);
        },
      },
    ],
  });
  const serverCpu1 = processCpuMs(serverPid);
  return {
    ok,
    rejected,
    serverCpuMs: serverCpu0 === undefined || serverCpu1 === undefined ? undefined : serverCpu1 - serverCpu0,
    elapsedMs: lastResponseAt - startedAt,
    taken: next,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

/** Formats rejections for a table cell: "0" or "3 (409 proof_replayed: 3)". */
export function rejectionsCell(run: Pick<SubmitRun, 'rejected' | 'errors'>): string {
  const total = [...run.rejected.values()].reduce((a, b) => a + b, 0);
  const parts = [...run.rejected].map(([key, n]) => `${key}: ${n}`);
  if (run.errors > 0) parts.push(`connection errors: ${run.errors}`);
  return parts.length === 0 ? '0' : `${total + run.errors} (${parts.join(', ')})`;
}

/** A JSON request; throws on anything but 200, with the answer. */
export async function request<T>(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Maps `items` through `fn` with at most `concurrency` calls in flight; keeps the order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
