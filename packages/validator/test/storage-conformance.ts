import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test-support/wait.ts';
import { newMember } from '../src/services/pool/members.js';
import {
  type AcceptedProof,
  type BlockRecord,
  type ChallengeRecord,
  type DeviceRecord,
  type HexChallengeRecord,
  InsufficientBalanceError,
  type NewBlockRecord,
  type NewLedgerEntry,
  type PoolMemberRecord,
  type PoolShareRecord,
  type Storage,
  type StorageTx,
} from '../src/store/types.js';

/**
 * The behaviour every implementation of `Storage` must have. Run it with a factory that
 * returns a fresh, empty storage each time:
 *
 *     describeStorageConformance('sqlite :memory:', () => openSqliteStorage({ path: ':memory:' }));
 *
 * Records must respect the references of the schema: a proof names an existing challenge and
 * ledger entry, a block an existing hexchain challenge.
 */
export function describeStorageConformance(name: string, open: () => Promise<Storage>): void {
  describe(`Storage conformance: ${name}`, () => {
    let storage: Storage;
    const write = <T>(fn: (tx: StorageTx) => Promise<T>) => storage.transaction(fn);
    const read = <T>(fn: (tx: StorageTx) => Promise<T>) => storage.read(fn);

    /** A challenge and a reward entry, committed, and the proof that refers to them. */
    const acceptedProofFixture = async (): Promise<{ proof: AcceptedProof }> => {
      const [reward] = await write(async (tx) => {
        await tx.challenges.insert(challenge(0));
        return tx.ledger.apply([credit(A, 'TMN', 10n)]);
      });
      const proof: AcceptedProof = {
        challengeId: challenge(0).id,
        pubkey: A,
        nonce: 77,
        acceptedAt: T + 1,
        ledgerEntryId: reward!.id,
        txSig: 'ee'.repeat(64),
      };
      return { proof };
    };

    /** Resolves when `n` payloads arrived on `channel` (they are pushed to `got`). */
    const collect = async (channel: string) => {
      const got: string[] = [];
      const stop = await storage.listen(channel, (payload) => got.push(payload));
      const until = async (n: number) => {
        await waitFor(() => got.length >= n, `${n} notifications on ${channel}`, {
          context: () => got.join('\n'),
        });
        return got;
      };
      return { got, until, stop };
    };
    beforeEach(async () => {
      storage = await open();
    });

    afterEach(async () => {
      await storage.close();
    });

    describe('meta', () => {
      it('returns undefined for a missing key, then the last value set', async () => {
        expect(await read((tx) => tx.meta.get('seed'))).toBeUndefined();
        await write((tx) => tx.meta.set('seed', 'one'));
        await write((tx) => tx.meta.set('seed', 'two'));
        await write((tx) => tx.meta.set('other', ''));
        expect(await read((tx) => tx.meta.get('seed'))).toBe('two');
        expect(await read((tx) => tx.meta.get('other'))).toBe('');
      });
    });

    describe('counters', () => {
      it('starts at 0 and adds deltas', async () => {
        expect(await read((tx) => tx.counters.get('proofs_valid'))).toBe(0);
        await write(async (tx) => {
          await tx.counters.add('proofs_valid', 1);
          await tx.counters.add('proofs_valid', 2);
        });
        await write((tx) => tx.counters.add('proofs_valid', 1_700_000_000_000));
        expect(await read((tx) => tx.counters.get('proofs_valid'))).toBe(1_700_000_000_003);
      });

      it("sees its own transaction's additions before they are written, and keeps none of a rollback", async () => {
        await write((tx) => tx.counters.add('x.a', 5));
        const seen = await write(async (tx) => {
          await tx.counters.add('x.a', 2);
          await tx.counters.add('x.b', -1);
          await tx.counters.add('x.b', 1);
          return {
            a: await tx.counters.get('x.a'),
            b: await tx.counters.get('x.b'),
            list: await tx.counters.list('x.'),
          };
        });
        expect(seen).toEqual({ a: 7, b: 0, list: { 'x.a': 7, 'x.b': 0 } });
        await write(async (tx) => {
          await tx.counters.add('x.a', 100);
          throw new Error('no');
        }).catch(() => undefined);
        expect(await read((tx) => tx.counters.list('x.'))).toEqual({ 'x.a': 7 });
        await expect(read((tx) => tx.counters.add('x.a', 1))).rejects.toMatchObject({ code: 'read_only' });
      });

      it('lists exactly the counters whose name starts with the prefix', async () => {
        await write(async (tx) => {
          await tx.counters.add('rejected.stale', 2);
          await tx.counters.add('rejected.bad_hash', 1);
          await tx.counters.add('rejectedX', 5);
          await tx.counters.add('Rejected.upper', 5);
          await tx.counters.add('rejected_', 5);
          await tx.counters.add('proofs_valid', 7);
        });
        expect(await read((tx) => tx.counters.list('rejected.'))).toEqual({
          'rejected.bad_hash': 1,
          'rejected.stale': 2,
        });
        expect(await read((tx) => tx.counters.list('none.'))).toEqual({});
        expect(Object.keys(await read((tx) => tx.counters.list('')))).toHaveLength(6);
      });

      it('keeps a counter named __proto__ as an own property', async () => {
        await write((tx) => tx.counters.add('__proto__', 3));
        const listed = await read((tx) => tx.counters.list('__'));
        expect(Object.getOwnPropertyDescriptor(listed, '__proto__')?.value).toBe(3);
      });
    });

    describe('ledger', () => {
      it('credits and debits balances, with increasing entry ids', async () => {
        const entries = await write((tx) =>
          tx.ledger.apply([credit(A, 'TMN', 100n), credit(A, 'USDT', 5n), credit(B, 'TMN', 1n)]),
        );
        expect(entries.map((e) => e.amount)).toEqual([100n, 5n, 1n]);
        expect(entries[0]).toEqual({ id: entries[0]!.id, ...credit(A, 'TMN', 100n) });
        expect(entries[0]).not.toHaveProperty('idempotencyKey');
        const [debit] = await write((tx) => tx.ledger.apply([entry('transfer', A, 'TMN', -40n)]));
        expect(increasing([...entries.map((e) => e.id), debit!.id])).toBe(true);
        expect(await read((tx) => tx.ledger.balance(A, 'TMN'))).toBe(60n);
        expect(await read((tx) => tx.ledger.balance(A, 'NONE'))).toBe(0n);
        expect(await read((tx) => tx.ledger.balance(C, 'TMN'))).toBe(0n);
        expect(await read((tx) => tx.ledger.balances(A))).toEqual([
          { token: 'TMN', amount: 60n },
          { token: 'USDT', amount: 5n },
        ]);
        expect(await read((tx) => tx.ledger.balances(C))).toEqual([]);
      });

      it('keeps amounts above 2^64 exact', async () => {
        const huge = 2n ** 100n + 1n;
        await write((tx) => tx.ledger.apply([credit(A, 'TMN', huge), credit(A, 'TMN', huge)]));
        await write((tx) => tx.ledger.apply([entry('transfer', A, 'TMN', -(huge - 1n))]));
        expect(await read((tx) => tx.ledger.balance(A, 'TMN'))).toBe(huge + 1n);
        const listed = await read((tx) => tx.ledger.list({ pubkey: A, limit: 10 }));
        expect(listed.map((e) => e.amount)).toEqual([-(huge - 1n), huge, huge]);
      });

      it('allows a debit down to exactly zero', async () => {
        await write((tx) => tx.ledger.apply([credit(A, 'TMN', 10n), entry('stake', A, 'TMN', -10n)]));
        expect(await read((tx) => tx.ledger.balance(A, 'TMN'))).toBe(0n);
      });

      it('refuses a debit beyond the balance and writes nothing of that call', async () => {
        await write((tx) => tx.ledger.apply([credit(A, 'TMN', 10n)]));
        const error = await write((tx) =>
          tx.ledger.apply([credit(B, 'TMN', 3n), credit(A, 'TMN', 5n), entry('transfer', A, 'TMN', -16n)]),
        ).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InsufficientBalanceError);
        expect(error).toMatchObject({ pubkey: A, token: 'TMN', balance: 15n, required: 16n });
        expect((error as Error).message).toBe('balance of TMN is 15 minor units, 16 required');
        expect(await read((tx) => tx.ledger.balance(A, 'TMN'))).toBe(10n);
        expect(await read((tx) => tx.ledger.balance(B, 'TMN'))).toBe(0n);
        expect(await read((tx) => tx.ledger.list({ limit: 10 }))).toHaveLength(1);
      });

      it('leaves the enclosing transaction usable after an insufficient balance', async () => {
        const outcome = await write(async (tx) => {
          await tx.meta.set('before', '1');
          await tx.ledger.apply([credit(A, 'TMN', 10n)]);
          const refused = await tx.ledger
            .apply([credit(B, 'TMN', 1n), credit(C, 'USDT', 1n), entry('transfer', A, 'TMN', -11n)])
            .catch((e: unknown) => e);
          await tx.ledger.apply([entry('transfer', A, 'TMN', -4n), credit(B, 'TMN', 4n)]);
          await tx.meta.set('after', '1');
          return refused;
        });
        expect(outcome).toBeInstanceOf(InsufficientBalanceError);
        expect(await read((tx) => tx.meta.get('before'))).toBe('1');
        expect(await read((tx) => tx.meta.get('after'))).toBe('1');
        expect(await read((tx) => tx.ledger.balance(A, 'TMN'))).toBe(6n);
        expect(await read((tx) => tx.ledger.balance(B, 'TMN'))).toBe(4n);
        // The refused call's accounts are left as they were: C's, which it would have opened, absent.
        expect(await read((tx) => tx.ledger.balances(C))).toEqual([]);
        expect(await read((tx) => tx.economy.supply())).toEqual(new Map([['TMN', 10n]]));
        expect(await read((tx) => tx.ledger.list({ limit: 10 }))).toHaveLength(3);
      });

      it('writes an entry with an idempotency key once and returns the first on a repeat', async () => {
        const first = { ...credit(A, 'TMN', 10n), idempotencyKey: 'reward:c1:A' };
        const [written] = await write((tx) => tx.ledger.apply([first]));
        expect(written).toEqual({ id: written!.id, ...first });
        const [again] = await write((tx) => tx.ledger.apply([{ ...first, amount: 99n, timestamp: T + 5 }]));
        expect(again).toEqual(written);
        const [inOneCall, repeated] = await write((tx) =>
          tx.ledger.apply([
            { ...credit(A, 'TMN', 1n), idempotencyKey: 'k2' },
            { ...credit(A, 'TMN', 1n), idempotencyKey: 'k2' },
          ]),
        );
        expect(repeated).toEqual(inOneCall);
        expect(await read((tx) => tx.ledger.balance(A, 'TMN'))).toBe(11n);
        expect(await read((tx) => tx.ledger.list({ limit: 10 }))).toHaveLength(2);
      });

      it('returns the existing entry for a repeated debit even when the balance no longer covers it', async () => {
        await write((tx) => tx.ledger.apply([credit(A, 'TMN', 10n)]));
        const debit = { ...entry('swap', A, 'TMN', -10n), idempotencyKey: 'swap:1' };
        const [first] = await write((tx) => tx.ledger.apply([debit]));
        const [second] = await write((tx) => tx.ledger.apply([debit]));
        expect(second).toEqual(first);
        expect(await read((tx) => tx.ledger.balance(A, 'TMN'))).toBe(0n);
      });

      it('lists newest first, filtered, paginated with beforeId', async () => {
        await write(async (tx) => {
          for (let i = 0; i < 5; i++) {
            await tx.ledger.apply([
              { ...credit(A, 'TMN', BigInt(i + 1)), timestamp: T + i },
              { ...entry('fee', A, 'USDT', BigInt(i + 1)), timestamp: T + i },
              { ...credit(B, 'TMN', BigInt(i + 1)), timestamp: T + i },
            ]);
          }
          await tx.ledger.apply([entry('transfer', A, 'TMN', -1n)]);
        });
        const all = await read((tx) => tx.ledger.list({ limit: 100 }));
        expect(all).toHaveLength(16);
        expect(decreasing(all.map((e) => e.id))).toBe(true);
        expect(all[0]).toMatchObject({ type: 'transfer', amount: -1n });

        const byKey = await read((tx) => tx.ledger.list({ pubkey: A, limit: 100 }));
        expect(byKey).toHaveLength(11);
        expect(byKey.every((e) => e.pubkey === A)).toBe(true);
        const byKeyToken = await read((tx) => tx.ledger.list({ pubkey: A, token: 'TMN', limit: 100 }));
        expect(byKeyToken.map((e) => e.amount)).toEqual([-1n, 5n, 4n, 3n, 2n, 1n]);
        const byKeyType = await read((tx) =>
          tx.ledger.list({ pubkey: A, type: 'mining_reward', limit: 100 }),
        );
        expect(byKeyType.map((e) => e.amount)).toEqual([5n, 4n, 3n, 2n, 1n]);
        const byAll = await read((tx) =>
          tx.ledger.list({ pubkey: A, token: 'USDT', type: 'mining_reward', limit: 100 }),
        );
        expect(byAll).toEqual([]);
        const byType = await read((tx) => tx.ledger.list({ type: 'mining_reward', limit: 100 }));
        expect(byType).toHaveLength(10);
        const byToken = await read((tx) => tx.ledger.list({ token: 'USDT', limit: 100 }));
        expect(byToken.map((e) => e.type)).toEqual(['fee', 'fee', 'fee', 'fee', 'fee']);

        // Pages of 3 walk every entry of B once, newest first.
        const pages: number[][] = [];
        let beforeId: number | undefined;
        for (;;) {
          const page = await read((tx) =>
            tx.ledger.list({ pubkey: B, limit: 3, ...(beforeId === undefined ? {} : { beforeId }) }),
          );
          if (page.length === 0) break;
          pages.push(page.map((e) => Number(e.amount)));
          beforeId = page.at(-1)!.id;
        }
        expect(pages).toEqual([
          [5, 4, 3],
          [2, 1],
        ]);
        expect(await read((tx) => tx.ledger.list({ limit: 0 }))).toEqual([]);
        expect(await read((tx) => tx.ledger.list({ beforeId: all.at(-1)!.id, limit: 10 }))).toEqual([]);
      });

      it('sums the positive mining rewards of a key per token', async () => {
        await write((tx) =>
          tx.ledger.apply([
            credit(A, 'TMN', 7n),
            credit(A, 'TMN', 2n ** 70n),
            credit(A, 'USDT', 3n),
            entry('transfer', A, 'TMN', 100n),
            credit(B, 'TMN', 50n),
          ]),
        );
        await write((tx) => tx.ledger.apply([entry('mining_reward', A, 'TMN', -7n)]));
        expect(await read((tx) => tx.ledger.rewardsTotal(A, 'TMN'))).toBe(2n ** 70n + 7n);
        expect(await read((tx) => tx.ledger.rewardsTotal(A, 'USDT'))).toBe(3n);
        expect(await read((tx) => tx.ledger.rewardsTotal(C, 'TMN'))).toBe(0n);
      });

      it('applies an empty list as a no-op', async () => {
        expect(await write((tx) => tx.ledger.apply([]))).toEqual([]);
      });
    });

    describe('devices', () => {
      it('registers a device and keeps registeredAt (and deviceId) when the key registers again', async () => {
        const first = device(A, { deviceType: 'esp32', port: 8080, registeredAt: T, lastSeen: T });
        expect(await write((tx) => tx.devices.upsert(first))).toEqual(first);
        const again = await write((tx) =>
          tx.devices.upsert(
            device(A, {
              deviceId: 'dev-new',
              deviceType: 'native',
              port: null,
              registeredAt: T + 50,
              lastSeen: T + 50,
            }),
          ),
        );
        expect(again).toEqual({ ...first, deviceType: 'native', port: null, lastSeen: T + 50 });
        expect(await read((tx) => tx.devices.get(A))).toEqual(again);
        expect(await read((tx) => tx.devices.get(B))).toBeUndefined();
      });

      it('touches lastSeen of a known key and ignores an unknown one', async () => {
        await write((tx) => tx.devices.upsert(device(A)));
        await write(async (tx) => {
          await tx.devices.touch(A, T + 99);
          await tx.devices.touch(B, T + 99);
        });
        expect((await read((tx) => tx.devices.get(A)))?.lastSeen).toBe(T + 99);
        expect(await read((tx) => tx.devices.get(B))).toBeUndefined();
      });

      it('lists by registeredAt then pubkey, with a type filter, a limit and keyset pages', async () => {
        await write(async (tx) => {
          await tx.devices.upsert(device(C, { registeredAt: T + 1, deviceType: 'esp32' }));
          await tx.devices.upsert(device(B, { registeredAt: T, deviceType: 'native' }));
          await tx.devices.upsert(device(A, { registeredAt: T + 1, deviceType: 'esp32' }));
        });
        type Filter = Parameters<StorageTx['devices']['list']>[0];
        const keys = async (filter: Filter) =>
          (await read((tx) => tx.devices.list(filter))).map((d) => d.pubkey);
        expect(await keys({ limit: 10 })).toEqual([B, A, C]);
        expect(await keys({ limit: 1, after: { registeredAt: T, pubkey: B } })).toEqual([A]);
        expect(await keys({ limit: 10, after: { registeredAt: T + 1, pubkey: A } })).toEqual([C]);
        expect(await keys({ limit: 10, after: { registeredAt: T + 1, pubkey: C } })).toEqual([]);
        // A position between rows (the device it names need not exist).
        expect(await keys({ limit: 10, after: { registeredAt: T, pubkey: 'ff'.repeat(32) } })).toEqual([
          A,
          C,
        ]);
        expect(await keys({ deviceType: 'esp32', limit: 10 })).toEqual([A, C]);
        expect(
          await keys({ deviceType: 'esp32', limit: 10, after: { registeredAt: T + 1, pubkey: A } }),
        ).toEqual([C]);
        expect(await keys({ deviceType: 'stm32', limit: 10 })).toEqual([]);
      });

      it('counts devices by type, listing only the types present', async () => {
        expect(await read((tx) => tx.devices.countByType())).toEqual({});
        await write(async (tx) => {
          await tx.devices.upsert(device(A, { deviceType: 'esp32' }));
          await tx.devices.upsert(device(B, { deviceType: 'esp32' }));
          await tx.devices.upsert(device(C, { deviceType: 'native' }));
          await tx.devices.upsert(device(C, { deviceType: 'esp8266' }));
          expect(await tx.devices.countByType()).toEqual({ esp32: 2, esp8266: 1 });
        });
        expect(await read((tx) => tx.devices.countByType())).toEqual({ esp32: 2, esp8266: 1 });
        // Registering again with the same type counts nothing; a rolled-back change neither.
        await write((tx) => tx.devices.upsert(device(A, { deviceType: 'esp32' })));
        await write(async (tx) => {
          await tx.devices.upsert(device(A, { deviceType: 'native' }));
          throw new Error('no');
        }).catch(() => undefined);
        expect(await read((tx) => tx.devices.countByType())).toEqual({ esp32: 2, esp8266: 1 });
      });

      it('keeps the callback address, mode and reported hash rate, and a new registration replaces them', async () => {
        const on = device(A, { callbackAddress: '192.168.1.20', callbackMode: 'on', hashrate: 150_000 });
        expect(await write((tx) => tx.devices.upsert(on))).toEqual(on);
        const relayed = await write((tx) =>
          tx.devices.upsert(device(A, { callbackAddress: null, callbackMode: 'relayed', hashrate: null })),
        );
        expect(relayed).toMatchObject({ callbackAddress: null, callbackMode: 'relayed', hashrate: null });
      });

      it('counts the other devices called back at an address, and lists the devices called back', async () => {
        await write(async (tx) => {
          await tx.devices.upsert(
            device(A, { callbackAddress: '10.0.0.5', callbackMode: 'on', registeredAt: T + 2 }),
          );
          await tx.devices.upsert(
            device(B, { callbackAddress: '10.0.0.5', callbackMode: 'off', registeredAt: T + 1 }),
          );
          await tx.devices.upsert(
            device(C, { callbackAddress: '10.0.0.6', callbackMode: 'on', registeredAt: T }),
          );
        });
        expect(await read((tx) => tx.devices.countAtAddress('10.0.0.5', C))).toBe(2);
        expect(await read((tx) => tx.devices.countAtAddress('10.0.0.5', A))).toBe(1);
        expect(await read((tx) => tx.devices.countAtAddress('10.0.0.9', A))).toBe(0);
        expect((await read((tx) => tx.devices.listCallbacks(10))).map((d) => d.pubkey)).toEqual([C, A]);
        expect((await read((tx) => tx.devices.listCallbacks(1))).map((d) => d.pubkey)).toEqual([C]);
      });
    });

    describe('miners', () => {
      it('creates stats on first record and adds to them after', async () => {
        expect(await read((tx) => tx.miners.get(A))).toBeUndefined();
        await write((tx) => tx.miners.record(A, { proofsAccepted: 1, seenAt: T }));
        await write(async (tx) => {
          await tx.miners.record(A, { proofsRejected: 2, seenAt: T + 10 });
          await tx.miners.record(A, { blocksAccepted: 1, proofsAccepted: 3, seenAt: T + 5 });
        });
        expect(await read((tx) => tx.miners.get(A))).toEqual({
          pubkey: A,
          proofsAccepted: 4,
          proofsRejected: 2,
          blocksAccepted: 1,
          lastSeen: T + 10,
        });
        expect(await read((tx) => tx.miners.get(B))).toBeUndefined();
      });

      it('recordAndTouch records like record and sets the device last_seen (none without a device)', async () => {
        await write((tx) => tx.devices.upsert(device(A, { lastSeen: T })));
        await write((tx) => tx.miners.recordAndTouch(A, { blocksAccepted: 1, seenAt: T + 7 }));
        await write((tx) => tx.miners.recordAndTouch(B, { blocksAccepted: 2, seenAt: T + 3 }));
        expect(await read((tx) => tx.miners.get(A))).toEqual({
          pubkey: A,
          proofsAccepted: 0,
          proofsRejected: 0,
          blocksAccepted: 1,
          lastSeen: T + 7,
        });
        expect((await read((tx) => tx.devices.get(A)))?.lastSeen).toBe(T + 7);
        expect((await read((tx) => tx.miners.get(B)))?.blocksAccepted).toBe(2);
        expect(await read((tx) => tx.devices.get(B))).toBeUndefined();
      });
    });

    describe('challenges', () => {
      it('stores and returns a challenge', async () => {
        const c = challenge(0);
        await write((tx) => tx.challenges.insert(c));
        expect(await read((tx) => tx.challenges.get(c.id))).toEqual(c);
        expect(await read((tx) => tx.challenges.get('missing'))).toBeUndefined();
      });

      it('refuses a second challenge with the same id', async () => {
        await write((tx) => tx.challenges.insert(challenge(0)));
        await expect(
          write((tx) => tx.challenges.insert({ ...challenge(1), id: challenge(0).id })),
        ).rejects.toThrow();
        expect(await read((tx) => tx.challenges.countOpen(0))).toBe(1);
      });

      it('hands out serial numbers from 0, never twice', async () => {
        const serials = [
          await write((tx) => tx.challenges.nextSerial()),
          await write((tx) => tx.challenges.nextSerial()),
          ...(await write(async (tx) => [
            await tx.challenges.nextSerial(),
            await tx.challenges.nextSerial(),
          ])),
        ];
        expect(serials).toEqual([0, 1, 2, 3]);
        const concurrent = await Promise.all(
          Array.from({ length: 20 }, () => write((tx) => tx.challenges.nextSerial())),
        );
        expect(new Set([...serials, ...concurrent]).size).toBe(24);
      });

      it('counts challenges still answerable at now (expires_at >= now)', async () => {
        await write(async (tx) => {
          await tx.challenges.insert({ ...challenge(0), expiresAt: T + 10 });
          await tx.challenges.insert({ ...challenge(1), expiresAt: T + 20 });
          await tx.challenges.insert({ ...challenge(2), expiresAt: T + 30 });
        });
        expect(await read((tx) => tx.challenges.countOpen(T))).toBe(3);
        expect(await read((tx) => tx.challenges.countOpen(T + 10))).toBe(3);
        expect(await read((tx) => tx.challenges.countOpen(T + 11))).toBe(2);
        expect(await read((tx) => tx.challenges.countOpen(T + 30))).toBe(1);
        expect(await read((tx) => tx.challenges.countOpen(T + 31))).toBe(0);
      });
    });

    describe('proofs', () => {
      it('accepts one proof per challenge and key, and returns false for a second', async () => {
        const { proof } = await acceptedProofFixture();
        expect(await write((tx) => tx.proofs.insert(proof))).toBe(true);
        expect(await write((tx) => tx.proofs.insert({ ...proof, nonce: 99, txSig: 'ff'.repeat(64) }))).toBe(
          false,
        );
        expect(await read((tx) => tx.proofs.get(proof.challengeId, A))).toEqual(proof);
        expect(await write((tx) => tx.proofs.insert({ ...proof, pubkey: B }))).toBe(true);
        expect(await read((tx) => tx.proofs.get(proof.challengeId, C))).toBeUndefined();
        expect(await read((tx) => tx.proofs.get('missing', A))).toBeUndefined();
      });

      it("reads a submission's challenge, device and earlier proof in one call; parts that do not exist are left out", async () => {
        const { proof } = await acceptedProofFixture();
        await write(async (tx) => {
          await tx.proofs.insert(proof);
          await tx.devices.upsert(device(A));
          await tx.devices.upsert(device(B));
        });
        const c = challenge(0);
        expect(await read((tx) => tx.challenges.getForSubmit(c.id, A))).toEqual({
          challenge: c,
          device: device(A),
          proof,
        });
        expect(await read((tx) => tx.challenges.getForSubmit(c.id, B))).toEqual({
          challenge: c,
          device: device(B),
        });
        expect(await read((tx) => tx.challenges.getForSubmit(c.id, C))).toEqual({ challenge: c });
        expect(await read((tx) => tx.challenges.getForSubmit('missing', A))).toEqual({ device: device(A) });
        expect(await read((tx) => tx.challenges.getForSubmit('missing', C))).toEqual({});
      });

      it('leaves the transaction usable after a conflict', async () => {
        const { proof } = await acceptedProofFixture();
        await write((tx) => tx.proofs.insert(proof));
        const inserted = await write(async (tx) => {
          const result = await tx.proofs.insert({ ...proof, nonce: 5 });
          await tx.meta.set('after', 'yes');
          return result;
        });
        expect(inserted).toBe(false);
        expect(await read((tx) => tx.meta.get('after'))).toBe('yes');
        expect((await read((tx) => tx.proofs.get(proof.challengeId, A)))?.nonce).toBe(proof.nonce);
      });
    });

    describe('hexChallenges', () => {
      it('stores and returns a challenge with parents and a large difficulty', async () => {
        const c = hexChallenge(0, { difficulty: 2n ** 200n + 3n });
        const orphan = hexChallenge(1, { parents: [], minerPubkey: null });
        await write(async (tx) => {
          await tx.hexChallenges.insert(c);
          await tx.hexChallenges.insert(orphan);
        });
        expect(await read((tx) => tx.hexChallenges.get(c.id))).toEqual(c);
        expect(await read((tx) => tx.hexChallenges.get(orphan.id))).toEqual(orphan);
        expect(await read((tx) => tx.hexChallenges.get('missing'))).toBeUndefined();
      });

      it('reads a challenge with a device in one call; parts that do not exist are left out', async () => {
        const c = hexChallenge(0);
        await write(async (tx) => {
          await tx.hexChallenges.insert(c);
          await tx.devices.upsert(device(A));
        });
        expect(await read((tx) => tx.hexChallenges.getWithDevice(c.id, A))).toEqual({
          challenge: c,
          device: device(A),
        });
        expect(await read((tx) => tx.hexChallenges.getWithDevice(c.id, B))).toEqual({ challenge: c });
        expect(await read((tx) => tx.hexChallenges.getWithDevice('missing', A))).toEqual({
          device: device(A),
        });
        expect(await read((tx) => tx.hexChallenges.getWithDevice('missing', B))).toEqual({});
      });

      it('hands out serial numbers from 0, independently of v4.0 challenges', async () => {
        await write((tx) => tx.challenges.nextSerial());
        expect(await write((tx) => tx.hexChallenges.nextSerial())).toBe(0);
        expect(await write((tx) => tx.hexChallenges.nextSerial())).toBe(1);
        expect(await write((tx) => tx.challenges.nextSerial())).toBe(1);
      });

      it('counts challenges still answerable at now (expires_at >= now)', async () => {
        await write(async (tx) => {
          await tx.hexChallenges.insert({ ...hexChallenge(0), expiresAt: T + 10 });
          await tx.hexChallenges.insert({ ...hexChallenge(1), expiresAt: T + 20 });
        });
        expect(await read((tx) => tx.hexChallenges.countOpen(T + 10))).toBe(2);
        expect(await read((tx) => tx.hexChallenges.countOpen(T + 11))).toBe(1);
        expect(await read((tx) => tx.hexChallenges.countOpen(T + 21))).toBe(0);
        expect((await read((tx) => tx.hexChallenges.openExpiries(T + 10))).sort()).toEqual([T + 10, T + 20]);
        expect(await read((tx) => tx.hexChallenges.openExpiries(T + 11))).toEqual([T + 20]);
        expect(await read((tx) => tx.hexChallenges.openExpiries(T + 21))).toEqual([]);
      });
    });

    describe('pool shares', () => {
      const member = poolMember;
      const share = (pubkey: string, n: number): PoolShareRecord => ({
        pubkey,
        challengeId: 'hex-0',
        powHash: n.toString(16).padStart(64, '0'),
        difficulty: 16n,
        blockDifficulty: 2n ** 70n,
        stale: false,
        createdAtMs: T * 1000 + n,
      });
      const advanced = (m: PoolMemberRecord): PoolMemberRecord => ({
        ...m,
        shareDifficulty: 32n,
        vardiffShares: m.vardiffShares + 1,
        lastShareAt: T + 1,
      });

      it("reads a member and a challenge's terms in one call; parts that do not exist are left out", async () => {
        await write(async (tx) => {
          await tx.hexChallenges.insert(hexChallenge(0));
          await tx.pool.putMember(member(A));
          await tx.pool.putChallengeTerms({ challengeId: 'hex-0', pubkey: A, shareDifficulty: 16n });
        });
        const terms = { challengeId: 'hex-0', pubkey: A, shareDifficulty: 16n };
        expect(await read((tx) => tx.pool.getMemberAndTerms(A, 'hex-0'))).toEqual({
          member: member(A),
          terms,
        });
        expect(await read((tx) => tx.pool.getMemberAndTerms(B, 'hex-0'))).toEqual({ terms });
        expect(await read((tx) => tx.pool.getMemberAndTerms(A, 'missing'))).toEqual({ member: member(A) });
        expect(await read((tx) => tx.pool.getMemberAndTerms(B, 'missing'))).toEqual({});
      });

      it('reads what a share is checked against in one call; parts that do not exist are undefined', async () => {
        await write(async (tx) => {
          await tx.hexChallenges.insert(hexChallenge(0));
          await tx.pool.putMember(member(A));
          await tx.pool.putChallengeTerms({ challengeId: 'hex-0', pubkey: A, shareDifficulty: 16n });
          await tx.pool.putBackoff({ key: `1.2.3.4|${A}`, invalid: 2, lastInvalidMs: 5, untilMs: 0 });
        });
        expect(await read((tx) => tx.pool.shareContext('hex-0', `1.2.3.4|${A}`, A))).toEqual({
          challenge: hexChallenge(0),
          terms: { challengeId: 'hex-0', pubkey: A, shareDifficulty: 16n },
          backoff: { key: `1.2.3.4|${A}`, invalid: 2, lastInvalidMs: 5, untilMs: 0 },
          member: member(A),
        });
        expect(await read((tx) => tx.pool.shareContext('missing', 'none', B))).toEqual({
          challenge: undefined,
          terms: undefined,
          backoff: undefined,
          member: undefined,
        });
      });

      it('records shares with their members in one call: a duplicate writes nothing, a changed member is not advanced', async () => {
        await write(async (tx) => {
          await tx.hexChallenges.insert(hexChallenge(0));
          await tx.pool.putMember(member(A));
          await tx.pool.putMember(member(B, { vardiffShares: 5 }));
        });
        const a = member(A);
        const staleB = member(B); // B's vardiff count is 5, not 0: changed since this was read
        expect(
          await write((tx) =>
            tx.pool.recordShares([
              { share: share(A, 1), from: a, next: advanced(a) },
              { share: share(B, 2), from: staleB, next: advanced(staleB) },
            ]),
          ),
        ).toEqual([
          { busy: false, inserted: true, advanced: true },
          { busy: false, inserted: true, advanced: false },
        ]);
        expect(await read((tx) => tx.pool.getMember(A))).toEqual({ ...advanced(a), sharesAccepted: 1 });
        expect(await read((tx) => tx.pool.getMember(B))).toEqual(member(B, { vardiffShares: 5 }));
        // The same share again: nothing written, though its member matches.
        const a1 = { ...advanced(a), sharesAccepted: 1 };
        expect(
          await write((tx) => tx.pool.recordShares([{ share: share(A, 1), from: a1, next: advanced(a1) }])),
        ).toEqual([{ busy: false, inserted: false, advanced: false }]);
        expect(await read((tx) => tx.pool.getMember(A))).toEqual(a1);
        expect((await read((tx) => tx.pool.sharesBefore(1e12, 0, 10))).map((x) => x.powHash)).toEqual([
          share(B, 2).powHash,
          share(A, 1).powHash,
        ]);
        // Two shares of one member in one call are refused (one share per member and call).
        await expect(
          write((tx) =>
            tx.pool.recordShares([
              { share: share(A, 3), from: a1, next: advanced(a1) },
              { share: share(A, 4), from: a1, next: advanced(a1) },
            ]),
          ),
        ).rejects.toThrow(/one share per member/);
      });
    });

    describe('blocks', () => {
      it('appends a block at the next height and refuses an occupied coordinate', async () => {
        await write((tx) => tx.hexChallenges.insert(hexChallenge(0)));
        expect(await read((tx) => tx.blocks.head())).toEqual({
          height: 0,
          difficulty: null,
          difficultySeq: 0,
        });
        const first = block(1, { q: 1, r: -1, s: 0 });
        const { height: _, ...unplaced } = first;
        expect(await write((tx) => tx.blocks.append(unplaced))).toEqual({
          block: first,
          head: { height: 1, difficulty: null, difficultySeq: 0 },
        });
        const { height: __, ...rival } = { ...block(2, { q: 1, r: -1, s: 0 }), minerPubkey: B };
        expect(await write((tx) => tx.blocks.append(rival))).toBeUndefined();
        expect(await read((tx) => tx.blocks.get({ q: 1, r: -1, s: 0 }))).toEqual(first);
        expect((await read((tx) => tx.blocks.head())).height).toBe(1);
        expect(await read((tx) => tx.blocks.byHeight(2))).toBeUndefined();
        expect(await read((tx) => tx.blocks.get({ q: 0, r: 1, s: -1 }))).toBeUndefined();
      });

      it('keeps the transaction usable after a conflict, and the heights dense', async () => {
        await write(async (tx) => {
          await tx.hexChallenges.insert(hexChallenge(0));
          await tx.blocks.append(unplaced(block(1, { q: 1, r: -1, s: 0 })));
        });
        await write(async (tx) => {
          expect(await tx.blocks.append(unplaced(block(2, { q: 1, r: -1, s: 0 })))).toBeUndefined();
          expect((await tx.blocks.append(unplaced(block(2, { q: 0, r: -1, s: 1 }))))?.block.height).toBe(2);
        });
        expect((await read((tx) => tx.blocks.head())).height).toBe(2);
        expect((await read((tx) => tx.blocks.byHeight(2)))?.coord).toEqual({ q: 0, r: -1, s: 1 });
      });

      it('lists blocks in height order, after a height, by height and all', async () => {
        const coords = [
          { q: 1, r: -1, s: 0 },
          { q: 1, r: 0, s: -1 },
          { q: 0, r: 1, s: -1 },
          { q: -1, r: 1, s: 0 },
          { q: -1, r: 0, s: 1 },
        ];
        const blocks = coords.map((coord, i) => block(i + 1, coord));
        await write(async (tx) => {
          await tx.hexChallenges.insert(hexChallenge(0));
          for (const b of blocks) expect((await tx.blocks.append(unplaced(b)))?.block).toEqual(b);
        });
        expect(await read((tx) => tx.blocks.all())).toEqual(blocks);
        expect(await read((tx) => tx.blocks.list(0, 2))).toEqual(blocks.slice(0, 2));
        expect(await read((tx) => tx.blocks.list(2, 10))).toEqual(blocks.slice(2));
        expect(await read((tx) => tx.blocks.list(5, 10))).toEqual([]);
        expect(await read((tx) => tx.blocks.byHeight(3))).toEqual(blocks[2]);
        expect((await read((tx) => tx.blocks.head())).height).toBe(5);
        expect((await read((tx) => tx.blocks.get({ q: -1, r: 0, s: 1 })))?.difficulty).toBe(2n ** 80n);
      });

      it('writes the live difficulty in the head, numbered, recorded, and says what it replaced', async () => {
        const admin = { kind: 'admin', atMs: T * 1000 } as const;
        expect(await write((tx) => tx.blocks.setDifficulty(4096n, admin))).toEqual({
          previous: null,
          head: { height: 0, difficulty: 4096n, difficultySeq: 1 },
        });
        await write(async (tx) => {
          await tx.hexChallenges.insert(hexChallenge(0));
          await tx.blocks.append(unplaced(block(1, { q: 1, r: -1, s: 0 })));
        });
        expect(
          await write((tx) => tx.blocks.setDifficulty(2n ** 70n, { kind: 'retarget', atMs: T * 1000 + 1 })),
        ).toEqual({ previous: 4096n, head: { height: 1, difficulty: 2n ** 70n, difficultySeq: 2 } });
        expect(await read((tx) => tx.blocks.head())).toEqual({
          height: 1,
          difficulty: 2n ** 70n,
          difficultySeq: 2,
        });
        expect(await read((tx) => tx.blocks.difficultyWrites(0, 10))).toEqual([
          { seq: 1, height: 0, kind: 'admin', previous: null, value: 4096n, atMs: T * 1000 },
          { seq: 2, height: 1, kind: 'retarget', previous: 4096n, value: 2n ** 70n, atMs: T * 1000 + 1 },
        ]);
        expect(await read((tx) => tx.blocks.difficultyWrites(1, 10))).toHaveLength(1);
        expect(await read((tx) => tx.blocks.difficultyWrites(0, 1))).toHaveLength(1);
        await expect(write((tx) => tx.blocks.setDifficulty(0n, admin))).rejects.toMatchObject({
          code: 'invalid_value',
        });
        // Rolled back with its transaction.
        await write(async (tx) => {
          await tx.blocks.setDifficulty(7n, admin);
          throw new Error('no');
        }).catch(() => undefined);
        expect((await read((tx) => tx.blocks.head())).difficultySeq).toBe(2);
        expect(await read((tx) => tx.blocks.difficultyWrites(0, 10))).toHaveLength(2);
      });
    });

    describe('blocks.appendLast', () => {
      const note = {
        channel: 'chain_test',
        template: '{"height":-1,"b":{"height":-1},"seqBefore":-1}',
        atRetarget: '{"height":-1,"w":1,"seqBefore":-1}',
        heightKey: '"height":',
        seqKey: '"seqBefore":',
      };
      /** Appends `b` left in flight, as a block's transaction does; what the promise said and what the transaction did. */
      const last = async (b: NewBlockRecord, retarget?: Parameters<StorageTx['blocks']['appendLast']>[3]) => {
        let outcome: ReturnType<StorageTx['blocks']['appendLast']> | undefined;
        const committed = await write(async (tx) => {
          await tx.meta.set('touched', String(b.nonce));
          outcome = tx.blocks.appendLast(b, 3, note, retarget);
          outcome.catch(() => undefined);
        }).then(
          () => true,
          () => false,
        );
        return { committed, outcome: await outcome };
      };
      const at = (i: number) =>
        [
          { q: 1, r: -1, s: 0 },
          { q: 1, r: 0, s: -1 },
          { q: 0, r: 1, s: -1 },
        ][i]!;

      it('appends with its notification, refuses a taken cell and a retarget height without its write (nothing kept)', async () => {
        const chain = await collect('chain_test');
        await write((tx) => tx.hexChallenges.insert(hexChallenge(0)));
        const first = block(1, at(0));
        expect(await last(unplaced(first))).toEqual({
          committed: true,
          outcome: { block: first, head: { height: 1, difficulty: null, difficultySeq: 0 } },
        });
        expect(await chain.until(1)).toEqual(['{"height":1,"b":{"height":1},"seqBefore":0}']);
        // A taken cell: refused, and the transaction's other write is gone with it.
        expect(await last({ ...unplaced(block(2, at(0))), nonce: 99 })).toEqual({
          committed: false,
          outcome: { refused: 'taken' },
        });
        expect(await read((tx) => tx.meta.get('touched'))).toBe(String(first.nonce));
        expect(await read((tx) => tx.blocks.head())).toEqual({
          height: 1,
          difficulty: null,
          difficultySeq: 0,
        });
        expect((await last(unplaced(block(2, at(1))))).committed).toBe(true);
        expect((await read((tx) => tx.blocks.byHeight(2)))?.coord).toEqual(at(1));
        // Height 3 is a retarget height (window 3): refused without the write for it.
        expect(await last({ ...unplaced(block(3, at(2))), nonce: 98 })).toEqual({
          committed: false,
          outcome: { refused: 'retarget' },
        });
        const stale = {
          seq: 2,
          height: 3,
          kind: 'retarget',
          previous: null,
          value: 77n,
          atMs: T * 1000,
        } as const;
        expect((await last({ ...unplaced(block(3, at(2))), nonce: 97 }, stale)).outcome).toEqual({
          refused: 'retarget',
        });
        expect(await read((tx) => tx.blocks.head())).toEqual({
          height: 2,
          difficulty: null,
          difficultySeq: 0,
        });
        expect(await read((tx) => tx.meta.get('touched'))).toBe(String(block(2, at(1)).nonce));
        // With the write for height 3: made with the block, in the same transaction.
        const write3 = { ...stale, seq: 1 };
        const third = block(3, at(2));
        expect(await last(unplaced(third), write3)).toEqual({
          committed: true,
          outcome: { block: third, head: { height: 3, difficulty: 77n, difficultySeq: 1 } },
        });
        expect(await read((tx) => tx.blocks.difficultyWrites(0, 10))).toEqual([write3]);
        expect((await chain.until(3)).slice(1)).toEqual([
          '{"height":2,"b":{"height":2},"seqBefore":0}',
          '{"height":3,"w":1,"seqBefore":0}',
        ]);
        await chain.stop();
      });
    });

    describe('proofs.insertOrFail', () => {
      it('inserts, and for a key that has the proof fails its transaction and says false', async () => {
        const { proof } = await acceptedProofFixture();
        expect(await write((tx) => tx.proofs.insertOrFail(proof))).toBe(true);
        let again: Promise<boolean> | undefined;
        await expect(
          write(async (tx) => {
            await tx.meta.set('k', 'v');
            again = tx.proofs.insertOrFail({ ...proof, nonce: 5 });
            again.catch(() => undefined);
          }),
        ).rejects.toBeDefined();
        expect(await again).toBe(false);
        expect(await read((tx) => tx.meta.get('k'))).toBeUndefined();
        expect((await read((tx) => tx.proofs.get(proof.challengeId, A)))?.nonce).toBe(77);
      });

      it("with recordMiner counts the proof on the miner's row and touches the device, nothing of it when refused", async () => {
        const { proof } = await acceptedProofFixture();
        await write(async (tx) => {
          await tx.devices.upsert(device(A, { lastSeen: T }));
          await tx.miners.record(A, { proofsAccepted: 2, seenAt: T });
        });
        expect(await write((tx) => tx.proofs.insertOrFail(proof, { recordMiner: true }))).toBe(true);
        expect(await read((tx) => tx.proofs.get(proof.challengeId, A))).toEqual(proof);
        const counted = {
          pubkey: A,
          proofsAccepted: 3,
          proofsRejected: 0,
          blocksAccepted: 0,
          lastSeen: T + 1,
        };
        expect(await read((tx) => tx.miners.get(A))).toEqual(counted);
        expect((await read((tx) => tx.devices.get(A)))?.lastSeen).toBe(T + 1);
        let again: Promise<boolean> | undefined;
        await expect(
          write(async (tx) => {
            again = tx.proofs.insertOrFail({ ...proof, nonce: 5, acceptedAt: T + 9 }, { recordMiner: true });
            again.catch(() => undefined);
          }),
        ).rejects.toBeDefined();
        expect(await again).toBe(false);
        expect(await read((tx) => tx.miners.get(A))).toEqual(counted);
        expect((await read((tx) => tx.devices.get(A)))?.lastSeen).toBe(T + 1);
        // A miner without a row or a device: the row is made, no device appears.
        expect(
          await write((tx) => tx.proofs.insertOrFail({ ...proof, pubkey: B }, { recordMiner: true })),
        ).toBe(true);
        expect((await read((tx) => tx.miners.get(B)))?.proofsAccepted).toBe(1);
        expect(await read((tx) => tx.devices.get(B))).toBeUndefined();
      });
    });

    describe('proofs.insertAllOrFail', () => {
      it('writes a group of proofs of distinct keys with their miners and devices; one earlier proof fails it all', async () => {
        const { proof } = await acceptedProofFixture();
        await write(async (tx) => {
          await tx.devices.upsert(device(A, { lastSeen: T }));
          await tx.devices.upsert(device(C, { lastSeen: T }));
          await tx.miners.record(C, { proofsAccepted: 4, seenAt: T });
        });
        const ofC = { ...proof, pubkey: C, nonce: 9, acceptedAt: T + 2 };
        const ofB = { ...proof, pubkey: B, nonce: 8, acceptedAt: T + 3 };
        expect(await write((tx) => tx.proofs.insertAllOrFail([ofC, proof]))).toBe(true);
        expect(await read((tx) => tx.proofs.get(proof.challengeId, A))).toEqual(proof);
        expect(await read((tx) => tx.proofs.get(proof.challengeId, C))).toEqual(ofC);
        const minerA = {
          pubkey: A,
          proofsAccepted: 1,
          proofsRejected: 0,
          blocksAccepted: 0,
          lastSeen: T + 1,
        };
        const minerC = {
          pubkey: C,
          proofsAccepted: 5,
          proofsRejected: 0,
          blocksAccepted: 0,
          lastSeen: T + 2,
        };
        expect(await read((tx) => tx.miners.get(A))).toEqual(minerA);
        expect(await read((tx) => tx.miners.get(C))).toEqual(minerC);
        expect((await read((tx) => tx.devices.get(A)))?.lastSeen).toBe(T + 1);
        expect((await read((tx) => tx.devices.get(C)))?.lastSeen).toBe(T + 2);
        // B's proof is new, A's is there already: nothing of the group, nor of its transaction.
        let again: Promise<boolean> | undefined;
        await expect(
          write(async (tx) => {
            await tx.meta.set('k', 'v');
            again = tx.proofs.insertAllOrFail([ofB, { ...proof, nonce: 5, acceptedAt: T + 9 }]);
            again.catch(() => undefined);
          }),
        ).rejects.toBeDefined();
        expect(await again).toBe(false);
        expect(await read((tx) => tx.meta.get('k'))).toBeUndefined();
        expect(await read((tx) => tx.proofs.get(proof.challengeId, B))).toBeUndefined();
        expect(await read((tx) => tx.miners.get(B))).toBeUndefined();
        expect(await read((tx) => tx.miners.get(A))).toEqual(minerA);
        expect((await read((tx) => tx.devices.get(A)))?.lastSeen).toBe(T + 1);
        // Two proofs of one key are not a group.
        await expect(
          write((tx) => tx.proofs.insertAllOrFail([ofB, { ...ofB, challengeId: 'x' }])),
        ).rejects.toThrow(/distinct keys/);
        expect(await write((tx) => tx.proofs.insertAllOrFail([]))).toBe(true);
      });
    });

    describe('requestNonces', () => {
      const K = 'aa'.repeat(32);
      it('claims a pair once, per key, and keeps nothing of a rolled-back claim', async () => {
        expect(await write((tx) => tx.requestNonces.claim(K, '01'.repeat(16), 2_000, 0))).toBe(true);
        expect(await write((tx) => tx.requestNonces.claim(K, '01'.repeat(16), 2_000, 0))).toBe(false);
        expect(await write((tx) => tx.requestNonces.claim('bb'.repeat(32), '01'.repeat(16), 2_000, 0))).toBe(
          true,
        );
        await expect(
          write(async (tx) => {
            await tx.requestNonces.claim(K, '02'.repeat(16), 2_000, 0);
            throw new Error('the effect failed');
          }),
        ).rejects.toThrow('the effect failed');
        expect(await write((tx) => tx.requestNonces.claim(K, '02'.repeat(16), 2_000, 0))).toBe(true);
        expect(await read((tx) => tx.requestNonces.count())).toBe(3);
      });

      it('forgets pairs that expired before the given time', async () => {
        await write((tx) => tx.requestNonces.claim(K, '01'.repeat(16), 1_000, 0));
        await write((tx) => tx.requestNonces.claim(K, '02'.repeat(16), 5_000, 0));
        await write((tx) => tx.requestNonces.claim(K, '03'.repeat(16), 9_000, 3_000));
        expect(await read((tx) => tx.requestNonces.count())).toBe(2);
        expect(await write((tx) => tx.requestNonces.claim(K, '01'.repeat(16), 9_000, 3_000))).toBe(true);
      });
    });

    describe('notify and listen', () => {
      it('delivers the payloads of a committed transaction, in order, and nothing of a rolled-back one', async () => {
        const blocks = await collect('blocks');
        const other = await collect('other_channel');
        await expect(
          write(async (tx) => {
            await tx.notify('blocks', 'rolled-back');
            throw new Error('no');
          }),
        ).rejects.toThrow('no');
        await write(async (tx) => {
          await tx.notify('blocks', 'one');
          await tx.notify('blocks', 'two');
          await tx.meta.set('k', 'v');
        });
        await write((tx) => tx.notify('blocks', 'é'.repeat(3500)));
        expect(await blocks.until(3)).toEqual(['one', 'two', 'é'.repeat(3500)]);
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(blocks.got).toHaveLength(3);
        expect(other.got).toEqual([]);
        await blocks.stop();
        await blocks.stop(); // idempotent
        await write((tx) => tx.notify('blocks', 'after stop'));
        await write((tx) => tx.notify('other_channel', 'x'));
        expect(await other.until(1)).toEqual(['x']);
        expect(blocks.got).toHaveLength(3);
        await other.stop();
      });

      it('refuses a bad channel, a payload over 7000 bytes and a notify inside read', async () => {
        await expect(write((tx) => tx.notify('Bad-Channel', 'x'))).rejects.toThrow(/channel/);
        await expect(storage.listen('', () => undefined)).rejects.toThrow(/channel/);
        await expect(write((tx) => tx.notify('c', 'x'.repeat(7001)))).rejects.toThrow(/7000/);
        await expect(write((tx) => tx.notify('c', 'é'.repeat(3501)))).rejects.toThrow(/7000/);
        await expect(read((tx) => tx.notify('c', 'x'))).rejects.toThrow(/storage\.read\(\)/);
      });
    });

    describe('transactions', () => {
      it('returns the value of the callback', async () => {
        expect(await write(async () => 42)).toBe(42);
        expect(await read(async () => 'x')).toBe('x');
      });

      it('rolls back every write when the callback throws, and rethrows the same error', async () => {
        await write((tx) => tx.meta.set('kept', 'before'));
        const boom = new Error('boom');
        const error = await write(async (tx) => {
          await tx.meta.set('kept', 'changed');
          await tx.meta.set('new', 'x');
          await tx.counters.add('c', 1);
          await tx.ledger.apply([credit(A, 'TMN', 5n)]);
          await tx.devices.upsert(device(A));
          await tx.miners.record(A, { proofsAccepted: 1, seenAt: T });
          await tx.challenges.insert(challenge(0));
          await tx.challenges.nextSerial();
          await tx.hexChallenges.insert(hexChallenge(0));
          await tx.blocks.append(unplaced(block(1, { q: 1, r: -1, s: 0 })));
          throw boom;
        }).catch((e: unknown) => e);
        expect(error).toBe(boom);
        await read(async (tx) => {
          expect(await tx.meta.get('kept')).toBe('before');
          expect(await tx.meta.get('new')).toBeUndefined();
          expect(await tx.counters.get('c')).toBe(0);
          expect(await tx.ledger.balance(A, 'TMN')).toBe(0n);
          expect(await tx.ledger.list({ limit: 10 })).toEqual([]);
          expect(await tx.ledger.rewardsTotal(A, 'TMN')).toBe(0n);
          expect(await tx.devices.get(A)).toBeUndefined();
          expect(await tx.miners.get(A)).toBeUndefined();
          expect(await tx.challenges.get(challenge(0).id)).toBeUndefined();
          expect(await tx.hexChallenges.get(hexChallenge(0).id)).toBeUndefined();
          expect(await tx.blocks.head()).toEqual({ height: 0, difficulty: null, difficultySeq: 0 });
        });
        // The storage is still usable.
        await write((tx) => tx.meta.set('new', 'y'));
        expect(await read((tx) => tx.meta.get('new'))).toBe('y');
      });

      it('a write left in flight (tx.inFlight) that fails fails the transaction, never an unhandled rejection', async () => {
        const unhandled: unknown[] = [];
        const onUnhandled = (reason: unknown) => unhandled.push(reason);
        process.on('unhandledRejection', onUnhandled);
        try {
          await write((tx) => tx.challenges.insert(challenge(0)));
          // Refused by the database (the same challenge id again), after the callback returned.
          await expect(
            write(async (tx) => {
              await tx.meta.set('in-flight', 'written');
              tx.inFlight(tx.challenges.insert(challenge(0)));
              return 'returned';
            }),
          ).rejects.toThrow();
          // Failed before it reached the database.
          await expect(
            write(async (tx) => {
              await tx.meta.set('in-flight', 'written');
              tx.inFlight(Promise.reject(new Error('refused before any statement')));
            }),
          ).rejects.toThrow('refused before any statement');
          expect(await read((tx) => tx.meta.get('in-flight'))).toBeUndefined();
          // One that succeeds is written with the transaction.
          await write(async (tx) => {
            tx.inFlight(tx.meta.set('in-flight', 'written'));
          });
          expect(await read((tx) => tx.meta.get('in-flight'))).toBe('written');
          // Unhandled rejections are reported on a later turn: give them one.
          await new Promise((resolve) => setImmediate(resolve));
          expect(unhandled).toEqual([]);
        } finally {
          process.off('unhandledRejection', onUnhandled);
        }
      });

      it('rolls back when the callback rejects after an await', async () => {
        await expect(
          write(async (tx) => {
            await tx.meta.set('k', 'v');
            await new Promise((resolve) => setTimeout(resolve, 5));
            throw new Error('late');
          }),
        ).rejects.toThrow('late');
        expect(await read((tx) => tx.meta.get('k'))).toBeUndefined();
      });

      it('serialises concurrent transactions', async () => {
        await Promise.all(
          Array.from({ length: 50 }, () =>
            write(async (tx) => {
              const value = Number((await tx.meta.get('n')) ?? '0');
              await new Promise((resolve) => setTimeout(resolve, 1));
              await tx.meta.set('n', String(value + 1));
            }),
          ),
        );
        expect(await read((tx) => tx.meta.get('n'))).toBe('50');
      });

      it('never lets a read see the writes of an unfinished transaction', async () => {
        let wrote!: () => void;
        const written = new Promise<void>((resolve) => {
          wrote = resolve;
        });
        let release!: () => void;
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const failing = write(async (tx) => {
          await tx.meta.set('dirty', 'uncommitted');
          wrote();
          await gate;
          throw new Error('rolled back');
        }).catch((e: unknown) => e);
        await written;
        const seen = read((tx) => tx.meta.get('dirty'));
        await new Promise((resolve) => setTimeout(resolve, 5));
        release();
        expect(await seen).toBeUndefined();
        expect(await failing).toEqual(new Error('rolled back'));
      });

      it('refuses a transaction, a read or close inside a callback instead of hanging', async () => {
        const message =
          'storage.transaction() was called inside a transaction or read callback of the same storage; ' +
          'it would wait for that callback to finish, which waits for it: use the tx given to the callback';
        await expect(write(() => storage.transaction(async () => 1))).rejects.toThrow(message);
        await expect(read(() => storage.transaction(async () => 1))).rejects.toThrow(message);
        await expect(write(() => storage.read(async () => 1))).rejects.toThrow(
          /^storage\.read\(\) was called inside/,
        );
        await expect(write(() => storage.close())).rejects.toThrow(/^storage\.close\(\) was called inside/);
        // The outer transaction rolled back and the storage still works.
        await write((tx) => tx.meta.set('ok', '1'));
        expect(await read((tx) => tx.meta.get('ok'))).toBe('1');
      });

      it('allows a transaction started from a callback once that callback has finished', async () => {
        let later: Promise<void> | undefined;
        await write(async () => {
          later = new Promise((resolve) => setTimeout(resolve, 1)).then(() =>
            storage.transaction((tx) => tx.meta.set('later', '1')),
          );
        });
        await later;
        expect(await read((tx) => tx.meta.get('later'))).toBe('1');
      });

      it('refuses a tx used after its transaction ended', async () => {
        let leaked: StorageTx | undefined;
        await write(async (tx) => {
          leaked = tx;
        });
        await expect(leaked!.meta.set('late', '1')).rejects.toThrow(/transaction that has ended/);
        await expect(leaked!.meta.get('late')).rejects.toThrow(/transaction that has ended/);
        expect(await read((tx) => tx.meta.get('late'))).toBeUndefined();
      });

      it('refuses writes inside read and leaves nothing written', async () => {
        await expect(read((tx) => tx.meta.set('r', '1'))).rejects.toThrow();
        await expect(read((tx) => tx.challenges.nextSerial())).rejects.toThrow();
        expect(await read((tx) => tx.meta.get('r'))).toBeUndefined();
        expect(await write((tx) => tx.challenges.nextSerial())).toBe(0);
      });

      it('close waits for the running transaction, then refuses new work', async () => {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const running = write(async (tx) => {
          await gate;
          await tx.meta.set('last', 'committed');
          return 'done';
        });
        const closing = storage.close();
        release();
        expect(await running).toBe('done');
        await closing;
        await expect(storage.read((tx) => tx.meta.get('last'))).rejects.toThrow(/after close\(\)/);
        await expect(storage.transaction(async () => 1)).rejects.toThrow(/after close\(\)/);
        await storage.close();
        storage = await open(); // for afterEach
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);
const C = 'cc'.repeat(32);
const T = 1_700_000_000;

function entry(type: NewLedgerEntry['type'], pubkey: string, token: string, amount: bigint): NewLedgerEntry {
  return { type, pubkey, token, amount, timestamp: T, ref: null };
}

function credit(pubkey: string, token: string, amount: bigint): NewLedgerEntry {
  return { type: 'mining_reward', pubkey, token, amount, timestamp: T, ref: 'challenge-x' };
}

function device(pubkey: string, fields: Partial<DeviceRecord> = {}): DeviceRecord {
  return {
    deviceId: `dev-${pubkey.slice(0, 4)}`,
    pubkey,
    deviceType: 'esp32',
    port: 8080,
    registeredAt: T,
    lastSeen: T,
    callbackAddress: null,
    callbackMode: 'none',
    hashrate: null,
    ...fields,
  };
}

/** A v4.0 challenge record issued at T (the conformance tests' and the proof recorder's). */
export function challenge(serial: number): ChallengeRecord {
  return {
    id: `ch-${serial}`,
    serial,
    slot: 1000 + serial,
    slotHash: '12'.repeat(32),
    deviceType: 'native',
    difficulty: 4,
    dim: 16,
    entropy: '34'.repeat(32),
    challengeHash: '56'.repeat(32),
    issuedAt: T,
    expiresAt: T + 300,
  };
}

/** A pool member since T at share difficulty 16, vardiff window from T, no shares yet. */
export function poolMember(pubkey: string, fields: Partial<PoolMemberRecord> = {}): PoolMemberRecord {
  return { ...newMember(pubkey, T * 1000), joinedAt: T, shareDifficulty: 16n, ...fields };
}

function hexChallenge(serial: number, fields: Partial<HexChallengeRecord> = {}): HexChallengeRecord {
  return {
    id: `hex-${serial}`,
    serial,
    coord: { q: 1, r: -1, s: 0 },
    slot: 2000 + serial,
    slotHash: '78'.repeat(32),
    challengeHash: '9a'.repeat(32),
    target: `0000${'ff'.repeat(30)}`,
    difficulty: 2n ** 70n,
    entropy: 'bc'.repeat(32),
    parents: [
      { coord: { q: 0, r: 0, s: 0 }, blockHash: '00'.repeat(32), depth: 0 },
      { coord: { q: 1, r: 0, s: -1 }, blockHash: '01'.repeat(32), depth: 1 },
    ],
    depth: 2,
    minerPubkey: A,
    issuedAt: T,
    expiresAt: T + 300,
    ...fields,
  };
}

function block(height: number, coord: { q: number; r: number; s: number }): BlockRecord {
  return {
    coord,
    blockHash: height.toString(16).padStart(64, '0'),
    powHash: `00${height.toString(16).padStart(62, 'f')}`,
    depth: height,
    parents: [{ q: 0, r: 0, s: 0 }],
    minerPubkey: A,
    nonce: 123_456 + height,
    challengeId: 'hex-0',
    slot: 2000,
    difficulty: 2n ** 80n,
    timestampMs: T * 1000 + height,
    height,
  };
}

function unplaced(b: BlockRecord): NewBlockRecord {
  const { height: _, ...rest } = b;
  return rest;
}

function increasing(values: number[]): boolean {
  return values.every((v, i) => i === 0 || v > values[i - 1]!);
}

function decreasing(values: number[]): boolean {
  return values.every((v, i) => i === 0 || v < values[i - 1]!);
}
