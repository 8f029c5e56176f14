import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyPairFromSecret, taggedHash, utf8 } from '@tensormine/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';
import { NODE_ID_FILE, resolveNodeId } from '../src/services/cluster.js';

const identity = keyPairFromSecret(taggedHash('cluster-node-id', utf8('seed')));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function config(flags: Record<string, unknown>) {
  return resolveConfig({ flags }).config;
}

describe('the node id', () => {
  it('alone on SQLite: node- and the key, as before clusters', () => {
    expect(resolveNodeId(config({ dataDir: ':memory:' }), identity, false)).toMatch(/^node-[0-9a-f]{16}$/);
  });

  it('in a cluster: --node-id, else generated once per data directory and kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'node-id-'));
    dirs.push(dir);
    expect(resolveNodeId(config({ dataDir: dir, nodeId: 'eu-1' }), identity, true)).toBe('eu-1');
    const first = resolveNodeId(config({ dataDir: dir }), identity, true);
    expect(first).toMatch(/^[A-Za-z0-9._-]+-[0-9a-f]{8}$/);
    expect(readFileSync(join(dir, NODE_ID_FILE), 'utf8').trim()).toBe(first);
    expect(resolveNodeId(config({ dataDir: dir }), identity, true)).toBe(first);
    // Two processes with :memory: data directories: two ids.
    const m = config({ dataDir: ':memory:' });
    expect(resolveNodeId(m, identity, true)).not.toBe(resolveNodeId(m, identity, true));
  });

  it('refuses a bad --node-id and a damaged node-id file, saying what is wrong', () => {
    expect(() => config({ nodeId: 'has space' })).toThrow(/a node id is 1 to 64 letters/);
    const dir = mkdtempSync(join(tmpdir(), 'node-id-'));
    dirs.push(dir);
    writeFileSync(join(dir, NODE_ID_FILE), 'not a node id!\n');
    expect(() => resolveNodeId(config({ dataDir: dir }), identity, true)).toThrow(/not a node id/);
  });
});
