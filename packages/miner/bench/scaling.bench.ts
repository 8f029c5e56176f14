/**
 * The engine's 1 -> 2 worker scaling (bench/scaling.ts; also section 3 of kernels.bench.ts): about
 * 2 minutes (19 rounds of 12 windows of about 540 ms: 100 ms to settle, 400 ms and up to a batch
 * at each end, then the stop). Prints the tables and the verdict line and writes the
 * `miner-scaling` section of docs/benchmarks.md.
 *
 *   npm run bench:scaling -w @tensormine/miner
 *   npm run bench:scaling -w @tensormine/miner -- --rounds 5 --window-ms 300   (a quick look)
 */
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeSection } from '../../protocol/bench/harness.js';
import { selectKernel } from '../src/kernels/select.js';
import { measureScaling, scalingSection } from './scaling.js';

const docPath = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const selection = await selectKernel('native');
if (selection.kernel !== 'native') throw new Error(`the native kernels cannot run here: ${selection.notice}`);
const load = loadavg()[0]!;
const { values } = parseArgs({
  options: { rounds: { type: 'string' }, 'window-ms': { type: 'string' }, 'settle-ms': { type: 'string' } },
});
const positive = (name: string, value: string | undefined) => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: expected a positive integer, got ${value}`);
  return n;
};
const scaling = await measureScaling(selection.nativeLibrary!, {
  rounds: positive('rounds', values.rounds),
  windowMs: positive('window-ms', values['window-ms']),
  settleMs: positive('settle-ms', values['settle-ms']),
});
for (const line of scaling.controls) console.log(`- ${line}`);
for (const line of scaling.byCpu) console.log(`1 thread by CPU, hashes per thread CPU second: ${line}`);
for (const row of [...scaling.scalingRows, ...scaling.cpuRows]) console.log(row);
writeSection(docPath, 'miner-scaling', scalingSection(scaling, load));
console.log(
  `load average ${load.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end; ${scaling.seconds.toFixed(0)} s; written to docs/benchmarks.md (miner-scaling)`,
);
console.log(scaling.verdict);
