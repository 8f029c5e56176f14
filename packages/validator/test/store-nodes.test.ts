import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStorage } from '../src/store/postgres.js';
import { openSqliteStorage } from '../src/store/sqlite.js';
import type { NodeRecord, Storage } from '../src/store/types.js';
import { type PostgresServer, testPostgres } from './support/postgres.js';

/** The cluster_nodes repository (services/cluster.ts heartbeats) on both engines. */

let server: PostgresServer;
beforeAll(async () => {
  server = await testPostgres();
});
afterAll(async () => {
  await server?.stop();
});

const node = (id: string, heartbeatAtMs: number, extra: Partial<NodeRecord> = {}): NodeRecord => ({
  nodeId: id,
  instance: `${id}-i1`,
  url: null,
  softwareVersion: '0.1.0',
  startedAtMs: 1_700_000_000_000,
  heartbeatAtMs,
  appliedHeight: 0,
  synced: true,
  stoppedAtMs: null,
  ...extra,
});

const engines: [string, () => Promise<Storage>][] = [
  ['sqlite', () => openSqliteStorage({ path: ':memory:' })],
  ['postgres', async () => openPostgresStorage({ url: await server.createDatabase(), poolSize: 2 })],
];

describe.each(engines)('cluster nodes on %s', (_name, open) => {
  it('writes, replaces, lists in id order and forgets the nodes gone long ago', async () => {
    const storage = await open();
    try {
      await storage.transaction(async (tx) => {
        await tx.nodes.put(node('b', 2_000));
        await tx.nodes.put(node('a', 1_000));
      });
      const later = node('b', 5_000, {
        instance: 'b-i2',
        url: 'http://10.0.0.2:8420',
        appliedHeight: 12,
        synced: false,
        stoppedAtMs: 6_000,
      });
      await storage.transaction((tx) => tx.nodes.put(later));
      const listed = await storage.read((tx) => tx.nodes.list());
      expect(listed).toEqual([node('a', 1_000), later]);
      expect(await storage.read((tx) => tx.nodes.get('b'))).toEqual(later);
      expect(await storage.read((tx) => tx.nodes.get('c'))).toBeUndefined();
      expect(await storage.transaction((tx) => tx.nodes.forget(1_500))).toBe(1);
      expect((await storage.read((tx) => tx.nodes.list())).map((n) => n.nodeId)).toEqual(['b']);
      await expect(storage.read((tx) => tx.nodes.put(node('c', 1)))).rejects.toMatchObject({
        code: 'read_only',
      });
    } finally {
      await storage.close();
    }
  });
});
