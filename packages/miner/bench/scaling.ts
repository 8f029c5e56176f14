/**
 * The engine's scaling from 1 to 2 worker threads against the machine's own scaling in the same
 * rounds (section 3 of kernels.bench.ts; alone: scaling.bench.ts). Issue 28's target: the
 * engine's 1 -> 2 scaling >= 0.95x the bare threads' at the same work, and >= 0.95x bare
 * JavaScript threads'.
 *
 * Every measurement is one window: the threads run, `settleMs` to settle, then each hashing
 * thread's hashes (shared counters, read the same way for the engine's workers and the bare
 * threads) and CPU time (/proc/self/task/TID/schedstat) are counted over its whole batches, from
 * a step of its counter to the first step `windowMs` later (`edges`), and the process's other
 * threads' CPU and run-queue time over the window. The hashing threads are pinned to CPUs, the
 * same for every side (`threadAffinity`): the 1-thread windows of a round all on one CPU, the
 * other CPU every two rounds; with 2 threads, one on each. Unpinned, a thread tends to stay on the
 * CPU it last ran on, and this VM's two vCPUs do not hash at the same rate per CPU second (the
 * host's load on each), so the engine's one worker and the bare thread, two different threads,
 * could each keep a CPU of its own and the ratio read the CPUs' difference (docs/benchmarks.md).
 * A round measures, per work, six windows back to back: engine 1 worker, bare 1 thread,
 * JavaScript 1 thread, engine 2, bare 2, JavaScript 2 (E1 B1 J1 E2 B2 J2); odd rounds run them
 * in the reverse order. In log terms a ratio of scalings, (E2 / E1) / (B2 / B1), weighs window
 * positions 4 - 1 - 5 + 2 = 0 (and E against J: 4 - 1 - 6 + 3 = 0), so a drift of the machine
 * that is linear over a round cancels out of each round's ratio. The verdict takes the median of
 * the rounds' ratios, with its distribution-free 95% interval (order statistics of the rounds).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { targetFromDifficulty } from '@tensormine/protocol';
import { formatRate, machineLine } from '../../protocol/bench/harness.js';
import { benchJobs } from '../src/bench.js';
import { MiningEngine } from '../src/engine.js';
import { kernelJob, type MiningJob, nonceRange } from '../src/job.js';
import { allowedCpus, threadAffinity, threadIds } from './affinity.js';
import type { BareInit, BareRun } from './bare-thread.js';

export interface Stat {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}
export const stat = (xs: readonly number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length / 2;
  const median = s.length % 2 === 1 ? s[Math.floor(mid)]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s.at(-1)! };
};
export const times = (s: Stat, bold = true) =>
  `${bold ? '**' : ''}${s.median.toFixed(2)}x${bold ? '**' : ''} (${s.min.toFixed(2)} – ${s.max.toFixed(2)})`;

/**
 * The distribution-free confidence interval of a median from n samples: the k-th smallest and
 * k-th largest, k the largest with P(Binomial(n, 1/2) < k) <= (1 - level) / 2. Undefined below
 * 6 samples (no such k at 95%).
 */
export function medianInterval(
  xs: readonly number[],
  level = 0.95,
): { low: number; high: number } | undefined {
  const n = xs.length;
  const s = [...xs].sort((a, b) => a - b);
  const tail = (1 - level) / 2;
  let below = 0; // P(Binomial(n, 1/2) < k)
  let choose = 1; // C(n, k - 1)
  let k = 0;
  for (let j = 0; j < n; j++) {
    const next = below + choose / 2 ** n;
    if (next > tail) break;
    below = next;
    k = j + 1;
    choose = (choose * (n - j)) / (j + 1);
  }
  return k === 0 ? undefined : { low: s[k - 1]!, high: s[n - k]! };
}

/** A ratio's rounds: median, range and the median's 95% interval. */
export interface RatioStat extends Stat {
  readonly interval: { readonly low: number; readonly high: number } | undefined;
}
const ratioStat = (xs: readonly number[]): RatioStat => ({ ...stat(xs), interval: medianInterval(xs) });
const ratio = (s: RatioStat, bold = true) =>
  `${bold ? '**' : ''}${s.median.toFixed(2)}x${bold ? '**' : ''} (${s.interval === undefined ? 'no interval' : `${s.interval.low.toFixed(2)} – ${s.interval.high.toFixed(2)}`}; ${s.min.toFixed(2)} – ${s.max.toFixed(2)})`;

