/**
 * A mining worker: one per thread, long-lived. It receives a job (kernel input and a nonce
 * range), runs the kernel in batches, adds each batch's hashes to its shared counter and
 * posts what it finds. Between batches it reads the shared control block: a new generation
 * (new job or stop) drops the job, the pause flag makes it wait, the intensity makes it sleep
 * a proportional time. Waits use Atomics.waitAsync, so messages keep arriving while it waits.
 *
 * A job's result that ends it is posted at once; the results of a job that goes on are posted
 * once a batch, with at most MAX_FOUND_IN_FLIGHT messages the engine has not received
 * (protocol.ts).
 *
 * A tensor solution is recomputed here with the reference (`computeWork` of
 * @tensormine/protocol, loaded on the first solution) before it is posted, so that the check of
 * every result costs each worker its own share and never queues on the engine's thread. From
 * source, the pool starts the worker with Node's type transformation and the source condition
 * (source-loader.mjs), which the protocol's sources need.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { hexchainHash, type PreparedHexchain, prepareHexchain, searchBlock } from '../kernels/hexchain.js';
import { NativeKernels, useNativeKernels } from '../kernels/native/library.js';
import { TensorSearch } from '../kernels/tensor.js';
import { warmUpJsKernels } from '../kernels/warm-up.js';
import {
  ACK_STRIDE,
  type FoundItem,
  type FromWorker,
  GENERATION,
  INTENSITY,
  type JobMessage,
  type KernelJob,
  MAX_FOUND_IN_FLIGHT,
  MAX_FOUND_PER_MESSAGE,
  PAUSED,
  type ToWorker,
  WAKE,
  WORKER_IDLE,
  WORKER_MINING,
  WORKER_PAUSED,
  WORKER_SLEEPING,
  type WorkerInit,
} from './protocol.js';

const init = workerData as WorkerInit;
const port = parentPort!;
const { control, counters, states, acks, index, kernel } = init;

// The native library the engine's thread built and checked against the vectors; the `js`
// kernels run on throwaway work until V8 has optimised them (kernels/warm-up.ts), so that no
// job is mined with unoptimised code.
if (kernel === 'native') useNativeKernels(new NativeKernels(init.nativeLibrary!));
const warmUp = kernel === 'js' ? warmUpJsKernels() : undefined;

interface Active {
  readonly message: JobMessage;
  readonly hexchain: PreparedHexchain | undefined;
  readonly tensor: TensorSearch | undefined;
  next: number;
  batch: number;
}

let current: Active | undefined;
let running = false;

function post(message: FromWorker): void {
  port.postMessage(message);
}

port.on('message', (message: ToWorker) => {
  if (message.type !== 'job') return;
  try {
    const job = message.job;
    current = {
      message,
      hexchain: job.kind === 'hexchain' ? prepareHexchain(job, kernel) : undefined,
      tensor: job.kind === 'tensor' ? new TensorSearch(job.task, job.minerPublicKey, kernel) : undefined,
      next: message.start,
      batch: job.kind === 'hexchain' ? 16_384 : 1,
    };
  } catch (error) {
    post({ type: 'error', index, generation: message.generation, message: (error as Error).message });
    return;
  }
  // The reference checks this job's solutions: load it while the first batches run.
  if (message.job.kind === 'tensor' && init.referenceCheck !== 'engine') protocol().catch(() => undefined);
  if (!running) void loop();
});

async function loop(): Promise<void> {
  running = true;
  try {
    while (current !== undefined) {
      const job = current;
      const wake = Atomics.load(control, WAKE);
      if (Atomics.load(control, GENERATION) !== job.message.generation) {
        if (current === job) current = undefined;
        continue;
      }
      if (Atomics.load(control, PAUSED) === 1) {
        Atomics.store(states, index, WORKER_PAUSED);
        await waitForChange(wake);
        continue;
      }
      Atomics.store(states, index, WORKER_MINING);
      const count = Math.min(job.batch, job.message.end - job.next);
      if (count <= 0) {
        post({ type: 'exhausted', index, generation: job.message.generation });
        if (current === job) current = undefined;
        continue;
      }
      const started = performance.now();
      if (!(await runBatch(job, count))) {
        if (current === job) current = undefined;
        continue;
      }
      const elapsed = performance.now() - started;
      // Aim at batchMs per batch: at most double or halve per step.
      const scale = elapsed > 0 ? job.message.batchMs / elapsed : 2;
      job.batch = Math.max(1, Math.round(job.batch * Math.min(2, Math.max(0.5, scale))));
      const intensity = Atomics.load(control, INTENSITY);
      if (intensity < 1000) {
        Atomics.store(states, index, WORKER_SLEEPING);
        await waitForChange(Atomics.load(control, WAKE), (elapsed * (1000 - intensity)) / intensity);
      } else {
        // Let messages in between batches.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  } finally {
    running = false;
    Atomics.store(states, index, WORKER_IDLE);
  }
}

/**
 * Runs one batch: `count` nonces from the job's next (fewer when the job ends at its first
 * result, or a new job or a stop comes). A job that ends at its first result posts it at once;
 * a job that goes on gets the batch's results held and posted together at its end, or every
 * MAX_FOUND_PER_MESSAGE (protocol.ts). False when the job ends (a result with stopOnFound, or
 * an error).
 */
