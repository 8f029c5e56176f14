import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createValidator, type Validator } from '../src/app.js';
import { resolveConfig } from '../src/config.js';
import { PostgresStorage } from '../src/store/postgres.js';
import { conservation, genesisWith, hex, signedPost } from './economy-helpers.js';
import { testKey } from './helpers.js';
import { type PostgresServer, testPostgres } from './support/postgres.js';

/**
 * The validator itself (createValidator, its services and routes) on PostgreSQL, chosen by the
 * databaseUrl setting; two validators in this process share one database.
 */

const alice = testKey('pg-alice');
const bob = testKey('pg-bob');

let server: PostgresServer;
const validators: Validator[] = [];

beforeAll(async () => {
  server = await testPostgres();
});

afterAll(async () => {
  await Promise.all(validators.map((v) => v.close()));
  await server?.stop();
});

async function node(databaseUrl: string): Promise<Validator> {
  const v = await createValidator({
    dataDir: mkdtempSync(join(tmpdir(), 'tm-pg-node-')),
    databaseUrl,
    databasePoolSize: 4,
    difficulty: 2,
    hexDifficulty: 64n,
    rateLimitPerSecond: 100_000,
    rateLimitBurst: 100_000,
    keyRateLimitPerSecond: 100_000,
    keyRateLimitBurst: 100_000,
    genesis: genesisWith([{ key: alice, token: 'PTM', amount: '100' }]),
    logger: false,
  });
  validators.push(v);
  return v;
}

describe('the validator on PostgreSQL', () => {
  it('opens PostgreSQL from databaseUrl, applies the genesis once for two nodes, and keeps transfers exact across them', async () => {
    const url = await server.createDatabase();
    const one = await node(url);
    const two = await node(url);
    expect(one.context.storage).toBeInstanceOf(PostgresStorage);
    expect(one.context.storage.location).toBe(url);

    // 20 transfers of 10 PTM from a balance of 100, sent at once through both nodes.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        signedPost(alice, '/transfer', { from: hex(alice), to: hex(bob), token: 'PTM', amount: '10' })
          .send(i % 2 === 0 ? one : two)
          .then((res) => ({ status: res.statusCode, code: res.json().code as string | undefined })),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 409 && r.code === 'insufficient_balance')).toHaveLength(10);

    for (const v of [one, two]) {
      const balances = (await v.inject(`/balances/${hex(alice)}`)).json();
      expect(balances.balances.find((b: { token: string }) => b.token === 'PTM').available).toBe('0');
      const bobs = (await v.inject(`/balances/${hex(bob)}`)).json();
      expect(bobs.balances.find((b: { token: string }) => b.token === 'PTM').available).toBe('100');
    }
    const { supply, issued } = await conservation(two);
    expect(supply).toEqual(issued);

    // A signed request sent again through the other node answers the first result and moves
    // nothing more (the stored result is in the shared database).
    const signedByBob = signedPost(bob, '/transfer', {
      from: hex(bob),
      to: hex(alice),
      token: 'PTM',
      amount: '1',
    });
    const first = await signedByBob.send(one);
    expect(first.statusCode, first.body).toBe(200);
    const again = await signedByBob.send(two);
    expect(again.json().transfer_id).toBe(first.json().transfer_id);
    const after = (await two.inject(`/balances/${hex(bob)}`)).json();
    expect(after.balances.find((b: { token: string }) => b.token === 'PTM').available).toBe('99');
  });
});

describe('databaseUrl setting', () => {
  it('comes from the flag or TENSORMINE_DATABASE_URL and refuses anything else without echoing it', () => {
    expect(resolveConfig({}).config.databaseUrl).toBeUndefined();
    expect(
      resolveConfig({ env: { TENSORMINE_DATABASE_URL: 'postgres://tm:pw@db:5432/tm' } }).config.databaseUrl,
    ).toBe('postgres://tm:pw@db:5432/tm');
    expect(() => resolveConfig({ flags: { databaseUrl: 'mysql://tm:s3cret@db/tm' } })).toThrow(
      /expected a PostgreSQL URL/,
    );
    try {
      resolveConfig({ flags: { databaseUrl: 'nonsense s3cret' } });
    } catch (error) {
      expect(String(error)).not.toContain('s3cret');
    }
  });
});