export interface ScalingOptions {
  /** Rounds (default 19: odd, so that the median is one round's). */
  readonly rounds?: number | undefined;
  /** Counted window per measurement, ms (default 400), after `settleMs` (then to each thread's next batch end). */
  readonly windowMs?: number | undefined;
  /** Time given to the threads to start and size their batches before a window counts, ms (default 100). */
  readonly settleMs?: number | undefined;
}

export interface WorkScaling {
  readonly name: string;
  /** The engine's wall-time scaling over the bare threads' at the same work, per round. */
  readonly overBare: RatioStat;
  /** The engine's wall-time scaling over the bare JavaScript threads', per round. */
  readonly overJs: RatioStat;
  /** The same ratios of CPU-time scalings (what the threads cost each other, load aside). */
  readonly cpuOverBare: RatioStat;
  readonly cpuOverJs: RatioStat;
  readonly met: boolean;
  /** Whether the 95% intervals of both wall-time medians lie on the verdict's side of 0.95. */
  readonly decided: boolean;
}

export interface Scaling {
  readonly threads: number;
  readonly rounds: number;
  readonly windowMs: number;
  readonly settleMs: number;
  /** Wall-time seconds the measurement took. */
  readonly seconds: number;
  /** The machine's steal time over the run, as a share of its CPU time (/proc/stat; 0 if unknown). */
  readonly steal: number;
  /** The same share per CPU (/proc/stat's cpuN lines), in CPU order. */
  readonly stealByCpu: readonly { readonly cpu: number; readonly steal: number }[];
  readonly scalingRows: readonly string[];
  readonly cpuRows: readonly string[];
  readonly works: readonly WorkScaling[];
  readonly met: boolean;
  /** What each side of the comparison runs, one line each. */
  readonly controls: readonly string[];
  /** One line: the verdict for every work against both controls. */
  readonly verdict: string;
  /** Why the threads ran unpinned; undefined when every window's threads were pinned. */
  readonly unpinned: string | undefined;
  /** Per work: the 1-thread windows' hashes per hashing-thread CPU second by CPU, one line. */
  readonly byCpu: readonly string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The engines' batch time (the engine's default), and the bare threads'. */
const BATCH_MS = 25;
/** An engine worker's thread name, `tensormine-miner-N`, as /proc shows it (15 bytes). */
const ENGINE_THREAD = 'tensormine-mine';

/** This thread's CPU time, ns (schedstat; else getrusage). */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    const u = process.threadCpuUsage();
    return (u.user + u.system) * 1000;
  }
}

interface Ticks {
  readonly total: number;
  readonly steal: number;
}

/**
 * The machine's CPU time from /proc/stat, total and steal in ticks: `all` from its first line,
 * `cpus` from its cpuN lines (empty if unreadable).
 */
function machineTicks(): { all: Ticks; cpus: Map<number, Ticks> } {
  const cpus = new Map<number, Ticks>();
  let all: Ticks = { total: 0, steal: 0 };
  try {
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const m = /^cpu(\d*)\s+(.*)$/.exec(line);
      if (m === null) continue;
      const f = m[2]!.trim().split(/\s+/).slice(0, 8).map(Number);
      const ticks = { total: f.reduce((a, b) => a + b, 0), steal: f[7] ?? 0 };
      if (m[1] === '') all = ticks;
      else cpus.set(Number(m[1]), ticks);
    }
  } catch {
    // no /proc/stat: no steal figures
  }
  return { all, cpus };
}

const stealShare = (a: Ticks, b: Ticks) =>
  b.total > a.total ? (b.steal - a.steal) / (b.total - a.total) : 0;

/** A thread's kind by its name (Node names a worker thread's OS thread after its `name`). */
type ThreadKind = 'hashing' | 'main' | 'runtime';
const kinds = new Map<string, ThreadKind>();
function kindOf(tid: string): ThreadKind {
  let kind = kinds.get(tid);
  if (kind === undefined) {
    let comm = '';
    try {
      comm = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    } catch {
      // the thread ended in between
    }
    // Thread names are cut to 15 bytes: `tensormine-miner-0` reads `tensormine-mine`.
    kind =
      tid === String(process.pid)
        ? 'main'
        : comm.startsWith('tensormine-mine') || comm.startsWith('scaling-bare')
          ? 'hashing'
          : 'runtime';
    kinds.set(tid, kind);
  }
  return kind;
}

/**
 * This process's threads' time from /proc/self/task/TID/schedstat, nanoseconds: on a CPU (in
 * all, and by the hashing threads: the engine's workers or the bare threads), and runnable but
 * waiting for one (the run queue: what the neighbours' load costs it).
 */
