import {
  type DeviceTypeInput,
  formatPublicKey,
  type KeyPair,
  keyPairFromSecret,
  signRequest,
  taggedHash,
  utf8,
} from '@tensormine/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { afterEachFile, afterEachTest } from '../../../test-support/cleanup.ts';
import { type CreateValidatorOptions, createValidator, type Validator } from '../src/app.js';
import { type PostgresServer, testPostgres } from './support/postgres.js';

const open: Validator[] = [];

/**
 * `TENSORMINE_TEST_STORAGE=postgres npx vitest run --project validator` runs the tests that use
 * testValidator on PostgreSQL (the test run's server, test-support/services.ts; a fresh database
 * per validator, or the database of its `dataDir` when a test gives one, so that restarts find
 * their data) instead of node:sqlite.
 */
const onPostgres = process.env.TENSORMINE_TEST_STORAGE === 'postgres';
let postgres: Promise<PostgresServer> | undefined;

/** The database of each data directory given, so that validators sharing one share a database. */
const databases = new Map<string, Promise<string>>();

async function testDatabaseUrl(dataDir: string | undefined): Promise<string | undefined> {
  if (!onPostgres) return undefined;
  postgres ??= testPostgres();
  const server = await postgres;
  if (dataDir === undefined || dataDir === ':memory:') return server.createDatabase();
  let url = databases.get(dataDir);
  if (url === undefined) {
    url = server.createDatabase();
    databases.set(dataDir, url);
  }
  return url;
}

afterEachFile(async () => {
  const server = postgres;
  postgres = undefined;
  databases.clear();
  await (await server)?.stop();
});

/**
 * A validator in memory (closed after each test), with low difficulties so tests mine fast and
 * an empty economy genesis (no pools, no reserve) unless `genesis` is given, so that ledger
 * listings hold only what a test wrote.
 */
export async function testValidator(options: CreateValidatorOptions = {}): Promise<Validator> {
  const databaseUrl = await testDatabaseUrl(
    typeof options.dataDir === 'string' ? options.dataDir : undefined,
  );
  const v = await createValidator({
    dataDir: ':memory:',
    ...(databaseUrl === undefined ? {} : { databaseUrl, databasePoolSize: 4 }),
    difficulty: 2,
    hexDifficulty: 64n,
    rateLimitPerSecond: 100_000,
    rateLimitBurst: 100_000,
    keyRateLimitPerSecond: 100_000,
    keyRateLimitBurst: 100_000,
    genesis: { reserve: '0', pools: [] },
    ...options,
  });
  open.push(v);
  return v;
}

afterEachTest(async () => {
  await Promise.all(open.splice(0).map((v) => v.close()));
});

/** A deterministic test key pair. */
export function testKey(name: string): KeyPair {
  return keyPairFromSecret(taggedHash('validator-test/key', utf8(name)));
}

/**
 * Sends a JSON request signed by `key` with the signed-request headers, stamped with the
 * validator's clock (its `now` option), unless `timestamp` is given: a test on a test clock
 * never depends on how long it ran in real time.
 */
export function signedInject(
  v: Validator,
  key: KeyPair,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
  options: { timestamp?: number } = {},
): Promise<LightMyRequestResponse> {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const headers = signRequest({
    method,
    path: url,
    body: payload,
    secretKey: key.secretKey,
    timestamp: options.timestamp ?? v.context.now(),
  });
  return v.inject({
    method,
    url,
    headers: { ...headers, ...(payload === '' ? {} : { 'content-type': 'application/json' }) },
    ...(payload === '' ? {} : { payload }),
  });
}

/** Registers `key` as a device of `deviceType` and asserts that it worked. */
export async function register(
  v: Validator,
  key: KeyPair,
  deviceType: DeviceTypeInput = 'native',
): Promise<void> {
  const res = await signedInject(v, key, 'POST', '/devices/register', {
    pubkey: formatPublicKey(key.publicKey),
    device_type: deviceType,
  });
  if (res.statusCode !== 200) throw new Error(`registration failed: ${res.statusCode} ${res.body}`);
}

/** POST with a JSON body, unsigned. */
export function post(v: Validator, url: string, body: unknown): Promise<LightMyRequestResponse> {
  return v.inject({ method: 'POST', url, payload: body as Record<string, unknown> });
}
