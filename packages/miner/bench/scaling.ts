/**
 * The engine's scaling from 1 to 2 worker threads against the machine's own scaling in the same
 * rounds (section 3 of kernels.bench.ts; alone: scaling.bench.ts). Issue 28's target: the
 * engine's 1 -> 2 scaling >= 0.95x the bare threads' at the same work, and >= 0.95x bare
 * JavaScript threads'.
 *
 * Every measurement is one window: the threads run, `settleMs` to settle, then `windowMs` over
 * which the hashes (shared counters, read the same way for the engine and the bare threads) and
 * each of the process's threads' CPU and run-queue time (/proc/self/task/TID/schedstat) are
 * counted. A round measures, per work, six windows back to back: engine 1 worker, bare 1 thread,
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
import { kernelJob, type MiningJob } from '../src/job.js';
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
  /** Rounds (default 15: odd, so that the median is one round's). */
  readonly rounds?: number | undefined;
  /** Counted window per measurement, ms (default 500), after `settleMs`. */
  readonly windowMs?: number | undefined;
  /** Time given to the threads to start and size their batches before a window counts, ms (default 150). */
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
  readonly scalingRows: readonly string[];
  readonly cpuRows: readonly string[];
  readonly works: readonly WorkScaling[];
  readonly met: boolean;
  /** What each side of the comparison runs, one line each. */
  readonly controls: readonly string[];
  /** One line: the verdict for every work against both controls. */
  readonly verdict: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** This thread's CPU time, ns (schedstat; else getrusage). */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    const u = process.threadCpuUsage();
    return (u.user + u.system) * 1000;
  }
}

/** The machine's CPU time from /proc/stat's first line: total and steal, in ticks (0 if unreadable). */
function machineTicks(): { total: number; steal: number } {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: f.reduce((a, b) => a + b, 0), steal: f[7] ?? 0 };
  } catch {
    return { total: 0, steal: 0 };
  }
}

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
  start(): void;
  stop(): Promise<void>;
  hashes(): number;
  found?(): number;
}

async function measure(runner: Runner, settleMs: number, windowMs: number): Promise<Window> {
  runner.start();
  await sleep(settleMs);
  const h0 = runner.hashes();
  const f0 = runner.found?.() ?? 0;
  const s0 = schedstat();
  const m0 = threadCpuNs();
  const t0 = performance.now();
  await sleep(windowMs);
  const hashes = runner.hashes() - h0;
  const found = (runner.found?.() ?? 0) - f0;
  const wall = performance.now() - t0;
  const m1 = threadCpuNs();
  const s1 = schedstat();
  await runner.stop();
  const run = (s1.run - s0.run) / 1e6;
  const hashing = (s1.hashing - s0.hashing) / 1e6;
  const main = (m1 - m0) / 1e6;
  return {
    rate: (hashes * 1000) / wall,
    perCpu: (hashes * 1000) / run,
    perHashingCpu: (hashes * 1000) / hashing,
    cores: run / wall,
    waiting: (s1.wait - s0.wait) / 1e6 / wall,
    main: main / wall,
    runtime: Math.max(0, run - hashing - main) / wall,
    found: (found * 1000) / wall,
  };
}

function engineRunner(engine: MiningEngine, job: MiningJob): Runner {
  return {
    start: () => engine.setJob(job),
    // Until every worker has left its batch, so that the next window starts on idle cores.
    stop: async () => {
      engine.setJob(undefined);
      const until = performance.now() + 5000;
      while (engine.workerStates().some((w) => w !== 'idle') && performance.now() < until) await sleep(1);
    },
    hashes: () => engine.totalHashes(),
    found: () => engine.foundCount,
  };
}