function schedstat(): { run: number; hashing: number; wait: number } {
  let run = 0;
  let hashing = 0;
  let wait = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const [r, w] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ');
      run += Number(r);
      wait += Number(w);
      if (kindOf(tid) === 'hashing') hashing += Number(r);
    } catch {
      // the thread ended in between
    }
  }
  return { run, hashing, wait };
}

interface Window {
  /** Hashes per second of wall time. */
  readonly rate: number;
  /** Hashes per second of this process's CPU time (every thread). */
  readonly perCpu: number;
  /** Hashes per second of the hashing threads' own CPU time. */
  readonly perHashingCpu: number;
  /** CPU time over wall time: the cores the process had. */
  readonly cores: number;
  /** Run-queue wait over wall time: the cores it wanted and waited for. */
  readonly waiting: number;
  /** The main thread's CPU time over wall time (the engine's thread, for the engine). */
  readonly main: number;
  /** The runtime's other threads' CPU time over wall time (V8's compiler and GC helpers...). */
  readonly runtime: number;
  /** Results the engine emitted per second of wall time (0 for bare threads). */
  readonly found: number;
}

interface Runner {
  /** The hashing threads' ids, in the order of `threadHashes`. */
  readonly tids: readonly number[];
  start(): void;
  stop(): Promise<void>;
  /** Each hashing thread's hashes, cumulative (a worker adds its hashes after each search call). */
  threadHashes(): number[];
  found?(): number;
}

/** One hashing thread's count, with the wall and CPU time when it was read. */
interface Edge {
  readonly t: number;
  readonly h: number;
  readonly cpuNs: number;
}

