import { prepareHexchain, searchBlock } from './hexchain.js';
import { type TensorKernelTask, TensorSearch } from './tensor.js';

/**
 * The JavaScript kernels' warm-up. V8 runs new code in its interpreter and optimises the hot
 * functions in a background thread; on a busy machine that thread waits for a core, and the
 * kernels ran 15 to 68 times slower than WebAssembly for seconds before it finished. So a
 * worker that runs the `js` kernel first runs them on throwaway work (a hexchain job and small
 * tensor tasks of both operations: the code paths of real jobs) in rounds of fixed size until
 * the optimised code is in: the fastest round at least twice as fast as the first, and the
 * median of the last five within 1.5 times the fastest (a median, so that a round the machine
 * took a core from does not count). Rounds are judged against each other, not against a clock
 * budget, so this means the same on a fast and on a slow machine; `maxMs` bounds it where the
 * times never settle.
 */

const RECENT = 5;
const TIER_UP = 2;
const SETTLED_WITHIN = 1.5;
const HEX_NONCES = 32_768;
const TENSOR_NONCES = 4;

export interface WarmUpReport {
  /** Rounds run. */
  readonly rounds: number;
  /** True when the rounds' times settled (else `maxMs` ran out). */
  readonly settled: boolean;
  /** The first round's time over the last one's: how much faster the kernels got. */
  readonly speedup: number;
  readonly ms: number;
}

function task(operation: 'matmul' | 'conv', seed: number): TensorKernelTask {
  const dim = 16;
  const input = new Int8Array(dim * dim);
  for (let i = 0; i < input.length; i++) input[i] = ((i * 131 + seed * 71) % 256) - 128;
  return {
    challengeHash: new Uint8Array(32).fill(seed),
    operation,
    activation: 'relu',
    dim,
    filters: operation === 'conv' ? 3 : 0,
    input,
    pathTarget: new Uint8Array(8).fill(seed),
    // never met: every nonce is a full iteration
    mmlThresholdQ16: 0,
    pathDistanceMax: -1,
  };
}

/** Warms up the `js` kernels of this thread (see above). */
export function warmUpJsKernels(options: { readonly maxMs?: number } = {}): WarmUpReport {
  const maxMs = options.maxMs ?? 3000;
  const header = new Uint8Array(88).fill(7);
  const hex = prepareHexchain({ header, target: new Uint8Array(32) }, 'js');
  const key = new Uint8Array(32).fill(3);
  const tensors = [
    new TensorSearch(task('matmul', 1), key, 'js'),
    new TensorSearch(task('conv', 2), key, 'js'),
  ];
  const times: number[] = [];
  const started = performance.now();
  let nonce = 0;
  for (;;) {
    const t0 = performance.now();
    searchBlock(hex, nonce, HEX_NONCES);
    for (const t of tensors) t.search(nonce, TENSOR_NONCES);
    nonce += HEX_NONCES;
    const end = performance.now();
    times.push(end - t0);
    const best = Math.min(...times);
    const recent = times.slice(-RECENT).sort((a, b) => a - b);
    const settled =
      times.length >= RECENT && best * TIER_UP <= times[0]! && recent[RECENT >> 1]! <= best * SETTLED_WITHIN;
    if (settled || end - started >= maxMs) {
      return { rounds: times.length, settled, speedup: times[0]! / times.at(-1)!, ms: end - started };
    }
  }
}
