/**
 * Builds the native kernels with the system's C compiler (warnings as errors) and runs their
 * self-test against the protocol vectors, as the miner does before it mines with them. Exits 1
 * when they cannot run on a CPU that has the features (a missing compiler, a build error, a
 * failed self-test); on a CPU without them it says so and exits 0 (the miner uses WebAssembly
 * there). CI runs it: `npm run native:check -w @tensormine/miner`.
 */
import { buildNativeLibrary } from '../src/kernels/native/build.js';
import { missingCpuFlags } from '../src/kernels/native/cpu.js';
import { selectKernel } from '../src/kernels/select.js';

const missing = missingCpuFlags({});
if (process.arch !== 'x64' || (missing !== undefined && missing.length > 0)) {
  console.log(
    `native kernels: not for this CPU (${process.arch}${missing?.length ? `, lacks ${missing.join(', ')}` : ''}): the miner uses wasm here`,
  );
  process.exit(0);
}
const strict = await buildNativeLibrary({ strict: true });
console.log(`native kernels: built warning-free (${strict.compiler}${strict.cached ? ', cached' : ''})`);
const selection = await selectKernel('native');
if (selection.kernel !== 'native') {
  console.error(selection.notice);
  process.exit(1);
}
console.log(`native kernels: ${selection.detail}`);
