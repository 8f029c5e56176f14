import { createClient, Signer, solveWork, type TensormineClient } from '@tensormine/client';
import { type CreateValidatorOptions, createValidator, type Validator } from '@tensormine/validator';
import { afterEachTest } from '../../../test-support/cleanup.ts';
import { waitFor } from '../../../test-support/wait.ts';
import { type CreateStatusProxyOptions, createStatusProxy, type StatusProxy } from '../src/index.js';

/** A validator and a status proxy in front of it, both on free ports, closed after each test. */

const closers: (() => Promise<void>)[] = [];
afterEachTest(async () => {
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

/**
 * Polls `check` until it returns true; fails naming `what` after the suite's wait bound
 * (test-support/wait.ts), or after `ms` when given.
 */
export function until(check: () => boolean | Promise<boolean>, what?: string): Promise<void>;
export function until(
  check: () => boolean | Promise<boolean>,
  ms: number | undefined,
  what?: string,
): Promise<void>;
export function until(
  check: () => boolean | Promise<boolean>,
  a?: number | string,
  b?: string,
): Promise<void> {
  const ms = typeof a === 'number' ? a : undefined;
  const what = (typeof a === 'string' ? a : b) ?? 'condition';
  return waitFor(check, what, ms === undefined ? {} : { timeoutMs: ms });
}
