/**
 * The cost of the Prometheus metrics per request, side by side: two validators in their own
 * child processes, the same settings but one with /metrics on (a metrics token: the HTTP
 * histogram is observed on every answer, the series registered), one with it off; GET
 * /api/hexchain/status against each, alternated A B C, C B A, ... in one run. The figure is the
 * server CPU time per answer, on against off, round by round (each pair ran seconds apart under
 * the same neighbours), the median of the rounds (target: at most 1.05x). A third validator, the
 * same as the one with metrics off, is the control: off against off shows what the measure moves
 * by on this machine with nothing changed. About 2 minutes (3 with a baseline). BENCH_BASELINE=<checkout> adds a
 * fourth validator, metrics on, from another checkout's sources (e.g. the commit before a change
 * to the metrics), against the same validator with metrics off: before and after in one run.
 *
 *   npm run bench:metrics -w @tensormine/validator      (writes its section of docs/benchmarks.md)
 */
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import {
  alternateReads,
  median,
  type ReadTarget,
  readRatios,
  readTable,
  runBench,
  startChild,
  stopAll,
} from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const COMMAND = 'npm run bench:metrics -w @tensormine/validator';
const ROUNDS = 9;
const SECONDS = 3;
const CONNECTIONS = 100;
const STATUS = '/api/hexchain/status';
const METRICS_TOKEN = 'bench-metrics-token-0123456789';
const BASELINE = process.env.BENCH_BASELINE;
/** What the baseline checkout is, for the doc (BENCH_BASELINE_WHAT, e.g. "main at 8f52e6d"). */
const BASELINE_WHAT = process.env.BENCH_BASELINE_WHAT ?? 'another checkout';

const ARGS = [
  'start',
  '--data-dir',
  ':memory:',
  '--port',
  '0',
  '--log-level',
  'silent',
  '--rate-limit-per-second',
  '1000000',
  '--rate-limit-burst',
  '1000000',
];

async function main(): Promise<void> {
  const startedAt = performance.now();
  const loadBefore = loadavg().map((l) => l.toFixed(1));
  console.log(`validator metrics bench on ${machineLine()}`);
  try {
    const on = await startChild('validator, metrics on', 'src/bin.ts', [
      ...ARGS,
      '--metrics-token',
      METRICS_TOKEN,
    ]);
    const off = await startChild('validator, metrics off', 'src/bin.ts', ARGS);
    const control = await startChild('validator, metrics off (control)', 'src/bin.ts', ARGS);
    const baseline =
      BASELINE === undefined
        ? undefined
        : await startChild(
            'baseline validator, metrics on',
            join(BASELINE, 'packages/validator/src/bin.ts'),
            [...ARGS, '--metrics-token', METRICS_TOKEN],
          );
    const scrape = await fetch(`${on.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    if (scrape.status !== 200) throw new Error(`metrics on: GET /metrics answered ${scrape.status}`);
    if ((await fetch(`${off.url}/metrics`)).status !== 404) throw new Error('metrics off: /metrics answers');
    const targets: ReadTarget[] = [
      { name: `validator, metrics on: GET ${STATUS}`, child: on, path: STATUS, versus: 1 },
      { name: `validator, metrics off: GET ${STATUS}`, child: off, path: STATUS },
      { name: `validator, metrics off (control): GET ${STATUS}`, child: control, path: STATUS, versus: 1 },
      ...(baseline === undefined
        ? []
        : [
            {
              name: `baseline validator, metrics on: GET ${STATUS}`,
              child: baseline,
              path: STATUS,
              versus: 1,
            },
          ]),
    ];
    const samples = await alternateReads(targets, {
      rounds: ROUNDS,
      seconds: SECONDS,
      connections: CONNECTIONS,
    });
    const result = readTable(targets, samples);
    console.log(result);
    const r = readRatios(targets, samples, 0);
    const cpu = pairedCpu(samples[0]!.cpuUs, samples[1]!.cpuUs);
    const noise = pairedCpu(samples[2]!.cpuUs, samples[1]!.cpuUs);
    const met = cpu.median <= 1.05;
    const before = baseline === undefined ? undefined : pairedCpu(samples[3]!.cpuUs, samples[1]!.cpuUs);
    const verdict = `Metrics on against off: **${cpu.median.toFixed(3)}x** the server CPU per answer (median of ${ROUNDS} paired rounds, ${cpu.min.toFixed(3)}x to ${cpu.max.toFixed(3)}x; ratio of the medians ${r.cpu.toFixed(3)}x), ${r.rate.toFixed(2)}x the req/s, ${r.p99.toFixed(2)}x the p99: the target (at most 1.05x CPU per request) is ${met ? '**met**' : '**not met**'}. Control, two identical validators with metrics off: ${noise.median.toFixed(3)}x (${noise.min.toFixed(3)}x to ${noise.max.toFixed(3)}x), what this measure moves by with nothing changed.${before === undefined ? '' : ` Baseline (${BASELINE_WHAT}) with metrics on against off: ${before.median.toFixed(3)}x (${before.min.toFixed(3)}x to ${before.max.toFixed(3)}x).`}`;
    console.log(verdict);
    const seconds = (performance.now() - startedAt) / 1000;
    writeSection(
      DOC_PATH,
      'validator-metrics',
      `## Validator request cost with Prometheus metrics on and off

Command: \`${COMMAND}\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${seconds.toFixed(0)} s; load average ${loadBefore.join(' / ')} (1 / 5 / 15 min) at the start: other processes shared the 2 cores).

Three validators (in memory, rate limits raised), each in its own child process, the same
settings but \`--metrics-token\` on the first: its \`/metrics\` is served, the HTTP histogram is
observed on every answer. autocannon \`-c ${CONNECTIONS}\` for ${SECONDS} s against GET ${STATUS} of each,
alternated ${ROUNDS} times (A B C, C B A, ...), medians; the server CPU time (all threads of its
process) per answer, on against off round by round, is the figure the target is on. The third
validator is the control: the same as the one with metrics off.${baseline === undefined ? '' : ` The fourth is a baseline checkout's validator with metrics on (\`BENCH_BASELINE=<checkout>\`: ${BASELINE_WHAT}).`}

${result}

${verdict}
`,
    );
    console.log(`wrote the validator-metrics section of ${DOC_PATH}`);
  } finally {
    await stopAll();
  }
}

/** On against off, round by round: each pair ran seconds apart, under the same neighbours. */
function pairedCpu(
  on: readonly number[],
  off: readonly number[],
): { median: number; min: number; max: number } {
  const ratios = on.map((x, k) => x / off[k]!);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

runBench(main);
