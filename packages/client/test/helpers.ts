import { type CreateValidatorOptions, createValidator, type Validator } from '@tensormine/validator';
import { afterEachTest } from '../../../test-support/cleanup.ts';
import { createClient, type TensormineClient, type ValidatorClientOptions } from '../src/index.js';

/** In-process validators listening on port 0, and clients; all closed after each test. */

const validators: Validator[] = [];
const clients: { close(): Promise<void> }[] = [];

afterEachTest(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(validators.splice(0).map((v) => v.close()));
});

export interface Running {
  readonly validator: Validator;
  readonly url: string;
}

/** A validator in memory with low difficulties and no rate limits, listening on a free port. */
export async function startValidator(
  options: CreateValidatorOptions = {},
  listen: { port?: number } = {},
): Promise<Running> {
  const validator = await createValidator({
    dataDir: ':memory:',
    difficulty: 2,
    hexDifficulty: 256n,
    maxTensorDim: 8,
    rateLimitPerSecond: 100_000,
    rateLimitBurst: 100_000,
    keyRateLimitPerSecond: 100_000,
    keyRateLimitBurst: 100_000,
    logger: false,
    ...options,
  });
  validators.push(validator);
  const url = await validator.listen({ host: '127.0.0.1', port: listen.port ?? 0 });
  return { validator, url };
}

/** A client closed after the test; no background health probes unless asked. */
export function client(options: ValidatorClientOptions): TensormineClient {
  const c = createClient({ healthCheckIntervalMs: 0, ...options });
  clients.push(c);
  return c;
}

/** Registers a closable thing (a client of another service, an agent) for cleanup. */
export function track<T extends { close(): Promise<void> }>(thing: T): T {
  clients.push(thing);
  return thing;
}
