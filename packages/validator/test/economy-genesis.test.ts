import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createValidator } from '../src/app.js';
import { DEFAULT_GENESIS } from '../src/services/economy.js';
import { conservation, hex } from './economy-helpers.js';
import { testKey, testValidator } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'economy-genesis-'));
  dirs.push(dir);
  return dir;
};

describe('the economy genesis', () => {
  it('writes the default genesis: the reserve and three pools, as genesis entries, conserved', async () => {
    const v = await testValidator({ genesis: DEFAULT_GENESIS });
    const pools = (await v.inject('/swap/pools')).json().pools;
    expect(pools.map((p: { pair: string }) => p.pair)).toEqual(['PTM/SOL', 'PTM/USDC', 'SOL/USDC']);
    expect(pools.find((p: { pair: string }) => p.pair === 'SOL/USDC').reserves).toEqual([
      { token: 'SOL', amount: '1000' },
      { token: 'USDC', amount: '100000' },
    ]);
    const { supply, issued } = await conservation(v);
    expect(supply).toEqual(issued);
    expect(supply.get('PTM')).toBe(3_000_000n * 10n ** 9n);
  });

  it('reads --genesis-file once: a restart with another file changes nothing', async () => {
    const dir = tempDir();
    const alice = testKey('alice');
    const file = join(dir, 'genesis.json');
    writeFileSync(
      file,
      JSON.stringify({
        reserve: '5',
        pools: [],
        allocations: [{ pubkey: hex(alice), token: 'SOL', amount: '2' }],
      }),
    );
    const first = await createValidator({ dataDir: join(dir, 'data'), genesisFile: file });
    expect((await first.inject(`/balances/${hex(alice)}`)).json().balances[1]).toMatchObject({
      token: 'SOL',
      available: '2',
    });
    await first.close();
    writeFileSync(
      file,
      JSON.stringify({
        reserve: '7',
        pools: [],
        allocations: [{ pubkey: hex(alice), token: 'SOL', amount: '9' }],
      }),
    );
    const second = await createValidator({ dataDir: join(dir, 'data'), genesisFile: file });
    expect((await second.inject(`/balances/${hex(alice)}`)).json().balances[1]).toMatchObject({
      available: '2',
    });
    await second.close();
  });

  it('takes a file of allocations alone on top of the built-in reserve and pools', async () => {
    const dir = tempDir();
    const alice = testKey('alice');
    const file = join(dir, 'genesis.json');
    writeFileSync(file, JSON.stringify({ allocations: [{ pubkey: hex(alice), token: 'SOL', amount: '9' }] }));
    const v = await createValidator({ dataDir: ':memory:', genesisFile: file });
    expect((await v.inject(`/balances/${hex(alice)}`)).json().balances[1]).toMatchObject({
      token: 'SOL',
      available: '9',
    });
    const pools = (await v.inject('/swap/pools')).json().pools as { pair: string }[];
    expect(pools.map((p) => p.pair).sort()).toEqual(['PTM/SOL', 'PTM/USDC', 'SOL/USDC']);
    await v.close();
  });

  it('takes the default reserve and pools for the fields a file leaves out; [] and "0" say none', async () => {
    const dir = tempDir();
    const alice = testKey('alice');
    const file = join(dir, 'genesis.json');
    writeFileSync(
      file,
      JSON.stringify({ allocations: [{ pubkey: hex(alice), token: 'USDC', amount: '3' }] }),
    );
    const v = await createValidator({ dataDir: ':memory:', genesisFile: file });
    const pools = (await v.inject('/swap/pools')).json().pools;
    expect(pools.map((p: { pair: string }) => p.pair)).toEqual(['PTM/SOL', 'PTM/USDC', 'SOL/USDC']);
    expect((await conservation(v)).supply.get('USDC')).toBe(150_003n * 10n ** 6n);
    await v.close();
    writeFileSync(file, JSON.stringify({ reserve: '0', pools: [] }));
    const empty = await createValidator({ dataDir: ':memory:', genesisFile: file });
    expect((await empty.inject('/swap/pools')).json().pools).toEqual([]);
    expect((await conservation(empty)).supply.get('PTM') ?? 0n).toBe(0n);
    await empty.close();
  });

  it('refuses a malformed genesis file with a message naming the field', async () => {
    const dir = tempDir();
    const file = join(dir, 'genesis.json');
    writeFileSync(
      file,
      JSON.stringify({
        reserve: '5',
        pools: [{ base: 'PTM', quote: 'PTM', base_reserve: '1', quote_reserve: '1', fee_bps: 30 }],
      }),
    );
    await expect(createValidator({ dataDir: ':memory:', genesisFile: file })).rejects.toThrow(
      'genesis.pools[0]: base and quote must differ',
    );
    writeFileSync(file, '{"reserve": 5}');
    await expect(createValidator({ dataDir: ':memory:', genesisFile: file })).rejects.toThrow(
      /expected an object with optional reserve \(a PTM amount string\), pools \(an array\)/,
    );
    writeFileSync(file, JSON.stringify({ reserve: '1.0000000001', pools: [] }));
    await expect(createValidator({ dataDir: ':memory:', genesisFile: file })).rejects.toThrow(
      /genesis.reserve/,
    );
  });
});
