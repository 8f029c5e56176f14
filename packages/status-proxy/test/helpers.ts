import { createClient, Signer, solveWork, type TensormineClient } from '@tensormine/client';
import { type CreateValidatorOptions, createValidator, type Validator } from '@tensormine/validator';
import { afterEach } from 'vitest';
import { type CreateStatusProxyOptions, createStatusProxy, type StatusProxy } from '../src/index.js';

/** A validator and a status proxy in front of it, both on free ports, closed after each test. */

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

export interface Network {
  readonly validator: Validator;
  readonly validatorUrl: string;
  readonly proxy: StatusProxy;
  readonly proxyUrl: string;
  /** A registered miner's client (v4.1) on the validator. */
  readonly miner: TensormineClient;
  readonly signer: Signer;
  /** Mines `count` blocks through the validator; returns their hashes. */
  mine(count: number): Promise<string[]>;
}

export async function startNetwork(
  options: { validator?: CreateValidatorOptions; proxy?: Partial<CreateStatusProxyOptions> } = {},
): Promise<Network> {
  const validator = await createValidator({
    dataDir: ':memory:',
    hexDifficulty: 16n,
    rateLimitPerSecond: 1_000_000,
    rateLimitBurst: 1_000_000,
    keyRateLimitPerSecond: 1_000_000,
    keyRateLimitBurst: 1_000_000,
    logger: false,
    ...options.validator,
  });
  closers.push(() => validator.close());
  const validatorUrl = await validator.listen({ host: '127.0.0.1', port: 0 });
  const proxy = await createStatusProxy({ validators: [validatorUrl], logger: false, ...options.proxy });
  closers.push(() => proxy.close());
  const proxyUrl = await proxy.listen({ host: '127.0.0.1', port: 0 });
  const signer = Signer.generate();
  const miner = createClient({ url: validatorUrl, signer, protocol: '4.1', healthCheckIntervalMs: 0 });
  closers.push(() => miner.close());
  await miner.miners.register();
  await proxy.mirror.ready;
  return {
    validator,
    validatorUrl,
    proxy,
    proxyUrl,
    miner,
    signer,
    async mine(count) {
      const hashes: string[] = [];
      for (let i = 0; i < count; i++) {
        const work = await miner.getWork();
        const solution = solveWork(work, signer, { maxIterations: 1_000_000 });
        if (solution === undefined) throw new Error('no nonce found');
        const { result } = await miner.submitWork(work, solution);
        hashes.push((result as { block_hash: string }).block_hash);
      }
      return hashes;
    },
  };
}

/** Polls `check` until it returns true (or fails after `ms`). */
export async function until(
  check: () => boolean | Promise<boolean>,
  ms = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
