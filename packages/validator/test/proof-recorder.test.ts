import { generateKeyPair, toHex, verifyReceipt } from '@tensormine/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNTERS } from '../src/services/metrics.js';
import { ProofRecorder, type ProofToWrite } from '../src/services/mining/recorder.js';
import { REWARD_TOKEN } from '../src/services/mining/rules.js';
import { openPostgresStorage } from '../src/store/postgres.js';
import { openSqliteStorage } from '../src/store/sqlite.js';
import type { Storage } from '../src/store/types.js';
import { challenge } from './storage-conformance.js';
import { type PostgresServer, testPostgres } from './support/postgres.js';

/**
 * The group commit of accepted v4.0 proofs (services/mining/recorder.ts) on both engines: the
 * proofs written together are one transaction; a group one of whose proofs was accepted
 * meanwhile writes nothing and each proof is answered as it would have been alone (that one
 * refused, the others accepted), every reward credited once.
 */

const T = 1_700_000_000;
const KEYS = ['aa', 'bb', 'cc', 'dd'].map((b) => b.repeat(32));
const [A, B, C, D] = KEYS as [string, string, string, string];
const ROW_LOCKS = { isolation: 'row-locks' } as const;

let server: PostgresServer;
beforeAll(async () => {
  server = await testPostgres();
});
afterAll(async () => {
  await server?.stop();
});

const engines: [string, () => Promise<Storage>][] = [
  ['sqlite', () => openSqliteStorage({ path: ':memory:' })],
  ['postgres', async () => openPostgresStorage({ url: await server.createDatabase(), poolSize: 4 })],
];

describe.each(engines)('ProofRecorder on %s', (_name, open) => {
  /** The storage, its transactions counted, a recorder on it and its validator key. */
  async function setup() {
    const storage = await open();
    await storage.transaction(async (tx) => {
      await tx.challenges.insert(challenge(0));
      await tx.challenges.insert(challenge(1));
    });
    let transactions = 0;
    const counted: Storage = new Proxy(storage, {
      get(target, property, receiver) {
        if (property === 'transaction') {
          return (...args: Parameters<Storage['transaction']>) => {
            transactions++;
            return target.transaction(...args);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const identity = generateKeyPair();
    const recorder = new ProofRecorder(counted, identity.secretKey, ROW_LOCKS);
    return { storage, recorder, identity, transactions: () => transactions };
  }

  it('writes the proofs verified together in one transaction, each with its signed receipt', async () => {
    const { storage, recorder, identity, transactions } = await setup();
    const items = [A, B, C].map((pubkey, i) => proof(0, pubkey, 10 + i));
    const written = await Promise.all(items.map((item) => recorder.write(item)));
    expect(transactions()).toBe(1);
    for (const [i, receipt] of written.entries()) {
      const item = items[i] as ProofToWrite;
      expect(receipt).toBeDefined();
      expect(receipt?.acceptedAt).toBe(item.acceptedAt);
      const signed = {
        challengeId: item.challengeId,
        minerPubkey: item.pubkey,
        computationHash: item.computationHash,
        ledgerEntryId: receipt?.ledgerEntryId as number,
        rewardMinor: item.reward,
        acceptedAt: item.acceptedAt,
      };
      expect(verifyReceipt(signed, receipt?.txSig as string, identity.publicKey)).toBe(true);
      const row = await storage.read((tx) => tx.proofs.get(item.challengeId, item.pubkey));
      expect(row).toEqual({
        ...receipt,
        challengeId: item.challengeId,
        pubkey: item.pubkey,
        nonce: item.nonce,
      });
      expect(await storage.read((tx) => tx.ledger.balance(item.pubkey, REWARD_TOKEN))).toBe(item.reward);
      expect((await storage.read((tx) => tx.miners.get(item.pubkey)))?.proofsAccepted).toBe(1);
    }
    expect(new Set(written.map((r) => r?.ledgerEntryId)).size).toBe(3);
    expect(await storage.read((tx) => tx.counters.get(COUNTERS.proofsValid))).toBe(3);
    await storage.close();
  });

  it('a proof accepted meanwhile is refused alone; the rest of its group is accepted, each reward once', async () => {
    const { storage, recorder, transactions } = await setup();
    // A's proof of challenge 0, accepted (as through another node) after its new proof was read.
    const earlier = await recorder.write(proof(0, A, 1));
    expect(earlier).toBeDefined();
    expect(transactions()).toBe(1);
    const items = [proof(0, A, 2), proof(0, B, 3), proof(1, A, 4), proof(0, D, 5)];
    const written = await Promise.all(items.map((item) => recorder.write(item)));
    // A's second proof of challenge 0: nothing written, whatever group it was in.
    expect(written[0]).toBeUndefined();
    for (const i of [1, 2, 3]) expect(written[i]).toBeDefined();
    // The first group (A, B, D: one proof per key) failed and its three were written alone;
    // A's proof of challenge 1 went in the next group, a group of one.
    expect(transactions()).toBe(1 + 1 + 3 + 1);
    expect((await storage.read((tx) => tx.proofs.get('ch-0', A)))?.nonce).toBe(1);
    expect((await storage.read((tx) => tx.proofs.get('ch-1', A)))?.nonce).toBe(4);
    expect(await storage.read((tx) => tx.ledger.balance(A, REWARD_TOKEN))).toBe(2n * REWARD);
    expect(await storage.read((tx) => tx.ledger.balance(B, REWARD_TOKEN))).toBe(REWARD);
    expect(await storage.read((tx) => tx.ledger.balance(C, REWARD_TOKEN))).toBe(0n);
    expect(await storage.read((tx) => tx.ledger.balance(D, REWARD_TOKEN))).toBe(REWARD);
    expect((await storage.read((tx) => tx.miners.get(A)))?.proofsAccepted).toBe(2);
    expect(await storage.read((tx) => tx.counters.get(COUNTERS.proofsValid))).toBe(4);
    await storage.close();
  });
});

const REWARD = 1_000n;

function proof(serial: number, pubkey: string, nonce: number): ProofToWrite {
  return {
    challengeId: `ch-${serial}`,
    pubkey,
    nonce,
    computationHash: toHex(new Uint8Array(32).fill(nonce)),
    reward: REWARD,
    acceptedAt: T + nonce,
  };
}
