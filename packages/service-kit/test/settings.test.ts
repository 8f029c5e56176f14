/**
 * The one settings resolver (the validator's, the hub's, the terminal's and the miner's tables
 * all go through it; their own tests check their tables): precedence and sources, where an
 * error says the value came from, defaults that read the environment and the settings above
 * them, a config file given as a path or already read, and the usage rows.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  ConfigError,
  intSetting,
  resolveSettings,
  type SettingSpecs,
  serviceBaseSettings,
  settingsUsage,
  textSetting,
} from '../src/settings.js';

interface Demo {
  readonly home: string;
  readonly cache: string;
  readonly threads: number;
}

const SPECS: SettingSpecs<Demo> = {
  home: { env: 'DEMO_HOME', description: 'home', default: (env) => env.HOME ?? '/root', parse: textSetting },
  // A default computed from the settings above it in the table.
  cache: {
    env: 'DEMO_CACHE',
    description: 'cache',
    default: (_env, s) => `${s.home}/.cache`,
    parse: textSetting,
  },
  threads: {
    env: 'DEMO_THREADS',
    description: 'threads',
    flag: '--threads <n>',
    defaultText: 'one per core',
    default: () => 4,
    parse: intSetting(1, 64),
  },
};

function file(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tm-settings-')), 'settings.json');
  writeFileSync(path, content);
  return path;
}

describe('resolveSettings', () => {
  test('flags > environment > config file > defaults, with the source of each value', () => {
    const { config, sources } = resolveSettings(SPECS, {
      flags: { threads: '8' },
      env: { DEMO_THREADS: '2', DEMO_HOME: '/home/u', DEMO_CACHE: '' },
      configFile: file(JSON.stringify({ home: '/file', threads: 3 })),
    });
    expect(config).toEqual({ home: '/home/u', cache: '/home/u/.cache', threads: 8 });
    expect(sources).toEqual({ home: 'env', cache: 'default', threads: 'flag' });
  });

  test('defaults read the environment given, never process.env behind its back', () => {
    expect(resolveSettings(SPECS, { env: { HOME: '/h' } }).config.cache).toBe('/h/.cache');
    expect(resolveSettings(SPECS).config.home).toBe('/root');
  });

  test('takes a config file already read (a program that reads its own)', () => {
    const { config, sources } = resolveSettings(SPECS, {
      file: { path: '/c/demo.json', values: { threads: 5 } },
    });
    expect([config.threads, sources.threads]).toEqual([5, 'file']);
    expect(() => resolveSettings(SPECS, { file: { path: '/c/demo.json', values: { threads: 99 } } })).toThrow(
      'config file /c/demo.json key threads: expected an integer in [1, 64], got 99',
    );
  });

  test('an error names the flag as the program spells it, else the setting', () => {
    expect(() => resolveSettings(SPECS, { flags: { threads: 'x' } })).toThrow(
      new ConfigError('option --threads: expected an integer in [1, 64], got "x"'),
    );
    expect(() => resolveSettings(SPECS, { flags: { home: '' } })).toThrow(
      'option home: expected a non-empty string',
    );
    expect(() => resolveSettings(SPECS, { env: { DEMO_THREADS: '0' } })).toThrow('environment DEMO_THREADS:');
  });

  test('a config file that is missing, not an object or has unknown keys is refused by name', () => {
    expect(() => resolveSettings(SPECS, { configFile: '/nonexistent/demo.json' })).toThrow(
      'config file /nonexistent/demo.json: cannot be read (ENOENT)',
    );
    const array = file('[1]');
    expect(() => resolveSettings(SPECS, { configFile: array })).toThrow(
      `config file ${array}: expected a JSON object of settings`,
    );
    const unknown = file('{"thread": 1}');
    expect(() => resolveSettings(SPECS, { configFile: unknown })).toThrow(
      `config file ${unknown}: unknown settings thread (known: home, cache, threads)`,
    );
  });
});

test('settingsUsage: flag, meaning, variable and the default as it is meant to be read', () => {
  const rows = settingsUsage(SPECS, ['home'], { HOME: '/h' });
  expect(rows[0]).toBe(`  --home                         home\n  ${''.padEnd(30)} env DEMO_HOME`);
  expect(rows[1]).toContain('env DEMO_CACHE, default /h/.cache');
  expect(rows[2]).toContain('env DEMO_THREADS, default one per core');
});

test('serviceBaseSettings: where a service listens, its limit and its log level, under its prefix', () => {
  const { config, sources } = resolveSettings(
    serviceBaseSettings('HUB', { port: 8430, perSecond: 5, burst: 9 }),
    {
      env: { HUB_PORT: '9000' },
    },
  );
  expect(config).toEqual({
    host: '127.0.0.1',
    port: 9000,
    rateLimitPerSecond: 5,
    rateLimitBurst: 9,
    logLevel: 'info',
  });
  expect(sources.port).toBe('env');
});
