import { describe, expect, it } from 'vitest';
import { GroupCommit, type Pending } from '../src/services/group-commit.js';

interface Item {
  readonly key: string;
  readonly n: number;
}

/** A writer that records each group's items and answers them as `answer` says. */
function recording(
  answer: (group: readonly Pending<Item, number>[]) => Promise<Pending<Item, number>[] | undefined>,
) {
  const groups: number[][] = [];
  const writer = async (group: readonly Pending<Item, number>[]) => {
    groups.push(group.map((p) => p.item.n));
    return answer(group);
  };
  return { groups, writer };
}

const resolveAll = async (group: readonly Pending<Item, number>[]) => {
  for (const p of group) p.resolve(p.item.n * 10);
  return undefined;
};

describe('GroupCommit', () => {
  it('writes what arrived in one turn as one group, one item per key, at most max', async () => {
    const { groups, writer } = recording(resolveAll);
    const commit = new GroupCommit<Item, number>(3, (item) => item.key, writer);
    const items: Item[] = [
      { key: 'a', n: 1 },
      { key: 'b', n: 2 },
      { key: 'a', n: 3 },
      { key: 'c', n: 4 },
      { key: 'd', n: 5 },
    ];
    const answers = await Promise.all(items.map((item) => commit.write(item)));
    expect(answers).toEqual([10, 20, 30, 40, 50]);
    // The first group: a, b, c (max 3; the second item of a waits); then a and d.
    expect(groups).toEqual([
      [1, 2, 4],
      [3, 5],
    ]);
  });

  it('writes one group at a time; what arrives meanwhile forms the next', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let writing = 0;
    let most = 0;
    const { groups, writer } = recording(async (group) => {
      writing++;
      most = Math.max(most, writing);
      if (groups.length === 1) await gate;
      writing--;
      return resolveAll(group);
    });
    const commit = new GroupCommit<Item, number>(64, (item) => item.key, writer);
    const first = commit.write({ key: 'a', n: 1 });
    await waitForTurns(() => groups.length === 1);
    const later = [commit.write({ key: 'b', n: 2 }), commit.write({ key: 'c', n: 3 })];
    release();
    expect(await first).toBe(10);
    expect(await Promise.all(later)).toEqual([20, 30]);
    expect(groups).toEqual([[1], [2, 3]]);
    expect(most).toBe(1);
  });

  it('puts the items the writer hands back first in the next group', async () => {
    let round = 0;
    const { groups, writer } = recording(async (group) => {
      round++;
      const again = round === 1 ? group.filter((p) => p.item.key === 'b') : [];
      for (const p of group) if (!again.includes(p)) p.resolve(p.item.n * 10);
      return again;
    });
    const commit = new GroupCommit<Item, number>(64, (item) => item.key, writer);
    const answers = await Promise.all([
      commit.write({ key: 'a', n: 1 }),
      commit.write({ key: 'b', n: 2 }),
      commit.write({ key: 'c', n: 3 }),
    ]);
    expect(answers).toEqual([10, 20, 30]);
    expect(groups).toEqual([[1, 2, 3], [2]]);
  });

  it("answers a writer's throw to every item of its group, and goes on with the next", async () => {
    let round = 0;
    const { writer } = recording(async (group) => {
      round++;
      if (round === 1) throw new Error('the transaction failed');
      return resolveAll(group);
    });
    const commit = new GroupCommit<Item, number>(1, (item) => item.key, writer);
    const results = await Promise.allSettled([
      commit.write({ key: 'a', n: 1 }),
      commit.write({ key: 'b', n: 2 }),
    ]);
    expect(results[0]).toEqual({ status: 'rejected', reason: new Error('the transaction failed') });
    expect(results[1]).toEqual({ status: 'fulfilled', value: 20 });
  });
});

/** Waits (turns of the event loop, no timer) until `condition` holds. */
async function waitForTurns(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
