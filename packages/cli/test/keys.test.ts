import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Signer } from '@tensormine/client';
import { describe, expect, test } from 'vitest';
import { runCli, tempHome } from './helpers.js';

async function secretOf(path: string): Promise<string> {
  return (JSON.parse(await readFile(path, 'utf8')) as { secret_key: string }).secret_key;
}

describe('miner keys', () => {
  test('generate writes the key file with mode 0600 and prints the public key, never the secret', async () => {
    const { env } = await tempHome();
    const { code, stdout, stderr } = await runCli(['keys', 'generate'], env);
    const path = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key');
    expect(code).toBe(0);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const signer = await Signer.load(path);
    expect(stdout).toBe(`wrote a new key to ${path} (mode 0600)\npublic key ${signer.publicKeyHex}\n`);
    const secret = await secretOf(path);
    expect(stdout + stderr).not.toContain(secret);
  });

  test('generate keeps an existing key unless --force (exit 4)', async () => {
    const { env } = await tempHome();
    await runCli(['keys', 'generate'], env);
    const path = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key');
    const before = await secretOf(path);
    const again = await runCli(['keys', 'generate'], env);
    expect(again.code).toBe(4);
    expect(again.stderr).toBe(
      `miner: key file ${path} already exists\n  pass --force to replace it (the key in it is lost unless you have a copy)\n`,
    );
    expect(await secretOf(path)).toBe(before);
    const forced = await runCli(['keys', 'generate', '--force'], env);
    expect(forced.code).toBe(0);
    expect(await secretOf(path)).not.toBe(before);
  });

  test('show prints the public key (and --json its file)', async () => {
    const { env, dir } = await tempHome();
    const path = join(dir, 'my.key');
    const signer = Signer.generate();
    await signer.save(path);
    expect(await runCli(['keys', 'show', '--key', path], env)).toEqual({
      code: 0,
      stdout: `${signer.publicKeyHex}\n`,
      stderr: '',
    });
    const json = await runCli(['keys', 'show', '--json'], { ...env, MINER_KEY: path });
    expect(JSON.parse(json.stdout)).toEqual({ type: 'ed25519', public_key: signer.publicKeyHex, path });
  });

  test('show refuses a key file that others can read, with the chmod to run (exit 4)', async () => {
    const { env, dir } = await tempHome();
    const path = join(dir, 'loose.key');
    await Signer.generate().save(path);
    await chmod(path, 0o644);
    const { code, stderr } = await runCli(['keys', 'show', '--key', path], env);
    expect(code).toBe(4);
    expect(stderr).toBe(
      `miner: key file ${path} is accessible by group or others (mode 0644)\n  restrict it with: chmod 600 ${path}\n`,
    );
  });

  test('show without a key file says how to make one (exit 4)', async () => {
    const { env } = await tempHome();
    const path = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key');
    const { code, stderr } = await runCli(['keys', 'show'], env);
    expect(code).toBe(4);
    expect(stderr).toBe(
      `miner: key file ${path} does not exist\n  create one with: miner keys generate --key ${path}\n  or import an existing secret with: miner keys import FILE\n`,
    );
  });

  test('import reads the secret from stdin and writes a 0600 key file without printing it', async () => {
    const { env } = await tempHome();
    const signer = Signer.generate();
    const source = join(env.HOME!, 'exported.key');
    await signer.save(source);
    const secret = await secretOf(source);
    const { code, stdout, stderr } = await runCli(['keys', 'import'], env, { stdin: `${secret}\n` });
    const path = join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key');
    expect(code).toBe(0);
    expect(stdout).toBe(`imported the key into ${path} (mode 0600)\npublic key ${signer.publicKeyHex}\n`);
    expect(stdout + stderr).not.toContain(secret);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await Signer.load(path)).publicKeyHex).toBe(signer.publicKeyHex);
  });

  test('import reads the secret from a file', async () => {
    const { env, dir } = await tempHome();
    const signer = Signer.generate();
    await signer.save(join(dir, 'exported.key'));
    const secretFile = join(dir, 'secret.txt');
    await writeFile(secretFile, `${await secretOf(join(dir, 'exported.key'))}\n`, { mode: 0o600 });
    const { code, stdout } = await runCli(
      ['keys', 'import', secretFile, '--key', join(dir, 'imported.key')],
      env,
    );
    expect(code).toBe(0);
    expect(stdout).toContain(`public key ${signer.publicKeyHex}`);
  });

  test('import reads a key file: the one the web terminal exports, whatever its mode', async () => {
    const { env, dir } = await tempHome();
    const signer = Signer.generate();
    await signer.save(join(dir, 'wallet.key'));
    // A download lands with the default mode: import copies the key into a 0600 file.
    await chmod(join(dir, 'wallet.key'), 0o644);
    const { code, stdout } = await runCli(
      ['keys', 'import', join(dir, 'wallet.key'), '--key', join(dir, 'k')],
      env,
    );
    expect(code).toBe(0);
    expect(stdout).toContain(`public key ${signer.publicKeyHex}`);
    expect((await stat(join(dir, 'k'))).mode & 0o777).toBe(0o600);
    // A key file whose public key is not its secret's is refused, naming the field only.
    const text = await readFile(join(dir, 'wallet.key'), 'utf8');
    const bad = text.replace(signer.publicKeyHex, 'ab'.repeat(32));
    const refused = await runCli(['keys', 'import', '--key', join(dir, 'k2')], env, { stdin: bad });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'miner: key file input is not an ed25519 key file: "public_key": expected ',
    );
    expect(refused.stderr).not.toContain(await secretOf(join(dir, 'wallet.key')));
  });

  test('import refuses a secret given on the command line, without echoing it (exit 2)', async () => {
    const { env, dir } = await tempHome();
    await Signer.generate().save(join(dir, 'k'));
    const secret = await secretOf(join(dir, 'k'));
    const { code, stdout, stderr } = await runCli(['keys', 'import', secret], env);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'miner: refusing to take a secret key from the command line: it would stay in the shell history and the process list\n  put it in a file (miner keys import FILE) or pipe it: miner keys import < FILE\n',
    );
    expect(stdout + stderr).not.toContain(secret);
  });

  test('import of something that is not a secret describes its shape, not its contents (exit 2)', async () => {
    const { env } = await tempHome();
    const { code, stderr } = await runCli(['keys', 'import'], env, {
      stdin: 'not-a-key-but-private-words\n',
    });
    expect(code).toBe(2);
    expect(stderr).toBe(
      'miner: the input does not hold a secret key: secretKey: expected 64 hex digits (32 bytes), got a string of 27 characters\n',
    );
  });
});
