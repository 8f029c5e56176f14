import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  formatPublicKey,
  type HexStatus,
  type LatticePage,
  RETARGET_WINDOW_BLOCKS,
} from '@tensormine/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { Validator } from '../src/app.js';
import { register, testKey, testValidator } from './helpers.js';
import { issue, mine, submit } from './hexchain-mine.js';

const alice = testKey('hexchain-persistence');
const ALICE = formatPublicKey(alice.publicKey);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function snapshot(v: Validator) {
  const status = (await v.inject('/api/hexchain/status')).json() as HexStatus;
  const lattice = (await v.inject('/api/hexchain/lattice?limit=500')).json() as LatticePage;
  const balance = await v.context.storage.read((tx) => tx.ledger.balance(ALICE, 'PTM'));
  return { status, lattice, balance };
}

describe('hexchain persistence', () => {
  it('keeps the lattice, depths, frontier, difficulty and rewards across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tensormine-hexchain-'));
    dirs.push(dataDir);
    let t = Math.floor(Date.now() / 1000) * 1000;
    const now = () => t;

    const first = await testValidator({ dataDir, now });
    await register(first, alice);
    const submissions = [];
    for (let i = 0; i < RETARGET_WINDOW_BLOCKS; i++) {
      const c = await issue(first, { slot: i });
      const s = mine(c, alice);
      t += 100;
      expect((await submit(first, s)).statusCode).toBe(200);
      submissions.push(s);
    }
    const pending = await issue(first);
    const before = await snapshot(first);
    expect(before.status.difficulty).toBe(256);
    expect(before.status.occupied).toBe(RETARGET_WINDOW_BLOCKS + 1);
    expect(before.lattice.total).toBe(RETARGET_WINDOW_BLOCKS);
    expect(before.balance).toBe(12_000_000_000n);
    await first.close();

    const second = await testValidator({ dataDir, now });
    const after = await snapshot(second);
    expect(after).toEqual(before);
    expect((await second.inject('/status')).json().hexchain).toEqual({
      enabled: true,
      difficulty: 256,
      occupied: RETARGET_WINDOW_BLOCKS + 1,
    });
    // A block accepted before the restart, sent again: its original acceptance (a safe retry);
    // the challenge issued before the restart still works.
    const [replayed] = submissions;
    const again = await submit(second, replayed);
    expect(again.statusCode, again.body).toBe(200);
    expect(after.lattice.blocks.map((b) => b.block_hash)).toContain(again.json().block_hash);
    expect((await snapshot(second)).balance).toBe(after.balance);
    const res = await submit(second, mine(pending, alice));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().depth).toBe(pending.depth);
    expect((await issue(second)).difficulty).toBe(256);

    // The admin value persists too, and the next window starts at block 12's stored time.
    const set = await second.inject({
      method: 'POST',
      url: '/admin/config',
      payload: { hexchain_difficulty: 100 },
      headers: { authorization: `Bearer ${second.adminToken}` },
    });
    expect(set.statusCode).toBe(200);
    await second.close();

    const third = await testValidator({ dataDir, now });
    expect((await snapshot(third)).status.difficulty).toBe(100);
    for (let i = 0; i < RETARGET_WINDOW_BLOCKS - 1; i++) {
      const c = await issue(third);
      const s = mine(c, alice);
      t += 6_000;
      expect((await submit(third, s)).statusCode).toBe(200);
    }
    // Block 13 (the pending challenge) was accepted at block 12's time, blocks 14 to 24 came 6 s
    // apart: t[24] - t[12] = 66 000 ms against 120 000 expected.
    expect((await snapshot(third)).status.difficulty).toBe(Math.floor((100 * 120_000) / 66_000));
    expect((await snapshot(third)).balance).toBe(24_000_000_000n);
  });

  it('starts from a lattice snapshot, replaying only the blocks above it, to the same state', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tensormine-hexchain-'));
    dirs.push(dataDir);
    let t = Math.floor(Date.now() / 1000) * 1000;
    const now = () => t;
    const first = await testValidator({ dataDir, now, latticeSnapshotEvery: 5 });
    await register(first, alice);
    for (let i = 0; i < 13; i++) {
      const c = await issue(first, { slot: i });
      t += 100;
      expect((await submit(first, mine(c, alice))).statusCode).toBe(200);
    }
    const kept = await first.context.storage.read(async (tx) => [
      (await tx.blocks.latestSnapshot(1_000))?.height,
      (await tx.blocks.latestSnapshot(9))?.height,
      (await tx.blocks.latestSnapshot(4))?.height,
    ]);
    // Snapshots at 5 and 10 (the two newest are kept); none below 5.
    expect(kept).toEqual([10, 5, undefined]);
    const before = await snapshot(first);
    await first.close();

    // Started from the snapshot at 10 and blocks 11 to 13: the same status (frontier size,
    // depths...) and pages, and it goes on (a challenge on its frontier, with its parents).
    const second = await testValidator({ dataDir, now, latticeSnapshotEvery: 5 });
    expect(await snapshot(second)).toEqual(before);
    const again = await issue(second, { slot: 99 });
    const res = await submit(second, mine(again, alice));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().depth).toBe(again.depth);
    // A snapshot that cannot be read is set aside: every block is replayed.
    await second.context.storage.transaction((tx) =>
      tx.blocks.putSnapshot({ height: 13, state: '{"height":13}', createdAtMs: t }, 2),
    );
    await second.close();
    const third = await testValidator({ dataDir, now });
    expect((await snapshot(third)).status.occupied).toBe(15);
    await third.close();
  });
});
