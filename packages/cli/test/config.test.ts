import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { resolveSettings } from '../src/settings.js';
import { withSettingsTable } from '../src/settings-table.js';
import { runCli, tempHome } from './helpers.js';

describe('resolveSettings', () => {
  test('takes each value from the first of flag, environment, config file, default', () => {
    const { settings, sources } = resolveSettings({
      flags: { threads: '3' },
      env: { MINER_THREADS: '5', MINER_INTENSITY: '50%', HOME: '/home/u' },
      file: { path: '/c/miner.json', values: { threads: 7, intensity: 0.25, urls: ['http://a:8420'] } },
    });
    expect([settings.threads, sources.threads]).toEqual([3, 'flag']);
    expect([settings.intensity, sources.intensity]).toEqual([0.5, 'env']);
    expect([settings.urls, sources.urls]).toEqual([['http://a:8420'], 'file']);
    expect([settings.key, sources.key]).toEqual(['/home/u/.config/tensormine/miner.key', 'default']);
    expect(settings.journal).toBe('/home/u/.local/share/tensormine/miner/journal.jsonl');
  });

  test('reads a failover list from repeated flags or a comma-separated variable', () => {
    expect(resolveSettings({ flags: { urls: ['http://a:1/', 'https://b'] } }).settings.urls).toEqual([
      'http://a:1',
      'https://b',
    ]);
    expect(resolveSettings({ env: { MINER_URL: 'http://a:1, http://b:2' } }).settings.urls).toEqual([
      'http://a:1',
      'http://b:2',
    ]);
  });

  test('says what was expected and what arrived, and where', () => {
    expect(() => resolveSettings({ env: { MINER_THREADS: 'four' } })).toThrow(
      'environment MINER_THREADS: expected an integer in [1, 1024], got "four"',
    );
    expect(() => resolveSettings({ flags: { urls: ['ftp://a'] } })).toThrow(
      'option --url: expected http:// or https:// URLs, got "ftp://a"',
    );
    expect(() => resolveSettings({ flags: { urls: ['http://a', 'http://a/'] } })).toThrow(
      'option --url: expected each URL once, got "http://a/"',
    );
    expect(() => resolveSettings({ file: { path: '/c/miner.json', values: { intensity: 2 } } })).toThrow(
      'config file /c/miner.json key intensity: expected a number in (0, 1] or a percentage, got 2',
    );
  });

  test('puts the --local journal apart from the remote one', () => {
    const { settings } = resolveSettings({ flags: { local: true, dataDir: '/d' } });
    expect(settings.journal).toBe('/d/journal-local.jsonl');
  });
});

test('docs/cli.md has the settings table of SETTINGS (npm run generate rewrites it)', async () => {
  const page = await readFile(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
  expect(withSettingsTable(page)).toBe(page);
});

describe('miner config', () => {
  test('prints every value with its source: flag, env, file, default', async () => {
    const { env } = await tempHome();
    const file = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.json');
    await mkdir(join(env.XDG_CONFIG_HOME!, 'tensormine'), { recursive: true });
    await writeFile(file, JSON.stringify({ urls: ['http://a:8420', 'http://b:8420'], threads: 7 }));
    const { code, stdout } = await runCli(['config', '--intensity', '0.5'], {
      ...env,
      MINER_THREADS: '3',
      MINER_API_TOKEN: 'a-secret-token-of-32-characters!',
    });
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(`config file ${file}`);
    const row = (name: string) => lines.find((l) => l.startsWith(`${name} `))?.split(/\s{2,}/);
    expect(row('urls')).toEqual(['urls', 'http://a:8420, http://b:8420', 'file']);
    expect(row('threads')).toEqual(['threads', '3', 'env']);
    expect(row('intensity')).toEqual(['intensity', '0.5', 'flag']);
    expect(row('protocol')).toEqual(['protocol', 'auto', 'default']);
    expect(row('apiToken')).toEqual(['apiToken', '(set)', 'env']);
    expect(stdout).not.toContain('a-secret-token');
  });

  test('--json lists name, value, source, flag and variable of every setting', async () => {
    const { env } = await tempHome();
    const { code, stdout } = await runCli(['config', '--json', '--url', 'http://x:1', '--no-cpu'], env);
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as {
      configFile: { path: string; exists: boolean };
      settings: { name: string; value: unknown; source: string; flag: string; env: string }[];
    };
    expect(out.configFile).toEqual({
      path: join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.json'),
      exists: false,
    });
    expect(out.settings.find((s) => s.name === 'urls')).toEqual({
      name: 'urls',
      value: ['http://x:1'],
      source: 'flag',
      flag: '--url',
      env: 'MINER_URL',
    });
    expect(out.settings.find((s) => s.name === 'cpu')).toMatchObject({
      value: false,
      source: 'flag',
      flag: '--no-cpu',
    });
    expect(out.settings.find((s) => s.name === 'apiToken')).toMatchObject({ value: null, source: 'default' });
  });

  test('refuses a config file with an unknown key (exit 2)', async () => {
    const { env, dir } = await tempHome();
    const file = join(dir, 'other.json');
    await writeFile(file, JSON.stringify({ url: 'http://a:8420' }));
    const { code, stderr } = await runCli(['config', '--config', file], env);
    expect(code).toBe(2);
    expect(stderr).toContain(`miner: config file ${file}: unknown setting url (known: urls, protocol, key,`);
  });

  test('refuses a config file named explicitly that does not exist (exit 2)', async () => {
    const { env, dir } = await tempHome();
    const { code, stderr } = await runCli(['config'], { ...env, MINER_CONFIG: join(dir, 'typo.json') });
    expect(code).toBe(2);
    expect(stderr).toContain(`miner: config file ${join(dir, 'typo.json')} does not exist`);
  });

  test('a malformed variable is a usage error naming it (exit 2)', async () => {
    const { env } = await tempHome();
    const { code, stderr } = await runCli(['config'], { ...env, MINER_PROTOCOL: '5' });
    expect(code).toBe(2);
    expect(stderr).toBe('miner: environment MINER_PROTOCOL: expected one of auto, 4.0, 4.1, got "5"\n');
  });

  test('mine --save remembers the failover list in the config file (mode 0600)', async () => {
    const { env } = await tempHome();
    const { code, stderr } = await runCli(
      ['mine', '--url', 'http://127.0.0.1:1', '--url', 'http://127.0.0.1:2', '--threads', '1', '--save'],
      env,
    );
    const file = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.json');
    expect(stderr).toContain(`saved --url, --threads to ${file}`);
    // No key yet: the run itself stops there, the settings are saved.
    expect(code).toBe(4);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      urls: ['http://127.0.0.1:1', 'http://127.0.0.1:2'],
      threads: 1,
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const config = await runCli(['config'], env);
    expect(config.stdout).toMatch(/^urls\s+http:\/\/127\.0\.0\.1:1, http:\/\/127\.0\.0\.1:2\s+file$/m);
  });
});
