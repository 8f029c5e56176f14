// Loaded into a validator node by bench/million.bench.ts (`--expose-gc --import`): on SIGUSR2 it
// runs a full garbage collection and writes the heap in use to stderr, so that the bench measures
// the memory the node keeps rather than the garbage not yet collected. The node's code is unchanged.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  process.stderr.write(`heap-after-gc ${JSON.stringify({ heapUsed, external, arrayBuffers })}\n`);
});
