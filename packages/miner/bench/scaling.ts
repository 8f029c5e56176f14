/**
 * The engine's scaling from 1 to 2 worker threads against the machine's own scaling in the same
 * rounds (section 3 of kernels.bench.ts; alone: scaling.bench.ts). Issue 28's target: the
 * engine's 1 -> 2 scaling >= 0.95x the bare threads' at the same work.
 *
 * Every measurement is one window: the threads run, 200 ms to settle, then `windowMs` over which
 * the hashes (shared counters, read the same way for the engine and the bare threads) and the
 * process's threads' CPU and run-queue time (/proc/self/task/TID/schedstat) are counted. A round
 * measures, back to back: the bare JavaScript threads (1 and 2), then for each work the engine
 * (1 and 2 workers) and bare threads running the same work (1 and 2); odd rounds run the same
 * windows in the reverse order (A B B A), so that a drift of the machine over a round weighs on
 * both sides of each ratio alike. Each round gives each ratio once; the verdict takes the median
 * of the rounds.
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
  return { median: s[Math.floor(s.length / 2)]!, min: s[0]!, max: s.at(-1)! };
};
export const times = (s: Stat, bold = true) =>
  `${bold ? '**' : ''}${s.median.toFixed(2)}x${bold ? '**' : ''} (${s.min.toFixed(2)} – ${s.max.toFixed(2)})`;

export interface ScalingOptions {
  /** Rounds (default 9: odd, so that the median is one round's). */
  readonly rounds?: number | undefined;
  /** Counted window per measurement, ms (default 1000), after 200 ms to settle. */
  readonly windowMs?: number | undefined;
}

export interface WorkScaling {
  readonly name: string;
  /** The engine's scaling over the bare threads' at the same work, per round. */
  readonly overBare: Stat;
  /** The engine's scaling over the bare JavaScript threads', per round. */
  readonly overJs: Stat;
  readonly met: boolean;
}

export interface Scaling {
  readonly threads: number;
  readonly rounds: number;
  readonly windowMs: number;
  /** Wall-time seconds the measurement took. */
  readonly seconds: number;
  readonly scalingRows: readonly string[];
  readonly cpuRows: readonly string[];
  readonly works: readonly WorkScaling[];
  readonly met: boolean;
  /** What each side of the comparison runs, one line each. */
  readonly controls: readonly string[];
  /** One line: the verdict for every work against both controls. */
  readonly verdict: string;
}

const SETTLE_MS = 200;
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

/**
 * This process's threads' time from /proc/self/task/TID/schedstat, nanoseconds: on a CPU, and
 * runnable but waiting for one (the run queue: what the neighbours' load costs it).
 */
function schedstat(): { run: number; wait: number } {
  let run = 0;
  let wait = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const [r, w] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ');
      run += Number(r);
      wait += Number(w);
    } catch {
      // the thread ended in between
    }
  }
  return { run, wait };
}

interface Window {
  /** Hashes per second of wall time. */
  readonly rate: number;
  /** Hashes per second of this process's CPU time (every thread). */
  readonly perCpu: number;
  /** CPU time over wall time: the cores the process had. */
  readonly cores: number;
  /** Run-queue wait over wall time: the cores it wanted and waited for. */
  readonly waiting: number;
  /** The main thread's CPU time over wall time (the engine's thread, for the engine). */
  readonly main: number;
  /** Results the engine emitted per second of wall time (0 for bare threads). */
  readonly found: number;
}

interface Runner {
  start(): void;
  stop(): Promise<void>;
  hashes(): number;
  found?(): number;
}

async function measure(runner: Runner, windowMs: number): Promise<Window> {
  runner.start();
  await sleep(SETTLE_MS);
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
  return {
    rate: (hashes * 1000) / wall,
    perCpu: (hashes * 1000) / run,
    cores: run / wall,
    waiting: (s1.wait - s0.wait) / 1e6 / wall,
    main: (m1 - m0) / 1e6 / wall,
    found: (found * 1000) / wall,
  };
}