/** Bare worker threads (bare-thread.ts), started once and driven by a shared word. */
class BareThreads {
  private readonly control = new Int32Array(new SharedArrayBuffer(4));
  private readonly counters: BigInt64Array;
  private readonly workers: Worker[] = [];
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
    }
  }

  /** `count` threads on `work` (each kernel job's thread from its own slice of nonces). */
  runner(count: number, work: 'js' | MiningJob): Runner {
    return {
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
                    start: (work.nonceStart ?? 0) + i * 2 ** 40 + generation * 2 ** 32,
                    batchMs: 25,
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
      hashes: () => {
        let total = 0;
        for (let i = 0; i < this.threads; i++) total += Number(Atomics.load(this.counters, i));
        return total;
      },
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
  const rounds = options.rounds ?? 15;
  const windowMs = options.windowMs ?? 500;
  const settleMs = options.settleMs ?? 150;
  const started = performance.now();
  const threads = Math.min(2, availableParallelism());
  const engines = [
    new MiningEngine({ threads: 1, kernel: 'native' }),
    new MiningEngine({ threads, kernel: 'native' }),
  ] as const;
  const bare = new BareThreads(threads, nativeLibrary);
  await Promise.all([...engines.map((e) => e.start()), bare.start()]);
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
      await engineRunner(e, tensor).stop();
    }
    for (const work of ['js', ...works.map((w) => w.job)] as const)
      await measure(bare.runner(threads, work), settleMs, 200);

    type Pairs = { engine: Window[][]; bare: Window[][]; js: Window[][] };
    const results = new Map<string, Pairs>(works.map((w) => [w.name, { engine: [], bare: [], js: [] }]));
    for (let round = 0; round < rounds; round++) {
      const reverse = round % 2 === 1;
      for (const w of reverse ? [...works].reverse() : works) {
        const into = results.get(w.name)!;
        const pair = () => [] as Window[];
        const e = pair();
        const b = pair();
        const j = pair();
        // E1 B1 J1 E2 B2 J2 (reversed in odd rounds): see the module's comment.
        const windows: { runner: Runner; into: Window[]; k: number }[] = [
          { runner: engineRunner(engines[0], w.job), into: e, k: 0 },
          { runner: bare.runner(1, w.job), into: b, k: 0 },
          { runner: bare.runner(1, 'js'), into: j, k: 0 },
          { runner: engineRunner(engines[1], w.job), into: e, k: 1 },
          { runner: bare.runner(threads, w.job), into: b, k: 1 },
          { runner: bare.runner(threads, 'js'), into: j, k: 1 },
        ];
        for (const { runner, into: side, k } of reverse ? windows.reverse() : windows)
          side[k] = await measure(runner, settleMs, windowMs);
        into.engine.push(e);
        into.bare.push(b);
        into.js.push(j);
      }
    }
    const ticks1 = machineTicks();
    const steal =
      ticks1.total > ticks0.total ? (ticks1.steal - ticks0.steal) / (ticks1.total - ticks0.total) : 0;

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
    for (const w of works) {
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
      `engine: MiningEngine (kernel native, 1 and ${threads} workers) mining each work without stopping at a result; each tensor solution recomputed with the reference computeWork in the worker that found it, its result built and checked on the engine's thread`,
      `bare threads, same work: 1 and ${threads} worker threads with no engine, each running the same native kernel over the same job (hexchain: the native scan; tensor: TensorSearch.search, each solution recomputed with computeWork in the thread), batches sized as the engine's`,
      `bare JavaScript threads: 1 and ${threads} worker threads running plain JavaScript integer rounds (no memory traffic)`,
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
      scalingRows,
      cpuRows,
      works: works_,
      met,
      controls,
      verdict,
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
measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end; steal time ${(scaling.steal * 100).toFixed(1)}% of the machine's CPU time over the run.${oversubscribed}

Issue 28's target: the engine's scaling from 1 to ${threads} workers at least 0.95x the machine's own
scaling from 1 to ${threads} bare threads in the same rounds, against both controls below. What each
side runs:

${scaling.controls.map((c) => `- ${c}.`).join('\n')}

The work: the offline benchmark's hexchain header at a target no hash meets, and its native
64x64 matmul task at difficulty level 10 without stopping at a result (about one solution per
170 nonces, each recomputed by the reference: far more checks than real mining, where a v4.0
challenge ends at its first result). Each measurement counts the hashes over ${scaling.windowMs} ms after
${scaling.settleMs} ms to settle, from shared per-thread counters read the same way for the engine and the bare
threads. A round measures, per work, six windows back to back: engine 1 worker, bare 1 thread,
JavaScript 1 thread, engine ${threads}, bare ${threads}, JavaScript ${threads}; odd rounds run them (and the works) in the
reverse order. Each ratio of scalings, (engine ${threads} / engine 1) / (bare ${threads} / bare 1), then takes
windows whose positions cancel: a drift of the machine that is linear over a round drops out of
every round's ratio. ${scaling.rounds} rounds; figures are medians over them; each ratio is the median of
the rounds' ratios, with the median's 95% interval (distribution-free: order statistics of the
rounds) and then the range of the rounds.

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
