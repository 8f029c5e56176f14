import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChallengeWire, type KeyPair, toHex } from '@tensormine/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { register, testKey, testValidator } from './helpers.js';
import { adminMetrics, expectError, issue, mine, rewardOf, submit } from './mining-fixtures.js';

const alice = testKey('alice');
const bob = testKey('bob');
const ALICE = toHex(alice.publicKey);
const BOB = toHex(bob.publicKey);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('GET /miners/:pubkey', () => {
  it('answers an unknown well-formed key with an empty, unregistered account', async () => {
    const v = await testValidator();
    const res = await v.inject(`/miners/${BOB}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      pubkey: BOB,
      registered: false,
      device_type: null,
      registered_at: null,
      balances: [],
      proofs_accepted: 0,
      proofs_rejected: 0,
      blocks_accepted: 0,
      rewards_total: '0',
      last_seen: null,
    });
  });

  it('answers a malformed key with validation_failed', async () => {
    const v = await testValidator();
    expectError(
      await v.inject(`/miners/${'z'.repeat(64)}`),
      400,
      'validation_failed',
      'params/pubkey: must match pattern "^[0-9a-f]{64}$"',
    );
    expectError(
      await v.inject('/miners/abc'),
      400,
      'validation_failed',
      'params/pubkey: must not have fewer than 64 characters',
    );
  });
});

describe('GET /pool', () => {
  it('publishes the share interval vardiff uses, in milliseconds, also when it is under a second', async () => {
    const v = await testValidator({ poolShareIntervalMs: 300n });
    expect((await v.inject('/pool')).json()).toMatchObject({ share_interval_ms: 300, share_interval_s: 1 });
    const w = await testValidator({ poolShareIntervalMs: 2_500n });
    expect((await w.inject('/pool')).json()).toMatchObject({ share_interval_ms: 2500, share_interval_s: 3 });
  });

  it('reports the strategy in force, no members yet, and the documented terms', async () => {
    const v = await testValidator();
    expect((await v.inject('/pool')).json()).toEqual({
      type: 'solo',
      miners: 0,
      stake: '0',
      minimum_stake: '0',
      fee: 0.02,
      round_duration: 10,
      token: 'PTM',
      fee_bps: 200,
      pplns_window_factor: 2,
      pplns_window: 128,
      share_interval_s: 10,
      share_interval_ms: 10_000,
      blocks_found: 0,
      last_block: null,
    });
    await v.inject({
      method: 'POST',
      url: '/admin/config',
      headers: { authorization: `Bearer ${v.adminToken}` },
      payload: { pool_strategy: 'pplns' },
    });
    expect((await v.inject('/pool')).json().type).toBe('pplns');
  });
});

describe('GET /ledger/entries', () => {
  it('pages newest first with an opaque cursor, filtered by key, token and type', async () => {
    const v = await testValidator({ maxTensorDim: 8, difficulty: 1 });
    await register(v, alice);
    await register(v, bob);
    const ids: string[] = [];
    const issued = new Map<KeyPair, ChallengeWire[]>([
      [alice, []],
      [bob, []],
    ]);
    for (const key of [alice, bob, alice, alice, bob]) {
      const c = await issue(v);
      issued.get(key)!.push(c);
      const { proof, signature } = mine(c, key);
      const res = await submit(v, proof, signature);
      expect(res.statusCode, res.body).toBe(200);
      ids.push(res.json().ledger_entry_id);
    }
    const newestFirst = [...ids].reverse();

    const all = (await v.inject('/ledger/entries')).json();
    expect(all.entries.map((e: { id: string }) => e.id)).toEqual(newestFirst);
    expect(all.next_cursor).toBeNull();

    const pages: string[][] = [];
    let url = '/ledger/entries?limit=2';
    for (;;) {
      const page = (await v.inject(url)).json();
      pages.push(page.entries.map((e: { id: string }) => e.id));
      if (page.next_cursor === null) break;
      expect(page.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      url = `/ledger/entries?limit=2&cursor=${page.next_cursor}`;
    }
    expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);

    // An exactly full last page ends with null too.
    const exact = (await v.inject('/ledger/entries?limit=5')).json();
    expect(exact.entries).toHaveLength(5);
    expect(exact.next_cursor).toBeNull();

    const bobs = (await v.inject(`/ledger/entries?pubkey=${BOB}&limit=1`)).json();
    expect(bobs.entries).toHaveLength(1);
    expect(bobs.entries[0]).toMatchObject({
      pubkey: BOB,
      type: 'mining_reward',
      amount: rewardOf(issued.get(bob)![1]!),
      token: 'PTM',
    });
    const bobs2 = (await v.inject(`/ledger/entries?pubkey=${BOB}&limit=1&cursor=${bobs.next_cursor}`)).json();
    expect(bobs2.entries.map((e: { pubkey: string }) => e.pubkey)).toEqual([BOB]);
    expect(bobs2.next_cursor).toBeNull();

    expect((await v.inject('/ledger/entries?type=mining_reward&token=PTM')).json().entries).toHaveLength(5);
    expect((await v.inject('/ledger/entries?type=stake')).json().entries).toEqual([]);
    expect((await v.inject('/ledger/entries?token=USDC')).json().entries).toEqual([]);

    const account = (await v.inject(`/miners/${ALICE}`)).json();
    expect(account).toMatchObject({
      balances: [{ token: 'PTM', amount: rewardOf(...issued.get(alice)!) }],
      rewards_total: rewardOf(...issued.get(alice)!),
      proofs_accepted: 3,
    });
  });

  it('answers a malformed cursor with validation_failed', async () => {
    const v = await testValidator();
    for (const cursor of [
      '!!!',
      'bGVkZ2VyOi0x',
      'bGVkZ2VyOmFiYw',
      Buffer.from('devices:2').toString('base64url'),
    ]) {
      expectError(
        await v.inject(`/ledger/entries?cursor=${encodeURIComponent(cursor)}`),
        400,
        'validation_failed',
        `cursor: expected the next_cursor of a previous GET /ledger/entries page, got ${JSON.stringify(cursor)}`,
      );
    }
  });
});

describe('persistence', () => {
  it('keeps balances, ledger, accepted proofs, devices and counters across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tensormine-mining-'));
    dirs.push(dataDir);
    const first = await testValidator({ dataDir, maxTensorDim: 8 });
    await register(first, alice, 'esp32');
    const c = await issue(first);
    const { proof, signature } = mine(c, alice);
    const accepted = await submit(first, proof, signature);
    expect(accepted.statusCode).toBe(200);
    await submit(first, { ...proof, challenge_id: 'c-gone' }, signature);
    const before = {
      miner: (await first.inject(`/miners/${ALICE}`)).json(),
      ledger: (await first.inject('/ledger/entries')).json(),
      devices: (await first.inject('/devices')).json(),
    };
    const nodeKey = toHex(first.context.identity.publicKey);
    await first.close();

    const second = await testValidator({ dataDir, maxTensorDim: 8 });
    expect(toHex(second.context.identity.publicKey)).toBe(nodeKey);
    expect((await second.inject(`/miners/${ALICE}`)).json()).toEqual(before.miner);
    expect(before.miner).toMatchObject({
      registered: true,
      device_type: 'esp32',
      balances: [{ token: 'PTM', amount: rewardOf(c) }],
    });
    expect((await second.inject('/ledger/entries')).json()).toEqual(before.ledger);
    expect((await second.inject('/devices')).json()).toEqual(before.devices);
    // The accepted proof again after the restart: its original acceptance (a safe retry).
    const retried = await submit(second, proof, signature);
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.json().ledger_entry_id).toBe(before.ledger.entries[0].id);
    expect(await adminMetrics(second)).toMatchObject({
      challenges_issued: 1,
      proofs_valid: 1,
      proofs_rejected: 1,
      rejections_by_reason: { challenge_not_found: 1 },
    });
    // Challenges issued before the restart are still answerable (by another key).
    await register(second, bob);
    const forBob = mine(c, bob);
    expect((await submit(second, forBob.proof, forBob.signature)).statusCode).toBe(200);
  });
});