function engineRunner(engine: MiningEngine, job: MiningJob): Runner {
  return {
    start: () => engine.setJob(job),
    stop: async () => engine.setJob(undefined),
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
 * threads, at the hexchain work and at the tensor work as the engine ships it (each solution
 * recomputed with the reference in its worker), over `rounds` rounds (about 12 s each).
 */
export async function measureScaling(nativeLibrary: string, options: ScalingOptions = {}): Promise<Scaling> {
  const rounds = options.rounds ?? 9;
  const windowMs = options.windowMs ?? 1000;
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
      e.setJob(undefined);
    }
    for (const work of ['js', ...works.map((w) => w.job)] as const)
      await measure(bare.runner(threads, work), 200);

    const js: Window[][] = [];
    const engine = new Map<string, Window[][]>(works.map((w) => [w.name, []]));
    const bareWork = new Map<string, Window[][]>(works.map((w) => [w.name, []]));
    for (let round = 0; round < rounds; round++) {
      // The round's windows: pairs (1 thread, 2 threads), each pair's order and the pairs'
      // order reversed in odd rounds.
      const pairs: { runners: [Runner, Runner]; into: Window[][] }[] = [
        { runners: [bare.runner(1, 'js'), bare.runner(threads, 'js')], into: js },
      ];
      for (const w of works) {
        pairs.push({
          runners: [engineRunner(engines[0], w.job), engineRunner(engines[1], w.job)],
          into: engine.get(w.name)!,
        });
        pairs.push({
          runners: [bare.runner(1, w.job), bare.runner(threads, w.job)],
          into: bareWork.get(w.name)!,
        });
      }
      const reverse = round % 2 === 1;
      for (const { runners, into } of reverse ? pairs.reverse() : pairs) {
        const pair: Window[] = [];
        for (const k of reverse ? [1, 0] : [0, 1]) pair[k] = await measure(runners[k]!, windowMs);
        into.push(pair);
      }
    }

    const scaling = (pairs: Window[][]) => pairs.map(([one, two]) => two!.rate / one!.rate);
    const cpuScaling = (pairs: Window[][]) =>
      pairs.map(([one, two]) => (threads * two!.perCpu) / one!.perCpu);
    const jsScaling = scaling(js);
    const fmt = (xs: number[]) => stat(xs).median.toFixed(2);
    const scalingRows: string[] = [];
    const cpuRows: string[] = [];
    const results: WorkScaling[] = [];
    for (const w of works) {
      const e = engine.get(w.name)!;
      const b = bareWork.get(w.name)!;
      const es = scaling(e);
      const bs = scaling(b);
      const overBare = stat(es.map((x, i) => x / bs[i]!));
      const overJs = stat(es.map((x, i) => x / jsScaling[i]!));
      results.push({ name: w.name, overBare, overJs, met: overBare.median >= 0.95 && overJs.median >= 0.95 });
      scalingRows.push(
        `| ${w.name} | ${formatRate(stat(e.map((p) => p[0]!.rate)).median)} | ${formatRate(stat(e.map((p) => p[1]!.rate)).median)} | ${times(stat(es))} | ${times(stat(bs), false)} | ${times(overBare)} | ${times(stat(jsScaling), false)} | ${times(overJs)} |`,
      );
      cpuRows.push(
        `| ${w.name} | ${fmt(e.map((p) => p[0]!.cores))} / ${fmt(e.map((p) => p[0]!.waiting))} | ${fmt(e.map((p) => p[1]!.cores))} / ${fmt(e.map((p) => p[1]!.waiting))} | ${fmt(e.map((p) => p[0]!.main))} / ${fmt(e.map((p) => p[1]!.main))} | ${formatRate(stat(e.map((p) => p[0]!.found)).median)} / ${formatRate(stat(e.map((p) => p[1]!.found)).median)} | ${formatRate(stat(e.map((p) => p[0]!.perCpu)).median)} / ${formatRate(stat(e.map((p) => p[1]!.perCpu)).median)} | ${times(stat(cpuScaling(e)))} | ${formatRate(stat(b.map((p) => p[0]!.perCpu)).median)} / ${formatRate(stat(b.map((p) => p[1]!.perCpu)).median)} | ${times(stat(cpuScaling(b)), false)} |`,
      );
    }
    const controls = [
      `engine: MiningEngine (kernel native, 1 and ${threads} workers) mining each work without stopping at a result; each tensor solution recomputed with the reference computeWork in the worker that found it, its result built and checked on the engine's thread`,
      `bare threads, same work: 1 and ${threads} worker threads with no engine, each running the same native kernel over the same job (hexchain: the native scan; tensor: TensorSearch.search, each solution recomputed with computeWork in the thread), batches sized as the engine's`,
      `bare JavaScript threads: 1 and ${threads} worker threads running plain JavaScript integer rounds (no memory traffic)`,
    ];
    const met = results.every((r) => r.met);
    const verdict = `engine scaling 1 -> ${threads} workers over the machine's in the same rounds, median of ${rounds} rounds (range): ${results.map((r) => `${r.name} ${times(r.overBare, false)} against bare threads at the same work, ${times(r.overJs, false)} against bare JavaScript threads`).join('; ')}; target >= 0.95 on both: ${met ? 'met' : 'NOT MET'}${
      met
        ? ''
        : ` (${results
            .filter((r) => !r.met)
            .map((r) => r.name)
            .join(', ')})`
    }`;
    return {
      threads,
      rounds,
      windowMs,
      seconds: (performance.now() - started) / 1000,
      scalingRows,
      cpuRows,
      works: results,
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
      ? `\n\n**Measured on an oversubscribed machine** (load average ${loadAtStart.toFixed(1)} on ${cores} cores at the start): what a second thread gets is then the neighbours' to decide, so the wall-time ratios and the verdict measure them as much as the engine; the CPU-time scaling (second table) holds. Re-run on a quiet machine.`
      : '';
  return `### Engine scaling, 1 to ${threads} worker threads (kernel native)

Command: \`npm run bench:scaling -w @tensormine/miner\` (${scaling.seconds.toFixed(0)} s; \`npm run bench\` runs it too),
measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end.${oversubscribed}

Issue 28's target: the engine's scaling from 1 to ${threads} workers at least 0.95x the machine's own
scaling from 1 to ${threads} bare threads in the same rounds, against both controls below. What each
side runs:

${scaling.controls.map((c) => `- ${c}.`).join('\n')}

The work: the offline benchmark's hexchain header at a target no hash meets, and its native
64x64 matmul task at difficulty level 10 without stopping at a result (about one solution per
170 nonces, each recomputed by the reference: far more checks than real mining, where a v4.0
challenge ends at its first result). Each measurement counts the hashes over ${scaling.windowMs} ms after
200 ms to settle, from shared per-thread counters read the same way for the engine and the bare
threads. A round measures every pair (1 thread, then ${threads}) back to back: the JavaScript
threads, then per work the engine and the bare threads at that work; odd rounds run the same
windows in the reverse order, so that a drift of the machine over a round weighs on both sides
of each ratio. ${scaling.rounds} rounds; figures are medians over them with their range, ratios are
medians of the per-round ratios.

| work | engine, 1 worker | engine, ${threads} workers | engine scaling, wall time | bare threads at the same work: scaling | engine / bare (target 0.95) | bare JavaScript threads: scaling | engine / JavaScript (target 0.95) |
|---|---|---|---|---|---|---|---|
${scaling.scalingRows.join('\n')}

Verdict: ${scaling.verdict}.

Where the time goes, from the same windows: the cores the bench process had (its threads' CPU
time over the window, /proc/self/task/*/schedstat) and the cores it waited for (run-queue time:
runnable threads no core was free for), the engine's thread's own CPU time and the results it
emitted, and the hashes per second of the process's CPU time (every thread: the workers, the
engine's thread, the runtime's). The CPU-time scaling, ${threads} x (hashes per CPU second with ${threads}
threads) / (with 1), is the scaling with a core per thread: below ${threads}x only by what the threads
cost each other and the engine's own work (its thread, messages, memory and caches shared by
the workers); the wall-time scaling is that times the share of the second core the machine gave.

| work | engine, 1 worker: cores had / waited for | ${threads} workers: cores had / waited for | engine's thread's cores, 1 / ${threads} workers | results emitted per second, 1 / ${threads} | engine: hashes per CPU second, 1 / ${threads} | engine: CPU-time scaling | bare threads: hashes per CPU second, 1 / ${threads} | bare threads: CPU-time scaling |
|---|---|---|---|---|---|---|---|---|
${scaling.cpuRows.join('\n')}`;
}
