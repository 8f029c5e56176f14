import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';

function file(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tm-config-')), 'validator.json');
  writeFileSync(path, content);
  return path;
}

describe('resolveConfig', () => {
  it('applies flags > environment > config file > defaults and says where each value came from', () => {
    const configFile = file(JSON.stringify({ port: 9000, difficulty: 5, challengeTtlS: 300 }));
    const { config, sources } = resolveConfig({
      flags: { port: '9100' },
      env: { TENSORMINE_PORT: '9200', TENSORMINE_DIFFICULTY: '7' },
      configFile,
    });
    expect(config).toMatchObject({ port: 9100, difficulty: 7, challengeTtlS: 300, maxTensorDim: 64 });
    expect(sources).toMatchObject({
      port: 'flag',
      difficulty: 'env',
      challengeTtlS: 'file',
      maxTensorDim: 'default',
    });
  });

  it('parses typed values from strings: integers, bigints, booleans', () => {
    const { config } = resolveConfig({
      env: {
        TENSORMINE_HEX_DIFFICULTY: '4096',
        TENSORMINE_REQUIRE_SIGNATURES: 'false',
        TENSORMINE_HEXCHAIN: 'yes',
      },
    });
    expect(config.hexDifficulty).toBe(4096n);
    expect(config.requireSignatures).toBe(false);
    expect(config.hexchain).toBe(true);
  });

  it('rejects out-of-range and malformed values with messages naming the source', () => {
    expect(() => resolveConfig({ env: { TENSORMINE_DIFFICULTY: '30' } })).toThrow(
      'environment TENSORMINE_DIFFICULTY: expected an integer in [1, 24], got "30"',
    );
    expect(() => resolveConfig({ flags: { port: 'eighty' } })).toThrow(
      'option port: expected an integer in [0, 65535], got "eighty"',
    );
    expect(() => resolveConfig({ env: { TENSORMINE_HEX_DIFFICULTY: '8' } })).toThrow(
      'environment TENSORMINE_HEX_DIFFICULTY: expected an integer in [16, 9007199254740991], got "8"',
    );
    expect(() => resolveConfig({ flags: { adminToken: 'short' } })).toThrow(
      'an admin token needs at least 16 characters',
    );
  });

  it('rejects a config file that is missing, not JSON, or has unknown keys', () => {
    expect(() => resolveConfig({ configFile: '/nonexistent/validator.json' })).toThrow(
      'config file /nonexistent/validator.json: cannot be read (ENOENT)',
    );
    const notJson = file('{ port: 1 }');
    expect(() => resolveConfig({ configFile: notJson })).toThrow(`config file ${notJson}: not valid JSON`);
    const unknown = file('{"prot": 1}');
    expect(() => resolveConfig({ configFile: unknown })).toThrow(
      `config file ${unknown}: unknown settings prot`,
    );
  });
});
