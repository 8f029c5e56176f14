import { KeyFileError, Signer } from '@tensormine/client';
import { CliError } from './errors.js';
import { shellQuote } from './paths.js';

/**
 * The miner's key file, through the client's Signer (`{"type":"ed25519","public_key",
 * "secret_key"}`, mode 0600, written atomically). The secret never leaves the Signer except
 * into the file: no command prints it, no error message contains it.
 */

/**
 * Loads the key file.
 * @throws CliError `key` (no file, permissions, not a key file), with the command that fixes it.
 */
export async function loadSigner(path: string): Promise<Signer> {
  try {
    return await Signer.load(path);
  } catch (error) {
    throw keyError(error, path);
  }
}

/** Loads the key file, or generates and saves a new key when there is none (`mine --local`). */
export async function loadOrCreateSigner(path: string): Promise<{ signer: Signer; created: boolean }> {
  try {
    return { signer: await Signer.load(path), created: false };
  } catch (error) {
    if (!(error instanceof KeyFileError && error.code === 'key_file_not_found')) throw keyError(error, path);
  }
  const signer = Signer.generate();
  try {
    await signer.save(path);
  } catch (error) {
    // Another process created it in between: use that one.
    if (error instanceof KeyFileError && error.code === 'key_file_exists') return loadOrCreateSigner(path);
    throw keyError(error, path);
  }
  return { signer, created: true };
}

/** Saves a key file. @throws CliError `key` when it exists and `force` is not set. */
export async function saveSigner(signer: Signer, path: string, force: boolean): Promise<void> {
  try {
    await signer.save(path, { overwrite: force });
  } catch (error) {
    throw keyError(error, path);
  }
}

function keyError(error: unknown, path: string): CliError {
  if (!(error instanceof KeyFileError)) {
    return new CliError('key', `key file ${path}: ${(error as Error).message}`, [], { cause: error });
  }
  const hint: Record<string, string[]> = {
    key_file_not_found: [
      `create one with: miner keys generate --key ${shellQuote(path)}`,
      'or import an existing secret with: miner keys import FILE',
    ],
    key_file_permissions: [`restrict it with: chmod 600 ${shellQuote(path)}`],
    key_file_exists: ['pass --force to replace it (the key in it is lost unless you have a copy)'],
  };
  // The client's messages name the file and the problem, never the key; drop its API advice.
  const message = error.shortMessage.replace(/: (create one with|run|pass) .*$/, '');
  return new CliError('key', message, hint[error.code] ?? [], { cause: error });
}
