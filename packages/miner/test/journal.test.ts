import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { FoundResult } from '../src/found.js';
import { Journal } from '../src/journal.js';
import { cleanup } from './helpers.js';

async function tempPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tensormine-journal-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'sub', 'journal.jsonl');
}

function result(n: number): FoundResult {
  return {
    id: `t-1/${n}`,
    challengeId: 't-1',
    nonce: n,
    difficulty: 33,
    achievedDifficulty: 40,
    foundAtMs: 1_000,
    expiresAtMs: 2_000_000_000_000,
    device: 'cpu',
    worker: 0,
    kind: 'tensor',
    proof: {
      challenge_id: 't-1',
      challenge_hash: 'ab'.repeat(32),
      tensor_result_hash: 'cd'.repeat(32),
      mml_score: 0.5,
      path_signature: '00'.repeat(8),
      path_distance: 20,
      computation_nonce: n,
      computation_hash: 'ef'.repeat(32),
      miner_pubkey: '12'.repeat(32),
    },
  };
}

describe('Journal', () => {
  test('appends durably, compacts on removal, and is read back by a new instance', async () => {
    const path = await tempPath();
    const journal = await Journal.open({ path, now: () => 123 });
    await journal.add(result(1));
    await journal.add(result(2));
    await journal.add(result(1)); // kept once
    expect((await readFile(path, 'utf8')).trim().split('\n')).toHaveLength(2);
    await journal.remove('t-1/1');
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual([{ v: 1, found: result(2), journaledAtMs: 123 }]);

    const reopened = await Journal.open(path);
    expect(reopened.entries()).toEqual([{ found: result(2), journaledAtMs: 123 }]);
    await reopened.remove('t-1/2');
    expect(await readFile(path, 'utf8')).toBe('');
  });

  test('skips a torn last line (a crash during an append) and garbage', async () => {
    const path = await tempPath();
    const journal = await Journal.open(path);
    await journal.add(result(7));
    await appendFile(path, 'not json\n{"v":1,"journaledAtMs":5,"found":{"id":"x"');
    const reopened = await Journal.open(path);
    expect(reopened.entries().map((e) => e.found.id)).toEqual(['t-1/7']);
    expect(reopened.skippedLines).toBe(2);
    expect(reopened.damagedPath).toBe(`${path}.damaged`);
    expect(await readFile(`${path}.damaged`, 'utf8')).toBe(
      'not json\n{"v":1,"journaledAtMs":5,"found":{"id":"x"\n',
    );
  });

  test('after a torn append, the next entry is not written onto the torn line (survives the next crash)', async () => {
    const path = await tempPath();
    const journal = await Journal.open(path);
    await journal.add(result(1));
    await appendFile(path, '{"v":1,"journaledAtMs":5,"fou'); // a crash during the second append
    const afterCrash = await Journal.open(path);
    expect(afterCrash.skippedLines).toBe(1);
    await afterCrash.add(result(2));
    // Another crash: nothing in memory; both results must be read back from the file.
    const again = await Journal.open(path);
    expect(again.entries().map((e) => e.found.id)).toEqual(['t-1/1', 't-1/2']);
    expect(again.skippedLines).toBe(0);
  });

  test('a missing file is an empty journal; without a path it lives in memory', async () => {
    expect((await Journal.open(await tempPath())).size).toBe(0);
    const memory = await Journal.open();
    await memory.add(result(3));
    expect(memory.has('t-1/3')).toBe(true);
    await memory.remove('t-1/3');
    expect(memory.size).toBe(0);
  });

  test('operations reach the file in order', async () => {
    const path = await tempPath();
    const journal = await Journal.open(path);
    await Promise.all([
      journal.add(result(1)),
      journal.add(result(2)),
      journal.remove('t-1/1'),
      journal.add(result(3)),
    ]);
    await journal.flush();
    const ids = (await readFile(path, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { found: FoundResult }).found.id);
    expect(ids).toEqual(['t-1/2', 't-1/3']);
  });
});
