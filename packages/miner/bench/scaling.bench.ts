/**
 * The engine's 1 -> 2 worker scaling alone (section 3 of kernels.bench.ts), for a quick re-run of
 * its verdict: about 2 minutes (5 rounds of about 8 s for hexchain, for tensor work as it ships, and for
 * tensor work checked on the engine's thread as before). Prints the
 * tables and the verdict line; writes nothing (the full `npm run bench` writes docs/benchmarks.md).
 *
 *   npm run bench:scaling -w @tensormine/miner
 */
import { availableParallelism, loadavg } from 'node:os';
import { selectKernel } from '../src/kernels/select.js';
import { measureScaling } from './scaling.js';

const selection = await selectKernel('native');
if (selection.kernel !== 'native') throw new Error(`the native kernels cannot run here: ${selection.notice}`);
const started = performance.now();
const load = loadavg()[0]!;
const scaling = await measureScaling(selection.nativeLibrary!);
console.log(
  `load average ${load.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end; ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
if (load > availableParallelism()) {
  console.log(
    `oversubscribed (load ${load.toFixed(1)} on ${availableParallelism()} cores): the wall-time verdict measures the neighbours too`,
  );
}
console.log(scaling.verdict);
