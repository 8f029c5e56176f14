import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { InvalidInputError, KeyFileError, Signer } from '@tensormine/client';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { type CliIo, writeLine } from '../io.js';
import { loadSigner, saveSigner } from '../key-file.js';
import { addSettings, type CommandContext, loadSettings, writeJson } from '../program.js';

/**
 * `miner keys generate | show | import`: the miner's ed25519 key file (mode 0600). No command
 * prints the secret; `import` reads it from a file or stdin, never from the command line.
 */
export function keysCommand(program: Command, ctx: CommandContext): void {
  const keys = program.command('keys').description('the key file: generate, show (the public key), import');
  const { io } = ctx;

  const generate = keys
    .command('generate')
    .description('generate a new key and write the key file (mode 0600)')
    .option('--force', 'replace an existing key file (its key is lost unless you have a copy)')
    .option('--json', 'machine-readable output');
  addSettings(generate, ['key']);
  generate.action(async (options: { force?: boolean; json?: boolean }, cmd: Command) => {
    const { settings } = loadSettings(cmd, io);
    const signer = Signer.generate();
    await saveSigner(signer, settings.key, options.force === true);
    report(io, options.json, 'wrote a new key to', settings.key, signer);
  });

  const show = keys
    .command('show')
    .description('print the public key of the key file')
    .option('--json', 'machine-readable output: type, public key, path');
  addSettings(show, ['key']);
  show.action(async (options: { json?: boolean }, cmd: Command) => {
    const { settings } = loadSettings(cmd, io);
    const signer = await loadSigner(settings.key);
    if (options.json) writeJson(io, { type: 'ed25519', public_key: signer.publicKeyHex, path: settings.key });
    else writeLine(io.stdout, signer.publicKeyHex);
  });

  const importer = keys
    .command('import')
    .description('write the key file from a key file or a secret key (64 hex digits) read from FILE or stdin')
    .argument('[file]', 'a key file, or a file holding the secret key in hex; - or nothing: read stdin')
    .option('--force', 'replace an existing key file')
    .option('--json', 'machine-readable output');
  addSettings(importer, ['key']);
  importer.action(
    async (file: string | undefined, options: { force?: boolean; json?: boolean }, cmd: Command) => {
      const { settings } = loadSettings(cmd, io);
      if (
        file !== undefined &&
        file !== '-' &&
        /^(0x)?[0-9a-fA-F]{64}$/.test(file.trim()) &&
        !existsSync(file)
      ) {
        throw new CliError(
          'usage',
          'refusing to take a secret key from the command line: it would stay in the shell history and the process list',
          ['put it in a file (miner keys import FILE) or pipe it: miner keys import < FILE'],
        );
      }
      const text =
        file === undefined || file === '-' ? await readSecretFromStdin(io) : await readSecretFile(file);
      let signer: Signer;
      try {
        // A key file (the miner's, or one the web terminal's built-in wallet exported), or a secret.
        signer = text.trim().startsWith('{')
          ? Signer.fromKeyFile(text, file === undefined || file === '-' ? 'input' : file)
          : Signer.fromSecretKey(text.trim().replace(/^0x/i, ''));
      } catch (error) {
        if (error instanceof KeyFileError) throw new CliError('usage', error.shortMessage);
        // The client's message describes the input's shape (its length), never its contents.
        const detail = error instanceof InvalidInputError ? error.problems[0]?.message : undefined;
        throw new CliError(
          'usage',
          `the ${file === undefined || file === '-' ? 'input' : `file ${file}`} does not hold a secret key: ${detail ?? 'expected 64 hex digits'}`,
        );
      }
      await saveSigner(signer, settings.key, options.force === true);
      report(io, options.json, 'imported the key into', settings.key, signer);
    },
  );
}

function report(io: CliIo, json: boolean | undefined, what: string, path: string, signer: Signer): void {
  if (json) {
    writeJson(io, { type: 'ed25519', public_key: signer.publicKeyHex, path });
    return;
  }
  writeLine(io.stdout, `${what} ${path} (mode 0600)`);
  writeLine(io.stdout, `public key ${signer.publicKeyHex}`);
}

async function readSecretFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError('usage', `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** Reads stdin: to the end, or to the first line when it is a terminal (with a prompt on stderr). */
async function readSecretFromStdin(io: CliIo): Promise<string> {
  const tty = io.stdin.isTTY === true;
  if (tty) writeLine(io.stderr, 'secret key (64 hex digits), then Enter:');
  return new Promise((resolve, reject) => {
    let text = '';
    const done = () => {
      io.stdin.off('data', onData);
      io.stdin.off('end', done);
      io.stdin.off('error', reject);
      if (tty) io.stdin.pause();
      resolve(text);
    };
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (tty && text.includes('\n')) done();
    };
    io.stdin.on('data', onData);
    io.stdin.on('end', done);
    io.stdin.on('error', reject);
    io.stdin.resume();
  });
}