/** A thread's CPU time, ns (/proc/self/task/TID/schedstat). */
function taskCpuNs(tid: number): number {
  try {
    return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

/**
 * Each hashing thread's count at the moment it steps: a worker adds its hashes at the end of a
 * search call (a batch, about 25 ms), so a count read at an arbitrary moment lags the work by up
 * to a batch; read when it has just stepped (polled every millisecond, up to `timeoutMs`), it
 * counts exactly the batches done by then, and the thread's CPU time read with it the CPU they
 * took. A window between two such reads spans whole batches of each thread.
 */
async function edges(runner: Runner, timeoutMs: number): Promise<Edge[]> {
  const seen = runner.threadHashes();
  const out: (Edge | undefined)[] = runner.tids.map(() => undefined);
  const until = performance.now() + timeoutMs;
  for (;;) {
    const hashes = runner.threadHashes();
    const now = performance.now();
    let left = 0;
    runner.tids.forEach((tid, i) => {
      if (out[i] !== undefined) return;
      if (hashes[i] !== seen[i] || now >= until) out[i] = { t: now, h: hashes[i]!, cpuNs: taskCpuNs(tid) };
      else left++;
    });
    if (left === 0) return out as Edge[];
    await sleep(1);
  }
}

/** Pins a window's hashing threads to their CPUs (thread i to cpus[i]), when pinning is on. */
type Pin = (tids: readonly number[], cpus: readonly number[]) => void;

async function measure(
  runner: Runner,
  settleMs: number,
  windowMs: number,
  pin?: { readonly pin: Pin; readonly cpus: readonly number[] },
): Promise<Window> {
  pin?.pin(runner.tids, pin.cpus);
  runner.start();
  await sleep(settleMs);
  const first = await edges(runner, EDGE_TIMEOUT_MS);
  const f0 = runner.found?.() ?? 0;
  const s0 = schedstat();
  const m0 = threadCpuNs();
  const t0 = performance.now();
  await sleep(windowMs);
  const found = (runner.found?.() ?? 0) - f0;
  const s1 = schedstat();
  const m1 = threadCpuNs();
  const wall = performance.now() - t0;
  const last = await edges(runner, EDGE_TIMEOUT_MS);
  await runner.stop();
  // The hashing threads, each over its own whole batches: hashes per second, cores, CPU ns.
  let rate = 0;
  let hashingCores = 0;
  let hashes = 0;
  let hashingNs = 0;
  first.forEach((a, i) => {
    const b = last[i]!;
    const ms = b.t - a.t;
    rate += ((b.h - a.h) * 1000) / ms;
    hashingCores += (b.cpuNs - a.cpuNs) / 1e6 / ms;
    hashes += b.h - a.h;
    hashingNs += b.cpuNs - a.cpuNs;
  });
  // Every other thread of the process (the engine's, the runtime's; idle hashing threads), over the window.
  const run = (s1.run - s0.run) / 1e6;
  const others = Math.max(0, run - (s1.hashing - s0.hashing) / 1e6) / wall;
  const main = (m1 - m0) / 1e6 / wall;
  const cores = hashingCores + others;
  return {
    rate,
    perCpu: rate / cores,
    perHashingCpu: (hashes * 1e9) / hashingNs,
    cores,
    waiting: (s1.wait - s0.wait) / 1e6 / wall,
    main,
    runtime: Math.max(0, others - main),
    found: (found * 1000) / wall,
  };
}

/**
 * How long a count may take to step before it is read as it is: a batch is about 25 ms of wall
 * time, far longer for a thread the machine starves (on an oversubscribed machine), which is
 * still counted over whole batches.
 */
const EDGE_TIMEOUT_MS = 2000;

function engineRunner(engine: MiningEngine, job: MiningJob, tids: readonly number[]): Runner {
  return {
    tids,
    start: () => engine.setJob(job),
    // Until every worker has left its batch, so that the next window starts on idle cores.
    stop: async () => {
      engine.setJob(undefined);
      const until = performance.now() + 5000;
      while (engine.workerStates().some((w) => w !== 'idle') && performance.now() < until) await sleep(1);
    },
    threadHashes: () => engine.workerHashes(),
    found: () => engine.foundCount,
  };
}

/** Bare worker threads (bare-thread.ts), started once and driven by a shared word. */
class BareThreads {
  private readonly control = new Int32Array(new SharedArrayBuffer(4));
  private readonly counters: BigInt64Array;
  private readonly workers: Worker[] = [];
  /** The threads' ids (thread i named `scaling-bare-i`), once started. */
  tids: number[] = [];
  private generation = 0;
  private running: Promise<unknown>[] = [];
  /** The pending ends of the runs, by generation and thread. */
  private readonly ended = new Map<number, Map<number, { resolve(): void; reject(error: Error): void }>>();

  constructor(
    private readonly threads: number,
    private readonly nativeLibrary: string,
  ) {
    this.counters = new BigInt64Array(new SharedArrayBuffer(8 * threads));
  }

  async start(): Promise<void> {
    const loader = new URL('../src/worker/source-loader.mjs', import.meta.url);
    const entry = new URL('./bare-thread.ts', import.meta.url).href;
    for (let index = 0; index < this.threads; index++) {
      const data: BareInit & { entry: string } = {
        index,
        nativeLibrary: this.nativeLibrary,
        control: this.control,
        counters: this.counters,
        entry,
      };
      const worker = new Worker(loader, {
        workerData: data,
        name: `scaling-bare-${index}`,
        execArgv: ['--experimental-transform-types', '--disable-warning=ExperimentalWarning'],
      });
      this.workers.push(worker);
      await new Promise<void>((resolve, reject) => {
        worker.once('message', () => resolve());
        worker.once('error', reject);
      });
      // From now on: a run's end (its generation) resolves its wait; an error fails every wait.
      worker.on('message', (m: { done?: number }) =>
        this.ended
          .get(m.done ?? -1)
          ?.get(index)
          ?.resolve(),
      );
      worker.on('error', (error) => {
        for (const runs of this.ended.values()) runs.get(index)?.reject(error);
      });
      const [tid] = threadIds(`scaling-bare-${index}`);
      if (tid === undefined) throw new Error(`bare thread ${index}: no thread named scaling-bare-${index}`);
      this.tids.push(tid);
    }
  }

  /**
   * `count` threads on `work`: a kernel job's thread i on the slice of nonces the engine's pool
   * gives its worker i of `count` (worker/pool.ts `dispatch`), from the job's start at every run
   * as the engine's workers start at every `setJob`.
   */
  runner(count: number, work: 'js' | MiningJob): Runner {
    const range = work === 'js' ? undefined : nonceRange(work);
    return {
      tids: this.tids.slice(0, count),
      start: () => {
        const generation = ++this.generation;
        Atomics.store(this.control, 0, generation);
        const ends = new Map<number, { resolve(): void; reject(error: Error): void }>();
        this.ended.set(generation, ends);
        this.running = this.workers.slice(0, count).map((w, i) => {
          const run: BareRun = {
            generation,
            work:
              work === 'js'
                ? 'js'
                : {
                    job: kernelJob(work),
                    start: range!.start + i * Math.floor((range!.end - range!.start) / count),
                    end:
                      i === count - 1
                        ? range!.end
                        : range!.start + (i + 1) * Math.floor((range!.end - range!.start) / count),
                    batchMs: BATCH_MS,
                  },
          };
          const done = new Promise<void>((resolve, reject) => ends.set(i, { resolve, reject }));
          w.postMessage(run);
          return done;
        });
      },
      stop: async () => {
        const generation = this.generation;
        Atomics.store(this.control, 0, ++this.generation);
        await Promise.all(this.running);
        this.ended.delete(generation);
      },
      threadHashes: () => Array.from({ length: count }, (_, i) => Number(Atomics.load(this.counters, i))),
    };
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * Measures the engine (kernel native) with 1 and 2 workers against bare threads with 1 and 2
 * threads at the same work and bare JavaScript threads, at the hexchain work and at the tensor
 * work as the engine ships it (each solution recomputed with the reference in its worker), over
 * `rounds` rounds (12 windows each).
 */
export async function measureScaling(nativeLibrary: string, options: ScalingOptions = {}): Promise<Scaling> {
  const rounds = options.rounds ?? 19;
  const windowMs = options.windowMs ?? 400;
  const settleMs = options.settleMs ?? 100;
  const started = performance.now();
  const threads = Math.min(2, availableParallelism());
  const engines = [
    new MiningEngine({ threads: 1, kernel: 'native', batchMs: BATCH_MS }),
    new MiningEngine({ threads, kernel: 'native', batchMs: BATCH_MS }),
  ] as const;
  const bare = new BareThreads(threads, nativeLibrary);
  // One at a time, so that each engine's workers are told apart by their thread ids; within an
  // engine, worker i is the i-th id (the pool creates worker i's thread before i + 1's, and Linux
  // hands out ids in increasing order; a wrap of the ids in between would swap two threads' CPU
  // times in `edges`, not the sums a window reports).
  const engineTids: number[][] = [];
  for (const e of engines) {
    const before = new Set(threadIds(ENGINE_THREAD));
    await e.start();
    engineTids.push(threadIds(ENGINE_THREAD).filter((tid) => !before.has(tid)));
  }
  await bare.start();
  // Every window's hashing threads on the same CPUs, engine and bare alike (see the module's comment).
  const affinity = threadAffinity();
  const cpus = allowedCpus().slice(0, threads);
  const pinning =
    'unavailable' in affinity
      ? affinity.unavailable
      : cpus.length < threads
        ? `${cpus.length} CPUs allowed for ${threads} threads`
        : engineTids.some((t, i) => t.length !== engines[i]!.threads)
          ? "the engines' worker threads were not found by name"
          : undefined;
  const pin: Pin | undefined =
    pinning === undefined && !('unavailable' in affinity)
      ? (tids, to) => {
          for (const [i, tid] of tids.entries()) affinity.pin(tid, to[i]!);
        }
      : undefined;
  const never = targetFromDifficulty(2n ** 53n - 1n); // no hexchain result interrupts the measurement
  const hexBench = benchJobs(1, 0)[0]!;
  const nativeMatmul = benchJobs(0, 1)[0]!;
  const works: { name: string; job: MiningJob }[] = [
    {
      name: 'hexchain',
      job: { ...hexBench.job, target: never, nonceEnd: 2 ** 52 } as MiningJob,
    },
    { name: nativeMatmul.name, job: { ...nativeMatmul.job, nonceEnd: 2 ** 52 } },
  ];
  const ticks0 = machineTicks();
  try {
    // Every engine worker loads the reference with its first tensor job (from source: seconds on
    // a busy machine), and every thread's code warms up: mine the tensor work until each engine
    // has emitted results for a while, and run the bare threads at it, before anything counts.
    const tensor = works[1]!.job;
    for (const e of engines) {
      const before = e.foundCount;
      e.setJob({ ...tensor, nonceStart: 2 ** 41, nonceEnd: 2 ** 42 });
      const until = performance.now() + 30_000;
      while (e.foundCount < before + 20 * e.threads && performance.now() < until) await sleep(100);
      await engineRunner(e, tensor, []).stop();
    }
    for (const work of ['js', ...works.map((w) => w.job)] as const)
      await measure(bare.runner(threads, work), settleMs, 200);

    /** Per round: the windows (1 and `threads` threads) of each side, and the 1-thread windows' CPU. */
    type Pairs = { engine: Window[][]; bare: Window[][]; js: Window[][]; cpu: number[] };
    const results = new Map<string, Pairs>(
      works.map((w) => [w.name, { engine: [], bare: [], js: [], cpu: [] }]),
    );
    for (let round = 0; round < rounds; round++) {
      const reverse = round % 2 === 1;
      // The 1-thread windows' CPU: the same for the engine, bare and JavaScript threads in a
      // round, the other CPU every second round (so each order runs on each CPU).
      const one = [cpus[Math.floor(round / 2) % cpus.length]!];
      for (const w of reverse ? [...works].reverse() : works) {
        const into = results.get(w.name)!;
        const pair = () => [] as Window[];
        const e = pair();
        const b = pair();
        const j = pair();
        // E1 B1 J1 E2 B2 J2 (reversed in odd rounds): see the module's comment.
        const windows: { runner: Runner; into: Window[]; k: number }[] = [
          { runner: engineRunner(engines[0], w.job, engineTids[0]!), into: e, k: 0 },
          { runner: bare.runner(1, w.job), into: b, k: 0 },
          { runner: bare.runner(1, 'js'), into: j, k: 0 },
          { runner: engineRunner(engines[1], w.job, engineTids[1]!), into: e, k: 1 },
          { runner: bare.runner(threads, w.job), into: b, k: 1 },
          { runner: bare.runner(threads, 'js'), into: j, k: 1 },
        ];
        for (const { runner, into: side, k } of reverse ? windows.reverse() : windows)
          side[k] = await measure(
            runner,
            settleMs,
            windowMs,
            pin === undefined ? undefined : { pin, cpus: k === 0 ? one : cpus },
          );
        into.cpu.push(one[0]!);
        into.engine.push(e);
        into.bare.push(b);
        into.js.push(j);
      }
    }
    const ticks1 = machineTicks();
    const steal = stealShare(ticks0.all, ticks1.all);
    const stealByCpu = [...ticks1.cpus.entries()]
      .filter(([cpu]) => ticks0.cpus.has(cpu))
      .map(([cpu, t]) => ({ cpu, steal: stealShare(ticks0.cpus.get(cpu)!, t) }));

    const scaling = (pairs: Window[][]) => pairs.map(([one, two]) => two!.rate / one!.rate);
    const cpuScaling = (pairs: Window[][]) =>
      pairs.map(([one, two]) => (threads * two!.perCpu) / one!.perCpu);
    const over = (a: number[], b: number[]) => ratioStat(a.map((x, i) => x / b[i]!));
    const med = (xs: number[]) => stat(xs).median;
    const fmt = (xs: number[]) => med(xs).toFixed(2);
    const pairRate = (pairs: Window[][], k: number, f: (w: Window) => number) =>
      formatRate(med(pairs.map((p) => f(p[k]!))));
    const scalingRows: string[] = [];
    const cpuRows: string[] = [];
    const works_: WorkScaling[] = [];
    const byCpu: string[] = [];
    for (const w of works) {
      if (pin !== undefined) {
        const { engine: e, bare: b, js: j, cpu } = results.get(w.name)!;
        const on = (pairs: Window[][], c: number) => {
          const xs = pairs.filter((_, r) => cpu[r] === c).map((p) => p[0]!.perHashingCpu);
          return xs.length === 0 ? 'n/a' : formatRate(med(xs));
        };
        byCpu.push(
          `${w.name} (CPU ${cpus.join(' / CPU ')}): engine ${cpus.map((c) => on(e, c)).join(' / ')}, bare ${cpus.map((c) => on(b, c)).join(' / ')}, JavaScript ${cpus.map((c) => on(j, c)).join(' / ')}`,
        );
      }
      const { engine: e, bare: b, js: j } = results.get(w.name)!;
      const es = scaling(e);
      const overBare = over(es, scaling(b));
      const overJs = over(es, scaling(j));
      const cpuOverBare = over(cpuScaling(e), cpuScaling(b));
      const cpuOverJs = over(cpuScaling(e), cpuScaling(j));
      const met = overBare.median >= 0.95 && overJs.median >= 0.95;
      // Decided: met with both intervals at or above 0.95, or not met with an interval below it.
      const both = [overBare, overJs];
      const decided = met
        ? both.every((r) => r.interval !== undefined && r.interval.low >= 0.95)
        : both.some((r) => r.interval !== undefined && r.interval.high < 0.95);
      works_.push({ name: w.name, overBare, overJs, cpuOverBare, cpuOverJs, met, decided });
      scalingRows.push(
        `| ${w.name} | ${pairRate(e, 0, (x) => x.rate)} | ${pairRate(e, 1, (x) => x.rate)} | ${times(stat(es))} | ${times(stat(scaling(b)), false)} | ${times(stat(scaling(j)), false)} | ${ratio(overBare)} | ${ratio(overJs)} |`,
      );
      cpuRows.push(
        `| ${w.name} | ${fmt(e.map((p) => p[0]!.cores))} / ${fmt(e.map((p) => p[0]!.waiting))} | ${fmt(e.map((p) => p[1]!.cores))} / ${fmt(e.map((p) => p[1]!.waiting))} | ${fmt(e.map((p) => p[0]!.main))} / ${fmt(e.map((p) => p[1]!.main))} | ${fmt(e.map((p) => p[0]!.runtime))} / ${fmt(e.map((p) => p[1]!.runtime))} | ${fmt(b.map((p) => p[0]!.runtime))} / ${fmt(b.map((p) => p[1]!.runtime))} | ${formatRate(med(e.map((p) => p[0]!.found)))} / ${formatRate(med(e.map((p) => p[1]!.found)))} | ${pairRate(e, 0, (x) => x.perHashingCpu)} / ${pairRate(e, 1, (x) => x.perHashingCpu)} | ${pairRate(b, 0, (x) => x.perHashingCpu)} / ${pairRate(b, 1, (x) => x.perHashingCpu)} | ${pairRate(e, 0, (x) => x.perCpu)} / ${pairRate(e, 1, (x) => x.perCpu)} | ${pairRate(b, 0, (x) => x.perCpu)} / ${pairRate(b, 1, (x) => x.perCpu)} | ${ratio(cpuOverBare)} | ${ratio(cpuOverJs, false)} |`,
      );
    }
    const controls = [
      `engine: MiningEngine (kernel native, 1 and ${threads} workers, batches of about ${BATCH_MS} ms) mining each work from its start at every window without stopping at a result; each tensor solution recomputed with the reference computeWork in the worker that found it, its result built and checked on the engine's thread`,
      `bare threads, same work: 1 and ${threads} worker threads with no engine, each running what the engine's worker of its index runs: the same slice of the same job's nonces from its start at every window, in the same batches (sized to about ${BATCH_MS} ms, each searched to its end through its solutions, the count added after every search call) with the same native kernel (hexchain: the native scan, each candidate hashed in full; tensor: TensorSearch.search, each solution recomputed with computeWork in the thread)`,
      `bare JavaScript threads: 1 and ${threads} worker threads running plain JavaScript integer rounds (no memory traffic)`,
      pin === undefined
        ? `threads unpinned (${pinning ?? 'no pinning'}): each window's threads ran where the scheduler put them`
        : `every window's hashing threads pinned to CPUs (sched_setaffinity on their thread ids), the same for the three sides: with 1 thread, to the same CPU for the engine's worker, the bare thread and the JavaScript thread in a round, CPU ${cpus.join(' and CPU ')} in turn every two rounds; with ${threads}, thread i to the i-th CPU; the engine's own thread and the runtime's threads unpinned`,
    ];
    const met = works_.every((r) => r.met);
    const undecided = works_.filter((r) => !r.decided).map((r) => r.name);
    const verdict = `engine scaling 1 -> ${threads} workers over the machine's in the same rounds, wall time, median of ${rounds} rounds (95% interval of the median; range): ${works_.map((r) => `${r.name} ${ratio(r.overBare, false)} against bare threads at the same work, ${ratio(r.overJs, false)} against bare JavaScript threads`).join('; ')}; target >= 0.95 on both: ${met ? 'met' : 'NOT MET'}${
      met
        ? ''
        : ` (${works_
            .filter((r) => !r.met)
            .map((r) => r.name)
            .join(', ')})`
    }${undecided.length === 0 ? '' : `; not decided by this run for ${undecided.join(', ')} (an interval straddles 0.95: a re-run may fall either side)`}`;
    return {
      threads,
      rounds,
      windowMs,
      settleMs,
      seconds: (performance.now() - started) / 1000,
      steal,
      stealByCpu,
      scalingRows,
      cpuRows,
      works: works_,
      met,
      controls,
      verdict,
      unpinned: pin === undefined ? (pinning ?? 'no pinning') : undefined,
      byCpu,
    };
  } finally {
    await Promise.all([...engines.map((e) => e.stop()), bare.stop()]);
  }
}

/**
 * The `miner-scaling` section of docs/benchmarks.md (written by scaling.bench.ts and by
 * kernels.bench.ts), from a measurement and the load average before it.
 */
export function scalingSection(scaling: Scaling, loadAtStart: number): string {
  const { threads } = scaling;
  const cores = availableParallelism();
  const loadAtEnd = loadavg()[0]!;
  const oversubscribed =
    loadAtStart > cores
      ? `\n\n**Measured on an oversubscribed machine** (load average ${loadAtStart.toFixed(1)} on ${cores} cores at the start): what a second thread gets is then the neighbours' to decide, so the wall-time ratios and the verdict measure them as much as the engine; the CPU-time ratios (second table) hold. Re-run on a quiet machine.`
      : '';
  return `### Engine scaling, 1 to ${threads} worker threads (kernel native)

Command: \`npm run bench:scaling -w @tensormine/miner\` (${scaling.seconds.toFixed(0)} s; \`npm run bench\` runs it too),
measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end; steal time ${(scaling.steal * 100).toFixed(1)}% of the machine's CPU time over the run${scaling.stealByCpu.length > 1 ? ` (${scaling.stealByCpu.map((c) => `CPU ${c.cpu} ${(c.steal * 100).toFixed(1)}%`).join(', ')})` : ''}.${oversubscribed}

Issue 28's target: the engine's scaling from 1 to ${threads} workers at least 0.95x the machine's own
scaling from 1 to ${threads} bare threads in the same rounds, against both controls below. What each
side runs:

${scaling.controls.map((c) => `- ${c}.`).join('\n')}

The work: the offline benchmark's hexchain header at a target no hash meets, and its native
64x64 matmul task at difficulty level 10 without stopping at a result (about one solution per
170 nonces, each recomputed by the reference: far more checks than real mining, where a v4.0
challenge ends at its first result). Each measurement starts its threads, gives them ${scaling.settleMs} ms to
settle, then counts each hashing thread's hashes and CPU time over whole batches: from the moment
its shared counter steps (a worker adds a batch's hashes at its end; read every millisecond) to the
moment it steps again ${scaling.windowMs} ms or more later, read the same way for the engine's workers and the
bare threads (a count read at an arbitrary moment lags the work by up to a batch of 25 ms, 5% of
such a window). A round measures, per work, six windows back to back: engine 1 worker, bare 1 thread,
JavaScript 1 thread, engine ${threads}, bare ${threads}, JavaScript ${threads}; odd rounds run them (and the works) in the
reverse order. Each ratio of scalings, (engine ${threads} / engine 1) / (bare ${threads} / bare 1), then takes
windows whose positions cancel: a drift of the machine that is linear over a round drops out of
every round's ratio. ${scaling.rounds} rounds; figures are medians over them; each ratio is the median of
the rounds' ratios, with the median's 95% interval (distribution-free: order statistics of the
rounds) and then the range of the rounds.${
    scaling.byCpu.length === 0
      ? ''
      : `

The CPUs, side by side: hashes per second of the hashing thread's own CPU time in the 1-thread
windows, medians by the CPU they were pinned to (the pinning is what keeps a difference between the two from
reading as the engine's): ${scaling.byCpu.join('; ')}.`
  }

| work | engine, 1 worker | engine, ${threads} workers | engine scaling, wall time | bare threads at the same work: scaling | bare JavaScript threads: scaling | engine / bare (target 0.95) | engine / JavaScript (target 0.95) |
|---|---|---|---|---|---|---|---|
${scaling.scalingRows.join('\n')}

Verdict: ${scaling.verdict}.

Where the time goes, from the same windows: the cores the bench process had (its threads' CPU
time over the window, /proc/self/task/*/schedstat) and the cores it waited for (run-queue time:
runnable threads no core was free for); the CPU time of the engine's thread and of the runtime's
other threads (V8's compiler and garbage collector helpers) beside the hashing threads' (the
engine's workers or the bare threads, told apart by their thread names); the results the engine
emitted; hashes per second of the hashing threads' own CPU time (what a hash costs a worker) and
of the process's (every thread). The CPU-time scaling, ${threads} x (hashes per process CPU second with ${threads}
threads) / (with 1), is the scaling with a core per thread: below ${threads}x only by what the threads
cost each other and the engine's own work; its ratio, engine over bare, is what the engine costs
per worker whatever the load, while the wall-time ratio adds how much of the second core the
machine gave each side.

| work | engine, 1 worker: cores had / waited for | ${threads} workers: cores had / waited for | engine's thread's cores, 1 / ${threads} | engine: runtime threads' cores, 1 / ${threads} | bare: runtime threads' cores, 1 / ${threads} | results emitted per second, 1 / ${threads} | engine: hashes per worker CPU second, 1 / ${threads} | bare: hashes per thread CPU second, 1 / ${threads} | engine: hashes per process CPU second, 1 / ${threads} | bare: hashes per process CPU second, 1 / ${threads} | CPU-time scaling, engine / bare | CPU-time scaling, engine / JavaScript |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${scaling.cpuRows.join('\n')}`;
}