async function runBatch(job: Active, count: number): Promise<boolean> {
  const generation = job.message.generation;
  const end = job.next + count;
  const held: FoundItem[] = [];
  try {
    while (job.next < end) {
      const item = await search(job, end - job.next);
      if (item === undefined) continue;
      if (job.message.stopOnFound) {
        await postFound(generation, [item]);
        return false;
      }
      held.push(item);
      if (held.length === MAX_FOUND_PER_MESSAGE) await postFound(generation, held.splice(0));
      // A new job or a stop: leave the batch now (the held results are the ended job's, which
      // the engine would drop).
      if (Atomics.load(control, GENERATION) !== generation) return true;
    }
  } catch (error) {
    if (held.length > 0) await postFound(generation, held);
    post({ type: 'error', index, generation, message: (error as Error).message });
    return false;
  }
  if (held.length > 0) await postFound(generation, held);
  return true;
}

/** Searches up to `count` nonces from the job's next, to the first result (undefined: none). */
async function search(job: Active, count: number): Promise<FoundItem | undefined> {
  if (job.hexchain !== undefined) {
    const r = searchBlock(job.hexchain, job.next, count);
    Atomics.add(counters, index, BigInt(r.hashes));
    job.next += r.hashes;
    return r.found === undefined
      ? undefined
      : { nonce: r.found, powHash: hexchainHash(job.hexchain, r.found) };
  }
  const r = job.tensor!.search(job.next, count);
  Atomics.add(counters, index, BigInt(r.iterations));
  job.next += r.iterations;
  if (r.found === undefined) return undefined;
  const { nonce } = r.found;
  const computationHash = r.found.work.computationHash;
  if (init.referenceCheck === 'engine') return { nonce, computationHash };
  const input = job.message.job as Extract<KernelJob, { kind: 'tensor' }>;
  // The reference's work without the activations (a result carries only its hashes).
  const {
    shape: _shape,
    result: _result,
    ...reference
  } = (await protocol()).computeWork(input.task, input.minerPublicKey, nonce);
  return { nonce, computationHash, reference };
}

/** `found` messages posted; the pool counts those the engine received in acks[index * ACK_STRIDE]. */
let posted = 0;

/**
 * Posts results once the engine has received all but MAX_FOUND_IN_FLIGHT - 1 of this worker's
 * earlier messages (back-pressure: a busy engine thread holds its worker here rather than letting
 * messages queue without bound). Results of a job that ended meanwhile are dropped, as the engine
 * would drop them.
 */
async function postFound(generation: number, results: FoundItem[]): Promise<void> {
  const slot = index * ACK_STRIDE;
  for (;;) {
    const received = Atomics.load(acks, slot);
    if (posted - received < MAX_FOUND_IN_FLIGHT) break;
    if (Atomics.load(control, GENERATION) !== generation) return;
    // Woken by the pool's count; the timeout looks at the generation again (a new job or a stop).
    const wait = Atomics.waitAsync(acks, slot, received, 25);
    if (wait.async) await wait.value;
  }
  posted++;
  post({ type: 'found', index, generation, results });
}

let reference: Promise<typeof import('@tensormine/protocol')> | undefined;
/** The reference implementation, loaded on the first tensor solution. */
function protocol(): Promise<typeof import('@tensormine/protocol')> {
  reference ??= import('@tensormine/protocol');
  return reference;
}

/** Waits until the control block changes (or `timeoutMs` passes), without blocking messages. */
async function waitForChange(seen: number, timeoutMs?: number): Promise<void> {
  const result = Atomics.waitAsync(control, WAKE, seen, timeoutMs);
  if (result.async) await result.value;
}

post({ type: 'ready', index, ...(warmUp === undefined ? {} : { warmUp }) });
